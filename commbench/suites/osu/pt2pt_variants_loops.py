"""The loops, roles, rows, -c verifiers and extras of OSU's persistent latency, bw and bibw,
mbw_mr, multi_lat, latency_mp, bw_fan_in and bw_fan_out (the descriptors and their procedure:
pt2pt_variants.py, which names these as base.Lazy)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from commbench.suites.osu.pt2pt_variants import procs
from commbench.suites.osu.spec import bandwidth_row, latency_row

TAG_LAT, TAG_DATA, TAG_ACK = 1, 100, 101


def latency_persistent(ctx, n: int, times) -> None:
    comm, p = ctx.comm, ctx.peer
    first, second = (
        (comm.Send_init(ctx.smsg, p, TAG_LAT), comm.Recv_init(ctx.rmsg, p, TAG_LAT))
        if ctx.rank == 0
        else (comm.Recv_init(ctx.rmsg, p, TAG_LAT), comm.Send_init(ctx.smsg, p, TAG_LAT))
    )
    timed, wtime = times is not None and ctx.timer, MPI.Wtime
    for i in range(n):
        t0 = wtime()
        first.Start()
        first.Wait()
        second.Start()
        second.Wait()
        if timed:
            times[i] = wtime() - t0
    first.Free()
    second.Free()


def bw_persistent(ctx, n: int, times) -> None:
    comm, p, w, wtime = ctx.comm, ctx.peer, ctx.window, MPI.Wtime
    sender = ctx.rank == 0
    reqs = [
        comm.Send_init(ctx.smsg, p, TAG_DATA) if sender else comm.Recv_init(ctx.rmsg, p, TAG_DATA)
        for _ in range(w)
    ]
    timed = times is not None and sender
    for i in range(n):
        t0 = wtime()
        MPI.Prequest.Startall(reqs)
        MPI.Request.Waitall(reqs)
        if sender:
            comm.Recv(ctx.amsg, p, TAG_ACK)
        else:
            comm.Send(ctx.amsg, p, TAG_ACK)
        if timed:
            times[i] = wtime() - t0
    for r in reqs:
        r.Free()


def bibw_persistent(ctx, n: int, times) -> None:
    comm, p, w, wtime = ctx.comm, ctx.peer, ctx.window, MPI.Wtime
    stag, rtag = (TAG_DATA, TAG_ACK) if ctx.rank == 0 else (TAG_ACK, TAG_DATA)
    sends = [comm.Send_init(ctx.smsg, p, stag) for _ in range(w)]
    recvs = [comm.Recv_init(ctx.rmsg, p, rtag) for _ in range(w)]
    timed = times is not None and ctx.rank == 0
    for i in range(n):
        t0 = wtime()
        MPI.Prequest.Startall(recvs)
        MPI.Prequest.Startall(sends)
        MPI.Request.Waitall(sends)
        MPI.Request.Waitall(recvs)
        if timed:
            times[i] = wtime() - t0
    for r in sends + recvs:
        r.Free()


def mbw_mr(ctx, n: int, times) -> None:
    comm, p, w, wtime = ctx.comm, ctx.peer, ctx.window, MPI.Wtime
    isend, irecv, waitall, barrier = comm.Isend, comm.Irecv, MPI.Request.Waitall, comm.Barrier
    active, timed = ctx.own.active, times is not None and ctx.timer
    for i in range(n):
        barrier()
        barrier()
        if not active:
            continue
        if ctx.timer:
            t0 = wtime()
            waitall([isend(ctx.smsg, p, TAG_DATA) for _ in range(w)])
            comm.Recv(ctx.amsg, p, TAG_ACK)
            if timed:
                times[i] = wtime() - t0
        else:
            waitall([irecv(ctx.rmsg, p, TAG_DATA) for _ in range(w)])
            comm.Send(ctx.amsg, p, TAG_ACK)


def barrier_latency(ctx, n: int, times) -> None:
    """multi_lat, latency_mp: an MPI_Barrier, then the ping-pong; the sender times it."""
    comm, s, r, p, wtime = ctx.comm, ctx.smsg, ctx.rmsg, ctx.peer, MPI.Wtime
    timed = times is not None and ctx.timer
    for i in range(n):
        comm.Barrier()
        if ctx.timer:
            t0 = wtime()
            comm.Send(s, p, TAG_LAT)
            comm.Recv(r, p, TAG_LAT)
            if timed:
                times[i] = wtime() - t0
        else:
            comm.Recv(r, p, TAG_LAT)
            comm.Send(s, p, TAG_LAT)


def fan(ctx, n: int, times, out: bool) -> None:
    comm, w, wtime, waitall = ctx.comm, ctx.window, MPI.Wtime, MPI.Request.Waitall
    others = range(1, ctx.p)
    timed = times is not None and ctx.timer
    for i in range(n):
        t0 = wtime()
        if ctx.rank == 0:
            post = comm.Isend if out else comm.Irecv
            msg = ctx.smsg if out else ctx.rmsg
            waitall([post(msg, q, TAG_DATA) for _ in range(w) for q in others])
            for q in others:
                (comm.Recv if out else comm.Send)(ctx.amsg, q, TAG_ACK)
        else:
            post, msg = (comm.Irecv, ctx.rmsg) if out else (comm.Isend, ctx.smsg)
            waitall([post(msg, 0, TAG_DATA) for _ in range(w)])
            (comm.Send if out else comm.Recv)(ctx.amsg, 0, TAG_ACK)
        if timed:
            times[i] = wtime() - t0


def fan_in(ctx, n: int, times) -> None:
    fan(ctx, n, times, out=False)


def fan_out(ctx, n: int, times) -> None:
    fan(ctx, n, times, out=True)


# Roles per size (prepare): the partner, who times, who takes part.
def pairs_of(ctx) -> int:
    return ctx.s.pairs or ctx.p // 2


@dataclass
class Streams:
    """mbw_mr, multi_lat, bw_fan_*: this rank's part (Ctx.own, set by the roles below)."""

    active: bool = True  # sends or receives (mbw_mr: ranks past 2 x pairs only synchronise)
    pairs: int = 0  # mbw_mr, multi_lat: the pairs
    senders: int = 0  # bw_fan_*: the ranks that send (or receive) at once


def pair_roles(ctx, size: int) -> None:
    """mbw_mr (-p PAIRS, default P/2) and multi_lat (P/2): rank i < pairs sends to i + pairs."""
    k = pairs_of(ctx) if ctx.bench.name == "mbw_mr" else ctx.p // 2
    ctx.peer = ctx.rank + k if ctx.rank < k else ctx.rank - k
    ctx.timer = ctx.rank < k
    ctx.own = Streams(active=ctx.rank < 2 * k, pairs=k)
    ctx.ints.root = int(ctx.own.active)  # the C loop's flag: an active rank


def fan_roles(ctx, size: int) -> None:
    ctx.peer = 0
    ctx.timer = (ctx.rank == 0) == (ctx.bench.name == "bw_fan_out")
    ctx.own = Streams(senders=ctx.p - 1)


# Rows: the timing ranks' arrays (gather=True: None for the others).
def _timed(data) -> list[np.ndarray]:
    return [np.asarray(t) for t in data if t is not None]


def senders_latency_row(ctx, s, data) -> dict:
    """multi_lat: the senders' mean latency (OSU: the sum over ranks / pairs), min/max
    over them; -z over all senders' half round trips (OSU 7.4 prints none)."""
    timed = _timed(data)
    per = [float(np.mean(t)) * 1e6 / 2 for t in timed]
    v = latency_row(list(np.concatenate(timed)), 2, s.percentiles)
    v.update(t=float(np.mean(per)), t_avg=float(np.mean(per)), t_min=min(per), t_max=max(per))
    return v


def multi_bw_row(ctx, s, data) -> dict:
    """mbw_mr, bw_fan_*: every timing rank's bytes over the timing ranks' mean time
    (OSU's arithmetic, tests/data/osu/README.md); -z: rank 0's per-window values
    (fan_in: the first sender's) x the number of windows moved at once."""
    timed = _timed(data)
    streams = ctx.own.pairs or ctx.own.senders or 1
    nbytes = ctx.nbytes * ctx.window
    v = bandwidth_row(list(timed[0]), nbytes, s.percentiles)
    mean_total = float(np.mean([t.sum() for t in timed]))
    v["bytes_per_sec"] = streams * nbytes * len(timed[0]) / mean_total if mean_total > 0 else 0.0
    per = [float(t.mean()) * 1e6 for t in timed]
    v.update(t=float(np.mean(per)), t_avg=float(np.mean(per)), t_min=min(per), t_max=max(per))
    for p in s.percentiles:
        v[f"bw_p{p}"] *= streams
    if ctx.bench.name == "mbw_mr":
        v["msgs_per_sec"] = v["bytes_per_sec"] / ctx.size if ctx.size else 0.0
    return v


# -c: what each rank received.
def pair_receivers(ctx, size: int) -> int:
    """mbw_mr: the receivers got their sender's data; multi_lat: both sides did."""
    if not ctx.own.active:
        return 0
    return ctx.mismatches(ctx.peer, size) if (not ctx.timer or ctx.bench.name == "multi_lat") else 0


def fan_receivers(ctx, size: int) -> int:
    """fan_in: rank 0's buffer holds the message that landed last, from one of the senders
    (the fewest wrong bytes against any sender's pattern); fan_out: every other rank's, rank 0's."""
    if ctx.bench.name == "bw_fan_in":
        return min(ctx.mismatches(q, size) for q in range(1, ctx.p)) if ctx.rank == 0 else 0
    return ctx.mismatches(0, size) if ctx.rank != 0 else 0


def mbw_extra(ctx, s, extra) -> dict:
    return {"pairs": ctx.own.pairs}


def mp_extra(ctx, s, extra) -> dict:
    send, recv = procs(s)
    return {"forked_asked": [send, recv], "forked_processes": 0}
