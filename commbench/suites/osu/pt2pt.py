"""OSU's point-to-point benchmarks: latency, bw, bibw (OMB 7.4).

Their procedure, as the binaries run it (tests/data/osu/README.md: how it was
read off them with an MPI call trace):

- latency: rank 0 MPI_Send, MPI_Recv; rank 1 MPI_Recv, MPI_Send; rank 0 times
  every round trip; latency = the mean of the round trips / 2. Warm-up 100
  (10 above 8192 bytes), iterations 10000 (1000), one MPI_Barrier per size.
- bw: rank 0 posts -W (64) MPI_Isend of the same buffer and MPI_Waitall, then
  receives a 1-byte ack; rank 1 posts -W MPI_Irecv into one buffer, waits, acks;
  rank 0 times every window; bandwidth = size x W x iterations / total seconds,
  MB = 10^6 bytes. Warm-up 10 (2), iterations 100 (20).
- bibw: both ranks post -W MPI_Irecv, -W MPI_Isend, and wait for both;
  bandwidth = 2 x size x W x iterations / total seconds. Counts as bw.

Each needs exactly two processes ("This test requires exactly two processes").
Under -c one more iteration runs after the timed ones on patterned buffers
and the receivers verify every byte (context.Ctx.fill / mismatches).
"""

from __future__ import annotations

from mpi4py import MPI

from commbench.suites.osu.spec import (
    Defaults,
    OsuBenchmark,
    bandwidth_row,
    exactly_two,
    latency_row,
)

TAG_LAT, TAG_DATA, TAG_BACK, TAG_ACK = 1, 100, 10, 101
COMMON = frozenset("mixzcTu")
LAT = Defaults(iterations=10000, iterations_large=1000, skip=100, skip_large=10)
BW = Defaults(iterations=100, iterations_large=20, skip=10, skip_large=2)


def latency(ctx, n: int, times) -> None:
    comm, s, r, p, wtime = ctx.comm, ctx.smsg, ctx.rmsg, ctx.peer, MPI.Wtime
    send, recv = comm.Send, comm.Recv
    if ctx.rank == 0:
        if times is None:
            for _ in range(n):
                send(s, p, TAG_LAT)
                recv(r, p, TAG_LAT)
            return
        for i in range(n):
            t0 = wtime()
            send(s, p, TAG_LAT)
            recv(r, p, TAG_LAT)
            times[i] = wtime() - t0
    else:
        for _ in range(n):
            recv(r, p, TAG_LAT)
            send(s, p, TAG_LAT)


def bw(ctx, n: int, times) -> None:
    comm, s, r, a, p = ctx.comm, ctx.smsg, ctx.rmsg, ctx.amsg, ctx.peer
    w, wtime = ctx.window, MPI.Wtime
    isend, irecv, waitall = comm.Isend, comm.Irecv, MPI.Request.Waitall
    if ctx.rank == 0:
        for i in range(n):
            t0 = wtime()
            waitall([isend(s, p, TAG_DATA) for _ in range(w)])
            comm.Recv(a, p, TAG_ACK)
            if times is not None:
                times[i] = wtime() - t0
    else:
        for _ in range(n):
            waitall([irecv(r, p, TAG_DATA) for _ in range(w)])
            comm.Send(a, p, TAG_ACK)


def bibw(ctx, n: int, times) -> None:
    comm, s, r, p, w, wtime = ctx.comm, ctx.smsg, ctx.rmsg, ctx.peer, ctx.window, MPI.Wtime
    isend, irecv, waitall = comm.Isend, comm.Irecv, MPI.Request.Waitall
    rtag, stag = (TAG_BACK, TAG_DATA) if ctx.rank == 0 else (TAG_DATA, TAG_BACK)
    timed = times is not None and ctx.rank == 0
    for i in range(n):
        t0 = wtime()
        recvs = [irecv(r, p, rtag) for _ in range(w)]
        waitall([isend(s, p, stag) for _ in range(w)])
        waitall(recvs)
        if timed:
            times[i] = wtime() - t0


def _latency_row(ctx, s, times) -> dict:
    return latency_row(times, 2, s.percentiles)


def _bw_row(ctx, s, times) -> dict:
    return bandwidth_row(times, ctx.nbytes * ctx.window * ctx.bench.directions, s.percentiles)


def from_peer(ctx, size: int) -> int:
    """-c: both ranks received the other's data."""
    return ctx.mismatches(ctx.peer, size)


def at_receiver(ctx, size: int) -> int:
    """-c: rank 1 received rank 0's data (rank 0 only an ack)."""
    return ctx.mismatches(ctx.peer, size) if ctx.rank == 1 else 0


BENCHMARKS = (
    OsuBenchmark(
        "latency",
        "ping-pong: MPI_Send/MPI_Recv there and back; half the round trip",
        group="pt2pt",
        title="MPI Latency",
        metric="latency",
        takes=COMMON,
        defaults=LAT,
        nprocs=exactly_two,
        loop=latency,
        native="latency",
        row=_latency_row,
        verify=from_peer,
        verdict=2,
    ),
    OsuBenchmark(
        "bw",
        "a window of -W MPI_Isend one way, MPI_Waitall, a 1-byte ack",
        group="pt2pt",
        title="MPI Bandwidth",
        metric="bandwidth",
        takes=COMMON | {"W"},
        defaults=BW,
        nprocs=exactly_two,
        loop=bw,
        native="bw",
        row=_bw_row,
        verify=at_receiver,
        directions=1,
        verdict=102,
    ),
    OsuBenchmark(
        "bibw",
        "windows of -W MPI_Irecv and MPI_Isend both ways at once, MPI_Waitall",
        group="pt2pt",
        title="MPI Bi-Directional Bandwidth",
        metric="bandwidth",
        takes=COMMON | {"W"},
        defaults=BW,
        nprocs=exactly_two,
        loop=bibw,
        native="bibw",
        row=_bw_row,
        verify=from_peer,
        directions=2,
    ),
)
