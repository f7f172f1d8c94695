"""What IMB-EXT and IMB-RMA share: windows per size, slot displacements, check helpers.

A window is created per (benchmark, NP, mode, X) in the descriptor's setup and
freed in its teardown (spec §6.5): over the receive buffer for put-type
benchmarks (Put, Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap),
over the send buffer for get-type ones, as large as that buffer's allocation,
displacement unit = element size. Repetition i uses slot i mod K in the origin
buffer and at the target (spec §6.3), so the target displacements are prebuilt
here, outside the timed loops.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import cycle, islice, repeat
from typing import Any

import numpy as np
from mpi4py import MPI

from commbench import buffers
from commbench.suites.base import GET, PUT  # noqa: F401 - the window sides, declared there
from commbench.suites.verify import worst


def user_set_info(ctx) -> MPI.Info:
    """The info object of every window (spec §6.5 hook); override to pass hints."""
    return MPI.INFO_NULL


def create_window(ctx, over: str, unit: int = 1, fence: bool = False) -> MPI.Win:
    """MPI_Win_create over ctx's receive (PUT) or send (GET) buffer on MY_COMM.

    Sets ctx.win, ctx.disp_unit and ctx.disps (the target displacement of every
    slot). A displacement unit of 4 (float/int) falls back to 1
    when an -off_cache stride is not a multiple of 4, so every slot stays
    addressable.
    """
    buf = ctx.rbuf if over == PUT else ctx.sbuf
    stride = ctx.bufs.recv_stride if over == PUT else ctx.bufs.send_stride
    if unit > 1 and stride % unit:
        unit = 1
    win = MPI.Win.Create(buf, unit, user_set_info(ctx), ctx.comm)
    if fence:
        win.Fence(0)  # IMB-EXT opens the first epoch (spec §6.5)
    ctx.win, ctx.disp_unit = win, unit
    ctx.disps = [k * stride // unit for k in range(ctx.slots)]
    return win


def free_window(ctx) -> None:
    win, ctx.win = ctx.win, None
    if win is not None:
        win.Free()


def setup_window(over: str, unit: int = 1, fence: bool = False) -> Callable[[Any], None]:
    def setup(ctx) -> None:
        create_window(ctx, over, unit, fence)

    return setup


def reps(n: int, per_slot: list, first: int = 0) -> Iterable:
    """n items cycling through the per-slot list from call `first`'s slot (Context.first;
    a constant when there is one slot)."""
    if len(per_slot) == 1:
        return repeat(per_slot[0], n)
    skip = first % len(per_slot)
    return islice(cycle(per_slot), skip, skip + n)


def count_uses(ctx, n: int) -> None:
    """Check mode: how often each slot was the target of one repetition so far.

    Accumulating operations add up over the preliminary runs of the dynamic
    policy too, so the expected target contents follow from these counts.
    """
    counts = ctx.uses
    if counts is None:
        counts = ctx.uses = np.zeros(ctx.slots, dtype=np.int64)
    full, rest = divmod(n, ctx.slots)
    counts += full
    counts[(ctx.first + np.arange(rest)) % ctx.slots] += 1  # from call `first`'s slot


def restart_uses(ctx) -> None:
    """After a verification of accumulated contents: count the uses from 0 again, as the
    next engine of --engine both starts from a cleared receive buffer (the harness
    clears it; a run with one engine verifies once per size)."""
    ctx.uses[:] = 0


def sync_local(ctx) -> None:
    """Make remote updates of my window visible to my loads (passive target, check mode)."""
    win = ctx.win
    win.Lock(ctx.rank, MPI.LOCK_SHARED)
    win.Sync()
    win.Unlock(ctx.rank)


def scaled(world_ranks: list[int], nbytes: int, factor: int) -> np.ndarray:
    """Bytes of factor × Σ BUF_VALUE(r, ·) as float32 (what repeated MPI_SUM leaves)."""
    count = nbytes // 4
    acc = np.zeros(count, dtype=np.float64)
    for r in world_ranks:
        acc += buffers.pattern(r, count * 4).view(np.float32)
    return (acc * factor).astype(np.float32).view(np.uint8)


def one_of(got: np.ndarray, candidates: list[np.ndarray]) -> float:
    """Deviation from the closest candidate: concurrent transfers into one area
    leave the data of one of them (which one is not defined)."""
    if not candidates:
        return 0.0
    return min(buffers.deviation(got, c) for c in candidates)


def exact(got: np.ndarray, expected: np.ndarray) -> float:
    """Integer data (Compare_and_swap): equal or wrong."""
    return 0.0 if got.nbytes == expected.nbytes and np.array_equal(got, expected) else 1.0


def slot_area(ctx, buf: np.ndarray, stride: int, k: int, offset: int, nbytes: int) -> np.ndarray:
    a = k * stride + offset
    return buf[a : a + nbytes]


def each_used_slot(ctx, n: int, dev: Callable[[int], float | None]) -> float | None:
    """Worst deviation over the slots the last run used."""
    return worst(dev(k) for k in range(min(n, ctx.slots)))


def each_source(
    ctx, mine: bool, others: list[int], pattern: Callable[[int], np.ndarray], get: bool
) -> float | None:
    """Check mode: one untimed transfer from each other rank into my slot 0, verified.

    Where several sources write one area only the last one's data survives the
    timed loop. Gets: a receiver (mine) fetches from every other rank by itself
    (passive target). Puts: the ranks take turns, each putting its slot 0 to
    every other between barriers; every rank must call this (collective)."""
    win, me, x = ctx.win, ctx.rank, ctx.x
    area = ctx.rbuf[:x]
    disp = ctx.disps[0]
    devs = []
    if get:
        if mine:
            win.Lock_all(0)
            for s in others:
                area[:] = 0
                win.Get([area, MPI.BYTE], s, disp)
                win.Flush(s)
                devs.append(buffers.deviation(area, pattern(s)))
            win.Unlock_all()
        return worst(devs)
    for s in range(ctx.size):
        area[:] = 0
        sync_local(ctx)
        ctx.comm.Barrier()
        if s == me:
            win.Lock_all(0)
            for t in others:
                win.Put([ctx.sbuf[:x], MPI.BYTE], t, disp)
            win.Flush_all()
            win.Unlock_all()
        ctx.comm.Barrier()
        if mine and s != me:
            sync_local(ctx)
            devs.append(buffers.deviation(area, pattern(s)))
    return worst(devs)
