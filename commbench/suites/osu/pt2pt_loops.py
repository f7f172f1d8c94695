"""The loops, rows and -c verifiers of OSU's latency, bw and bibw (the descriptors:
pt2pt.py, which names them as base.Lazy; the procedure: pt2pt.py's docstring)."""

from __future__ import annotations

from mpi4py import MPI

from commbench.suites.osu.spec import bandwidth_row, latency_row

TAG_LAT, TAG_DATA, TAG_BACK, TAG_ACK = 1, 100, 10, 101


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


def lat_row(ctx, s, times) -> dict:
    return latency_row(times, 2, s.percentiles)


def bw_row(ctx, s, times) -> dict:
    return bandwidth_row(times, ctx.nbytes * ctx.window * ctx.bench.directions, s.percentiles)


def from_peer(ctx, size: int) -> int:
    """-c: both ranks received the other's data."""
    return ctx.mismatches(ctx.peer, size)


def at_receiver(ctx, size: int) -> int:
    """-c: rank 1 received rank 0's data (rank 0 only an ack)."""
    return ctx.mismatches(ctx.peer, size) if ctx.rank == 1 else 0
