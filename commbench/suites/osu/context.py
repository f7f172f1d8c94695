"""What a loop of the osu family sees: OsuCtx, one benchmark's buffers on this rank.

The buffers (send, receive, and a one-byte ack/aux buffer) are allocated once per
benchmark and type, of the largest size, with commbench.buffers (the run's
--alloc kind; the family's default is mmap: page-aligned, no huge-page advice,
as OSU's posix_memalign'ed buffers under THP "madvise"). `at(size)` sets the
element count of a size; `smsg`/`rmsg` are the mpi4py message specs.

Validation (-c): `fill(size)` writes this rank's pattern into the send buffer
(COMMBENCH_FAULT_CORRUPT's rank spoils one byte of it) and clears the receive
buffer; `mismatches(src, size)` counts the bytes of the receive buffer that differ
from rank src's pattern.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from mpi4py import MPI

from commbench import buffers
from commbench.suites.osu.settings import TYPES

MPI_TYPES = {"mpi_char": "CHAR", "mpi_int": "INT", "mpi_float": "FLOAT"}


def cycle(n: int, period: int, start: int, dtype) -> np.ndarray:
    """(i + start) mod period for i < n, as dtype: one period repeated, so a check makes no
    n-long int64 temporary (the memory pre-flight counts -c's arrays at a few bytes a byte)."""
    return np.resize(((np.arange(period) + start) % period).astype(dtype), n)


def pattern(rank: int, nbytes: int, size: int) -> np.ndarray:
    """The bytes rank sends at a size under -c: (i + 7 (rank + 1) + size) mod 251."""
    return cycle(nbytes, 251, 7 * (rank + 1) + size, np.uint8)


@dataclass
class LoopInts:
    """The group-specific int fields of the C loops' cbosu_args (osu.h), by their names there;
    the mpi4py loops read the same fields."""

    root: int = 0  # mbw_mr: 1 on an active rank
    senders: int = 0  # latency_mt: rank 0's sender threads
    receivers: int = 0  # and rank 1's receiver threads
    warmup: int = 0  # the overlap loops (osu_overlap.h): the overlap rounds' warm-up
    tests: int = 0  # their MPI_Test calls (-t)
    between: int = 0  # 1: an MPI_Barrier after each pure-communication round
    phases: int = 0  # the timed phases: 0 both; -c's checked rounds 1 pure, 2 overlap


class OsuCtx:
    def __init__(self, session: Any, bench: Any, settings: Any, dtype: str, max_size: int):
        self.session, self.bench, self.s, self.dtype = session, bench, settings, dtype
        self.comm = session.comm
        self.rank, self.p = self.comm.Get_rank(), self.comm.Get_size()
        self.peer = self.rank ^ 1  # point-to-point: 0 <-> 1
        self.timer = bench.gather or self.rank == 0  # does this rank time the iterations?
        self.tsize = TYPES[dtype]
        self.mpi_type = getattr(MPI, MPI_TYPES[dtype])
        cfg = session.cfg
        blocks = bench.extent(self.p, settings) if bench.extent is not None else (1, 1)
        self.allocs = [
            buffers.Allocation(max(max_size * k, 1), cfg.alloc, cfg.hugepages) for k in blocks
        ]
        self.allocs.append(buffers.Allocation(64, cfg.alloc, "default"))
        self.sbuf, self.rbuf, self.abuf = (a.array for a in self.allocs)
        self.sbuf.fill(ord("a"))
        self.rbuf.fill(ord("b"))
        self.abuf.fill(0)
        self.window = settings.window or bench.defaults.window
        self.ints = LoopInts()  # what a group hands the C loops beyond the common fields
        self.own: Any = None  # what a group's prepare() keeps, of the group's own type
        self.topology: Any = None  # the neighbourhood programs' neighbor_loops.Topology
        self.at(0)

    def at(self, size: int) -> None:
        self.size = size
        self.count = size // self.tsize
        self.nbytes = self.count * self.tsize
        self.smsg = [self.sbuf, self.count, self.mpi_type]
        self.rmsg = [self.rbuf, self.count, self.mpi_type]
        self.amsg = [self.abuf, 1, MPI.CHAR]

    def fill(self, size: int) -> None:
        self.sbuf[: self.nbytes] = pattern(self.rank, self.nbytes, size)
        self.rbuf[: self.nbytes] = 0
        if self.session.corrupt and self.nbytes:
            self.sbuf[0] ^= 0xFF

    def mismatches(self, src: int, size: int) -> int:
        return int(np.count_nonzero(self.rbuf[: self.nbytes] != pattern(src, self.nbytes, size)))

    def free(self) -> None:
        self.sbuf = self.rbuf = self.abuf = None  # type: ignore[assignment]
        self.smsg = self.rmsg = self.amsg = []
        for a in self.allocs:
            a.free()
