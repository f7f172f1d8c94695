"""Message buffers: explicit allocation kind, IMB contents, expected contents.

The allocation kind changes large-message bandwidth (transparent huge pages
can double it), so it is always chosen explicitly and recorded:

- numpy:  np.empty; numpy itself advises huge pages for arrays >= 4 MiB
- mmap:   anonymous mmap, page aligned (2 MiB aligned from 2 MiB on)
- mpi:    MPI.Alloc_mem (what IMB uses for one-sided and I/O)

`hugepages` on gives every buffer, whatever its size, a 2 MiB-aligned start
and whole 2 MiB extents advised MADV_HUGEPAGE (up to 4 MiB more address space
per buffer, up to 2 MiB more memory), in a fresh private mapping for the numpy
and mmap kinds (reused heap memory keeps its small pages); off advises MADV_NOHUGEPAGE on the
buffer's pages; default leaves the allocator's own choice.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
from dataclasses import dataclass
from typing import Any

import numpy as np

from commbench.policy import TOL

PAGE = mmap.PAGESIZE
HUGE = 2 * 2**20

_libc = None


def _madvise(arr: np.ndarray, advice: int) -> bool:
    """Advise the kernel on the whole pages inside arr; False where not possible."""
    global _libc
    if arr.nbytes < HUGE:
        return False
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    addr = arr.ctypes.data
    start = (addr + PAGE - 1) // PAGE * PAGE
    end = (addr + arr.nbytes) // PAGE * PAGE
    if end <= start:
        return False
    return _libc.madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), advice) == 0


class Allocation:
    """One buffer of nbytes as a uint8 numpy array; keeps its owner alive."""

    def __init__(self, nbytes: int, kind: str, hugepages: str):
        self.nbytes = nbytes
        self.kind = kind
        self._owner: Any = None
        size = max(nbytes, 1)
        # --hugepages on: the buffer starts on a 2 MiB boundary and owns whole 2 MiB
        # extents, the only memory the kernel backs with huge pages; a 1 MiB buffer
        # otherwise never gets one, and moves data at half the speed (docs/buffers.md).
        on = hugepages == "on"
        span = -(-size // HUGE) * HUGE if on else size
        # Unused room to start on a 2 MiB boundary: always with "on"; for mmap from
        # 2 MiB on (numpy's and MPI's allocators keep their own placement by default).
        pad = HUGE if on or (kind == "mmap" and size >= HUGE) else 0
        if kind == "numpy" and not on:
            whole = np.empty(span + pad, dtype=np.uint8)
        elif kind in ("mmap", "numpy"):
            # numpy with "on" too: malloc may hand back heap memory already backed by
            # small pages, which advice does not convert; a fresh mapping gets huge ones.
            # Private, not mmap's default shared mapping: THP for shared anonymous
            # memory (shmem) is usually off, so madvise would change nothing.
            self._owner = mmap.mmap(
                -1,
                (span + pad + PAGE - 1) // PAGE * PAGE,
                flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
            )
            whole = np.frombuffer(self._owner, dtype=np.uint8)
        elif kind == "mpi":
            from mpi4py import MPI

            self._owner = MPI.Alloc_mem(span + pad)
            whole = np.frombuffer(self._owner, dtype=np.uint8, count=span + pad)
        else:  # config validates the kind; this is a programming error
            raise ValueError(f"unknown allocation kind {kind!r}")
        skip = (-whole.ctypes.data) % HUGE if pad else 0
        region = whole[skip : skip + span]
        if hugepages in ("on", "off"):
            _madvise(region, mmap.MADV_HUGEPAGE if on else mmap.MADV_NOHUGEPAGE)
        self.array = region[:nbytes]

    def free(self) -> None:
        owner, self._owner = self._owner, None
        self.array = None  # type: ignore[assignment]
        if self.kind == "mpi" and owner is not None:
            from mpi4py import MPI

            MPI.Free_mem(owner)
        elif isinstance(owner, mmap.mmap):  # the mmap kind, and numpy's with hugepages on
            try:
                owner.close()
            except BufferError:  # a view still exists; the GC will unmap it
                pass


def thp_mode() -> str:
    """The system's transparent huge page setting, e.g. 'madvise'."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            text = f.read()
        return text[text.index("[") + 1 : text.index("]")]
    except (OSError, ValueError):
        return "unknown"


# ---- contents (spec §6.2) -------------------------------------------------


def pattern(world_rank: int, nbytes: int, dtype: str = "float32") -> np.ndarray:
    """The bytes of BUF_VALUE(rank, i) for a buffer of nbytes."""
    count = (nbytes + 3) // 4
    i = np.arange(count, dtype=np.float64 if dtype == "float32" else np.int64)
    if dtype == "float32":
        vals = (0.1 * (world_rank + 1) + i).astype(np.float32)
    else:  # IO assignment type int32
        vals = (10_000_000 * (1 + world_rank) + (i % 10_000_000)).astype(np.int32)
    return vals.view(np.uint8)[:nbytes]


FILL_CHUNK = 2**20  # elements per step: no multi-GiB temporaries for a multi-GiB buffer


def fill(
    buf: np.ndarray, world_rank: int, slot_len: int, slots: int, stride: int, dtype: str
) -> None:
    """Slot 0 gets the pattern; every other slot a copy of it (spec §6.3).

    The pattern is written in place in chunks through preallocated scratch
    arrays: element i's value depends on i alone, so the bytes equal pattern()
    exactly, while a 2 GiB buffer fills in seconds without 6 GiB of temporaries.
    """
    if buf.nbytes == 0:
        return
    first = min(slot_len if slots > 1 else buf.nbytes, buf.nbytes)
    whole = first // 4
    f32 = dtype == "float32"
    ar = np.arange(min(FILL_CHUNK, max(whole, 1)), dtype=np.float64 if f32 else np.int64)
    tmp = np.empty_like(ar)
    out = buf[: whole * 4].view(np.float32 if f32 else np.int32)
    for a in range(0, whole, FILL_CHUNK):
        n = min(FILL_CHUNK, whole - a)
        t = tmp[:n]
        np.add(ar[:n], a, out=t)
        if f32:
            np.add(t, 0.1 * (world_rank + 1), out=t)
        else:
            np.remainder(t, 10_000_000, out=t)
            np.add(t, 10_000_000 * (1 + world_rank), out=t)
        out[a : a + n] = t  # the cast to float32/int32, as pattern() does
    if first > whole * 4:  # a partial last element
        buf[whole * 4 : first] = pattern(world_rank, first, dtype)[whole * 4 :]
    for k in range(1, slots):
        off = k * stride
        end = min(off + first, buf.nbytes)
        buf[off:end] = buf[: end - off]


def reduce_pattern(world_ranks: list[int], nbytes: int, dtype: str = "float32") -> np.ndarray:
    """Expected bytes of a SUM of the given ranks' patterns read as `dtype` (integers wrap,
    as MPI's do)."""
    size = np.dtype(dtype).itemsize
    count = nbytes // size
    acc = np.zeros(count, dtype=dtype)
    for r in world_ranks:
        acc += pattern(r, count * size).view(dtype)
    return acc.view(np.uint8)


def deviation(got: np.ndarray, expected: np.ndarray, dtype: str = "float32") -> float:
    """Largest relative deviation (spec §15); 1.0 when any exceeds TOL."""
    if got.nbytes != expected.nbytes:
        return 1.0
    if np.array_equal(got, expected):
        return 0.0
    width = 8 if dtype == "float64" else 4
    whole = got.nbytes // width * width
    if whole:
        view = {"float32": np.float32, "float64": np.float64}.get(dtype, np.int32)
        g = got[:whole].view(view).astype(np.float64)
        e = expected[:whole].view(view).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            dev = np.where(e != 0, np.abs(e - g) / np.abs(e), np.abs(e - g))
        dev = np.nan_to_num(dev, nan=1.0, posinf=1.0)
        worst = float(dev.max())
    else:
        worst = 0.0
    if not np.array_equal(got[whole:], expected[whole:]):
        worst = 1.0
    return 1.0 if worst > TOL else worst


@dataclass
class Buffers:
    """Send and receive allocations of one measurement, with their slot layout."""

    send: Allocation | None
    recv: Allocation | None
    slots: int
    send_stride: int
    recv_stride: int

    def free(self) -> None:
        for a in (self.send, self.recv):
            if a is not None:
                a.free()
