"""network_test's timed kernels on one slice communicator (mpi4py), as GPCNeT times them.

A ring kernel runs one ring: a barrier of every rank of the test, the warm-up iterations,
the timed ones, a barrier of the slice. Each timed iteration is one sample (monotonic
clock around it); the ring's value is the loop's MPI_Wtime span over the iterations.
Latency is the iteration time over 2 (two neighbours), in microseconds; bandwidth the
bytes this rank sends in an iteration (8 x 131,072 to each neighbour) over its time, in
MiB/s. Two-sided iterations are persistent requests (started and completed together, one
Python call each: the interpreter's cost per message stays out of the timed region);
one-sided ones hold shared locks on both neighbours for the ring, outside the timing.
The collectives run repetitions of one warm-up operation and the timed ones.

With the native engine (commbench.native.gpcnet, `runner`) the warm-up and timed iterations
of a ring or a collective are one C call making the same MPI calls, as GPCNeT's C loop
makes them (a fresh MPI_Irecv/MPI_Isend per message, as GPCNeT posts them); the barriers
around a ring and the window's locks stay here.
"""

from __future__ import annotations

import time

import numpy as np
from mpi4py import MPI

from commbench.suites.gpcnet.settings import A2A_BYTES, BW_BYTES, IN_FLIGHT

MiB = float(2**20)
LAT_ITERS, LAT_WARM = 200, 200
BW_ITERS, BW_WARM = 8, 1
DOUBLES = BW_BYTES // 8


class GpcnetBuffers:
    """What one rank's kernels use: ring buffers, an RMA window on the slice, a2a buffers."""

    def __init__(self, slice_comm, one_sided: bool, alltoall: bool):
        self.send = np.ones(2 * DOUBLES, dtype=np.float64)
        self.recv = np.zeros(2 * DOUBLES, dtype=np.float64)
        self.win = None
        if one_sided:
            self.win = MPI.Win.Allocate(4 * DOUBLES * 8, 8, comm=slice_comm)
            self.wbuf = np.frombuffer(self.win.tomemory(), dtype=np.float64)
            self.wbuf[:] = 0.0
        n = slice_comm.Get_size()
        self.a2a_s = np.ones(512 * n if alltoall else 1, dtype=np.float64)
        self.a2a_r = np.zeros(512 * n if alltoall else 1, dtype=np.float64)

    def free(self) -> None:
        if self.win is not None:
            self.win.Free()
            self.win = None


def _iterations(one, iters: int) -> tuple[np.ndarray, float]:
    """(each call's seconds, the MPI_Wtime span of all of them) of iters calls of one()."""
    samples = np.empty(iters)
    clock = time.perf_counter
    t0 = MPI.Wtime()
    for i in range(iters):
        a = clock()
        one()
        samples[i] = clock() - a
    return samples, MPI.Wtime() - t0


def _timed(one, iters: int, warm: int, test_comm, slice_comm) -> tuple[np.ndarray, float]:
    """(per-iteration seconds, Wtime span of the timed iterations) of `one()` in a ring."""
    test_comm.Barrier()
    for _ in range(warm):
        one()
    samples, span = _iterations(one, iters)
    slice_comm.Barrier()
    return samples, span


def two_sided(b: GpcnetBuffers, comm, left: int, right: int, count: int, flight: int, sync: bool):
    """An iteration of `flight` messages of `count` doubles to and from each neighbour
    (receives posted first); with sync, the slice's barrier inside it (BW+Sync)."""
    n = count
    reqs = []
    for _ in range(flight):
        reqs.append(comm.Recv_init([b.recv[:n], n, MPI.DOUBLE], left, 81))
        reqs.append(comm.Recv_init([b.recv[DOUBLES : DOUBLES + n], n, MPI.DOUBLE], right, 82))
    for _ in range(flight):
        reqs.append(comm.Send_init([b.send[:n], n, MPI.DOUBLE], left, 82))
        reqs.append(comm.Send_init([b.send[DOUBLES : DOUBLES + n], n, MPI.DOUBLE], right, 81))

    def one() -> None:
        MPI.Prequest.Startall(reqs)
        MPI.Request.Waitall(reqs)
        if sync:
            comm.Barrier()

    return one, reqs


def _native_ring(runner, kind: str, b: GpcnetBuffers, test_comm, comm, left: int, right: int,
                 iters: int, warm: int):  # fmt: skip
    """A ring's (per-iteration seconds, Wtime span) from gpcnet.c, between the same barriers as
    _timed's: the calls the mpi4py loop makes."""
    lat, one_sided = kind in ("p2p_lat", "get_lat"), kind in ("get_lat", "put_bw")
    count, flight = (1, 1) if lat else (DOUBLES, IN_FLIGHT)
    test_comm.Barrier()
    samples, span = runner.loop(
        kind, comm, warm, iters, b.send, b.recv, count=count, flight=flight,
        sync=kind == "p2p_sync", left=left, right=right, stride=DOUBLES,
        win=b.win if one_sided else None, origin=b.wbuf if one_sided else None,
    )  # fmt: skip
    comm.Barrier()
    return samples, span


def ring(kind: str, b: GpcnetBuffers, test_comm, comm, left: int, right: int, runner=None):
    """One ring of a ring test: (samples in the test's unit, the ring's value); runner: the
    native engine's (commbench.native.gpcnet), None for the mpi4py loops."""
    lat, one_sided = kind in ("p2p_lat", "get_lat"), kind in ("get_lat", "put_bw")
    iters, warm = (LAT_ITERS, LAT_WARM) if lat else (BW_ITERS, BW_WARM)
    reqs: list = []
    if runner is not None:
        one = None
    elif kind == "p2p_lat":
        one, reqs = two_sided(b, comm, left, right, 1, 1, False)
    elif kind in ("p2p_bw", "nat_bw", "p2p_sync"):
        one, reqs = two_sided(b, comm, left, right, DOUBLES, IN_FLIGHT, kind == "p2p_sync")
    else:
        one = _one_sided(kind, b, left, right)
    if one_sided:
        for t in {left, right}:
            b.win.Lock(t, MPI.LOCK_SHARED)
    try:
        if one is None:
            samples, span = _native_ring(runner, kind, b, test_comm, comm, left, right, iters, warm)
        else:
            samples, span = _timed(one, iters, warm, test_comm, comm)
    finally:
        for r in reqs:
            r.Free()
        if one_sided:
            for t in {left, right}:
                b.win.Unlock(t)
    return _ring_values(lat, samples, span, iters)


def _ring_values(lat: bool, samples: np.ndarray, span: float, iters: int):
    """(samples in the test's unit, the ring's value) of seconds per iteration and the span."""
    if lat:
        return samples * 1e6 / 2, span * 1e6 / (2 * iters)
    sent = 2.0 * IN_FLIGHT * BW_BYTES
    return sent / (samples * MiB), sent * iters / (span * MiB)


def _one_sided(kind: str, b: GpcnetBuffers, left: int, right: int):
    win, w = b.win, b.wbuf
    if kind == "get_lat":
        lo, ro = w[0:1], w[1:2]

        def one() -> None:
            win.Get([lo, 1, MPI.DOUBLE], left, (2, 1, MPI.DOUBLE))
            win.Get([ro, 1, MPI.DOUBLE], right, (3, 1, MPI.DOUBLE))
            win.Flush(left)
            win.Flush(right)

        return one
    ls, rs = w[:DOUBLES], w[DOUBLES : 2 * DOUBLES]

    def put() -> None:
        for _ in range(IN_FLIGHT):
            win.Put([ls, DOUBLES, MPI.DOUBLE], left, (2 * DOUBLES, DOUBLES, MPI.DOUBLE))
            win.Put([rs, DOUBLES, MPI.DOUBLE], right, (3 * DOUBLES, DOUBLES, MPI.DOUBLE))
        win.Flush(left)
        win.Flush(right)

    return put


def collective(kind: str, b: GpcnetBuffers, comm, runner=None) -> tuple[np.ndarray, float, int]:
    """One repetition of a collective test: (per-operation samples in the test's unit,
    the Wtime span of its timed operations, their count). Allreduce: 1 double, SUM, 1 + 200
    operations, microseconds per operation; Alltoall: 512 doubles per peer, 1 + 64
    (64 x 64 / n beyond 64 ranks), MiB/s of the 4,096 x (n - 1) bytes sent."""
    n = comm.Get_size()
    if kind == "allreduce":
        iters, s, r = 200, b.send[:1], b.recv[:1]

        def op() -> None:
            comm.Allreduce([s, 1, MPI.DOUBLE], [r, 1, MPI.DOUBLE], MPI.SUM)

    else:
        iters = 64 if n <= 64 else max(1, int(64 * 64 / n))

        def op() -> None:
            comm.Alltoall([b.a2a_s, 512, MPI.DOUBLE], [b.a2a_r, 512, MPI.DOUBLE])

    if runner is None:
        op()
        samples, span = _iterations(op, iters)
    elif kind == "allreduce":
        samples, span = runner.loop(kind, comm, 1, iters, b.send, b.recv)
    else:
        samples, span = runner.loop(kind, comm, 1, iters, b.a2a_s, b.a2a_r, count=512)
    if kind == "allreduce":
        return samples * 1e6, span, iters
    if n == 1:  # a slice of one (a host with more ranks than the others): no network, no sample
        return np.full(iters, -1.0), span, iters
    return A2A_BYTES * (n - 1) / (samples * MiB), span, iters
