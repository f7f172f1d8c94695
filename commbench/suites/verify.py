"""Check-mode helpers shared by the suites: what a receive buffer must hold (spec §15)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from commbench import buffers


def last_rep(
    n: int, slots: int, k: int, pred: Callable[[int], bool] = lambda i: True
) -> int | None:
    """The last repetition i < n that used slot k and satisfies pred, else None."""
    i = n - 1 - ((n - 1 - k) % slots) if n > k else -1
    while i >= 0:
        if pred(i):
            return i
        i -= slots
    return None


def worst(devs: Iterable[float | None]) -> float | None:
    vals = [d for d in devs if d is not None]
    return max(vals) if vals else None


def check_slots(
    ctx,
    n: int,
    expect: Callable[[int], list[tuple[int, np.ndarray]] | None],
    buf: np.ndarray | None = None,
    stride: int | None = None,
    dtype: str | None = None,
) -> float | None:
    """Deviation over every used slot k; expect(k) -> [(offset in slot, expected bytes)] or None.
    dtype: how to compare (a reduction's type); the benchmark's assignment type by default."""
    dtype = dtype or ctx.bench.dtype
    buf = ctx.rbuf if buf is None else buf
    stride = ctx.bufs.recv_stride if stride is None else stride
    devs = []
    for k in range(min(n, ctx.slots)):
        for offset, exp in expect(k) or ():
            a = k * stride + offset
            devs.append(buffers.deviation(buf[a : a + exp.nbytes], exp, dtype))
    return worst(devs)
