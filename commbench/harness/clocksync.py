"""Clock synchronization for --sync-start window: each rank's clock offset against
rank 0 of its group, with a bound on the error.

The method: SKaMPI's offset measurement (Reussner, Sanders, Prechelt, Mueller,
"SKaMPI: A Detailed, Accurate MPI Benchmark", EuroPVM/MPI 1998) over the
hierarchical scheme of ReproMPI's HCA (Hunold and Carpen-Amarie, "Reproducible
MPI Benchmarking Is Still Not As Easy As You Think", IEEE TPDS 27(12), 2016).
A client sends a ping at t1 (its clock), the server answers with its clock ts,
the answer arrives at t2: ts was read at some instant in [t1, t2] of the client's
clock, so the client's offset o = t_client - t_server lies in [t1 - ts, t2 - ts],
and its midpoint (t1 + t2)/2 - ts is off by at most the half round trip
(t2 - t1)/2. Of EXCHANGES ping-pongs the one with the shortest round trip is kept.
The pairs form HCA's binomial tree (round j: rank r < 2^j serves rank r + 2^j), so
log2(P) rounds reach every rank, and a rank's offset against rank 0 is the sum of
the offsets along its path, its bound the sum of their bounds.

HCA fits a linear model of drift from fit points taken before the measurement;
here one sync is taken before a row's repetitions and one after, and the offset
is interpolated linearly between the two (commbench.harness.iteration_times): the
drift is their difference over the time between them, and the error of an
interpolated offset is at most the larger of the two bounds.

Tests inject an offset (and drift) per rank with COMMBENCH_FAULT_CLOCK_OFFSET=
"rank:seconds[:drift],..." (world ranks): the clock read here and by the window
timing is MPI_Wtime plus that offset; nothing else sees it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from commbench.row_measurement import CLOCK_OFFSET_ENV, parse_clock_faults

EXCHANGES = 24  # ping-pongs per pair; the shortest round trip is kept (SKaMPI)
TAG = 1001  # beside the dissemination barrier's 1000; every message is received within the sync


class Clock:
    """This rank's clock: MPI_Wtime, plus the injected offset and drift of the tests."""

    def __init__(self, world_rank: int):
        offset, drift = parse_clock_faults(os.environ.get(CLOCK_OFFSET_ENV, "")).get(
            world_rank, (0.0, 0.0)
        )
        self.offset, self.drift = offset, drift
        self.base = MPI.Wtime()
        self.read = MPI.Wtime if not (offset or drift) else self._shifted

    def _shifted(self) -> float:
        t = MPI.Wtime()
        return t + self.offset + self.drift * (t - self.base)

    def __call__(self) -> float:
        return self.read()


@dataclass(frozen=True)
class Offset:
    """This rank's clock against rank 0's: local - reference, read at local time `at`."""

    offset: float
    error: float  # |estimate - truth| <= error (half round trips along the tree path)
    at: float  # the local time the estimate refers to


def _client(comm: MPI.Comm, server: int, clock: Clock) -> Offset:
    ping, answer = np.zeros(1), np.zeros(1)
    best = (np.inf, 0.0, 0.0)  # (half round trip, offset, mid time)
    for _ in range(EXCHANGES):
        t1 = clock()
        comm.Send([ping, MPI.DOUBLE], server, TAG)
        comm.Recv([answer, MPI.DOUBLE], server, TAG)
        t2 = clock()
        half = (t2 - t1) / 2
        if half < best[0]:
            best = (half, (t1 + t2) / 2 - float(answer[0]), (t1 + t2) / 2)
    return Offset(best[1], best[0], best[2])


def _server(comm: MPI.Comm, client: int, clock: Clock) -> None:
    ping, stamp = np.zeros(1), np.zeros(1)
    for _ in range(EXCHANGES):
        comm.Recv([ping, MPI.DOUBLE], client, TAG)
        stamp[0] = clock()
        comm.Send([stamp, MPI.DOUBLE], client, TAG)


def synchronize(comm: MPI.Comm, clock: Clock) -> Offset:
    """Every rank's offset against rank 0 of comm (collective over comm)."""
    rank, size = comm.Get_rank(), comm.Get_size()
    mine = Offset(0.0, 0.0, clock())
    step = 1
    while step < size:
        if rank < step and rank + step < size:  # a server: answer, then pass on its own offset
            _server(comm, rank + step, clock)
            comm.Send([np.array([mine.offset, mine.error]), MPI.DOUBLE], rank + step, TAG)
        elif step <= rank < 2 * step:  # the client of rank - step
            pair = _client(comm, rank - step, clock)
            up = np.zeros(2)
            comm.Recv([up, MPI.DOUBLE], rank - step, TAG)
            mine = Offset(pair.offset + float(up[0]), pair.error + float(up[1]), pair.at)
        step *= 2
    return mine


@dataclass(frozen=True)
class Bracket:
    """The offsets before and after a row: the linear model between them."""

    before: Offset
    after: Offset

    @property
    def drift(self) -> float:
        span = self.after.at - self.before.at
        return (self.after.offset - self.before.offset) / span if span > 0 else 0.0

    @property
    def drift_error(self) -> float:
        span = self.after.at - self.before.at
        return (self.before.error + self.after.error) / span if span > 0 else float("inf")

    @property
    def error(self) -> float:
        """The bound of an interpolated offset between the two syncs."""
        return max(self.before.error, self.after.error)

    def to_reference(self, local: np.ndarray) -> np.ndarray:
        """Local times (between the two syncs) in rank 0's time."""
        return local - (self.before.offset + self.drift * (local - self.before.at))
