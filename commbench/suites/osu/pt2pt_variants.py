"""The rest of OSU's point-to-point (OMB 7.4): the persistent latency, bw and bibw;
mbw_mr, multi_lat, latency_mp; bw_fan_in, bw_fan_out. latency_mt is in
latency_mt.py, init in init.py.

Their procedure, read off the binaries with tests/data/osu/trace_pt2pt.c and
their arithmetic with the made-up clocks wtime_steps.c and wtime_rank_steps.c
(tests/data/osu/README.md; docs/osu.md):

- latency_persistent: MPI_Send_init and MPI_Recv_init once, MPI_Start/MPI_Wait of
  each per round trip; bw_persistent: W MPI_Send_init (MPI_Recv_init), MPI_Startall,
  MPI_Waitall, the 1-byte ack; bibw_persistent: W of each on both ranks, MPI_Startall
  receives, sends, MPI_Waitall sends, receives. Counts and rows as latency, bw, bibw.
- mbw_mr: pairs (rank i < pairs, i + pairs); per window two MPI_Barrier, then bw's
  window; 100 iterations and 10 warm-up at every size. MB/s = pairs x size x W x
  iterations / the senders' mean time; Messages/s = that / size; -z: rank 0's
  per-window values x pairs.
- multi_lat: pairs (i, i + P/2), per round trip an MPI_Barrier; latency = the
  senders' mean; latency_mp: latency with an MPI_Barrier before every round trip
  (the 7.4 binary forks no process: no fork in its strace).
- bw_fan_in / bw_fan_out: ranks 1 .. P-1 send W messages each to rank 0 (rank 0 to
  each), acks; MB/s = senders x size x W x iterations / the timing ranks' mean time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from commbench.option_types import ConfigError
from commbench.suites.osu.spec import (
    Defaults,
    OsuBenchmark,
    bandwidth_row,
    exactly_two,
    latency_row,
)

TAG_LAT, TAG_DATA, TAG_ACK = 1, 100, 101
COMMON = frozenset("mixzcTu")
LAT = Defaults(iterations=10000, iterations_large=1000, skip=100, skip_large=10)
BW = Defaults(iterations=100, iterations_large=20, skip=10, skip_large=2)
MBW = Defaults(iterations=100, iterations_large=100, skip=10, skip_large=10)
MAX_PROCS = (
    127  # -t's largest count: the binaries refuse 128 ("Invalid Number of Threads [-t 128]")
)


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


def _latency_row(ctx, s, times) -> dict:
    return latency_row(times, 2, s.percentiles)


def _bw_row(ctx, s, times) -> dict:
    return bandwidth_row(times, ctx.nbytes * ctx.window * ctx.bench.directions, s.percentiles)


def _senders_latency_row(ctx, s, data) -> dict:
    """multi_lat: the senders' mean latency (OSU: the sum over ranks / pairs), min/max
    over them; -z over all senders' half round trips (OSU 7.4 prints none)."""
    timed = _timed(data)
    per = [float(np.mean(t)) * 1e6 / 2 for t in timed]
    v = latency_row(list(np.concatenate(timed)), 2, s.percentiles)
    v.update(t=float(np.mean(per)), t_avg=float(np.mean(per)), t_min=min(per), t_max=max(per))
    return v


def _multi_bw_row(ctx, s, data) -> dict:
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
def from_peer(ctx, size: int) -> int:
    return ctx.mismatches(ctx.peer, size)


def at_receiver(ctx, size: int) -> int:
    return ctx.mismatches(ctx.peer, size) if ctx.rank == 1 else 0


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


# Process counts.
def even(p: int) -> str | None:
    return (
        None
        if p >= 2 and p % 2 == 0
        else "commbench: needs an even number of processes (pairs i, i + P/2)"
    )


def at_least_two(p: int) -> str | None:
    return None if p >= 2 else "This test requires at least two processes"


def mbw_nprocs(p: int) -> str | None:
    return None if p >= 2 else "This test requires at least two processes"


def mbw_extra(ctx, s, extra) -> dict:
    return {"pairs": ctx.own.pairs}


def mp_extra(ctx, s, extra) -> dict:
    send, recv = procs(s)
    return {"forked_asked": [send, recv], "forked_processes": 0}


def procs(s) -> tuple[int, int]:
    """latency_mp's -t as the binary prints it: none 2:2, -t N 0:N, -t S:R."""
    if not s.test_calls:
        return 2, 2
    parts = s.test_calls.split(":")
    return (int(parts[0]), int(parts[1])) if len(parts) == 2 else (0, int(parts[0]))


def check_t(s) -> None:
    """-t for latency_mt / latency_mp: N or S:R, each 1 .. 127, as the binaries take it (they
    refuse 0, 128, '2:' and '2:3:4': "Invalid Number of Threads" / "… of Processes")."""
    if s.test_calls is None:
        return
    parts = s.test_calls.split(":")
    if not all(x.isdigit() and 1 <= int(x) <= MAX_PROCS for x in parts):
        raise ConfigError(
            f"-t {s.test_calls}: latency_mt and latency_mp take -t RECV or -t SEND:RECV, each a "
            f"count of threads (latency_mp: processes) from 1 to {MAX_PROCS}, as their binaries "
            f"(accepted: e.g. -t 4, -t 2:3)"
        )


def pairs_fit(s, p: int) -> None:
    """mbw_mr's -p PAIRS needs 2 PAIRS processes."""
    if s.pairs is not None and 2 * s.pairs > p:
        raise ConfigError(
            f"-p {s.pairs}: {s.pairs} pairs need {2 * s.pairs} processes, the run has {p} "
            f"(accepted: -p 1 to {p // 2})"
        )


BENCHMARKS = (
    OsuBenchmark(
        "latency_persistent",
        "latency with persistent requests: MPI_Start/MPI_Wait of a send and a receive",
        group="pt2pt_variants",
        title="MPI Latency Persistent",
        metric="latency",
        takes=COMMON,
        defaults=LAT,
        nprocs=exactly_two,
        loop=latency_persistent,
        native="latency_persistent",
        row=_latency_row,
        verify=from_peer,
        verdict=2,
    ),
    OsuBenchmark(
        "bw_persistent",
        "bw with persistent requests: MPI_Startall of -W sends, MPI_Waitall, the ack",
        group="pt2pt_variants",
        title="MPI Bandwidth Persistent",
        metric="bandwidth",
        takes=COMMON | {"W"},
        defaults=BW,
        nprocs=exactly_two,
        loop=bw_persistent,
        native="bw_persistent",
        row=_bw_row,
        verify=at_receiver,
        directions=1,
        verdict=102,
    ),
    OsuBenchmark(
        "bibw_persistent",
        "bibw with persistent requests: MPI_Startall of -W receives and sends, MPI_Waitall",
        group="pt2pt_variants",
        title="MPI Bi-Directional Bandwidth Persistent",
        metric="bandwidth",
        takes=COMMON | {"W"},
        defaults=BW,
        nprocs=exactly_two,
        loop=bibw_persistent,
        native="bibw_persistent",
        row=_bw_row,
        verify=from_peer,
        directions=2,
    ),
    OsuBenchmark(
        "mbw_mr",
        "pairs i, i+P/2 (-p): two barriers, a window of -W MPI_Isend, the ack; MB/s and "
        "messages/s of all pairs",
        group="pt2pt_variants",
        title="MPI Multiple Bandwidth / Message Rate",
        metric="mbw_mr",
        takes=COMMON | {"W", "p"},
        defaults=MBW,
        nprocs=mbw_nprocs,
        loop=mbw_mr,
        native="mbw_mr",
        prepare=pair_roles,
        row=_multi_bw_row,
        verify=pair_receivers,
        gather=True,
        directions=1,
        world=pairs_fit,
        extra=mbw_extra,
    ),
    OsuBenchmark(
        "multi_lat",
        "pairs i, i+P/2: an MPI_Barrier, then a ping-pong; the senders' mean half round trip",
        group="pt2pt_variants",
        title="MPI Multi Latency",
        metric="latency",
        takes=COMMON,
        defaults=LAT,
        nprocs=even,
        loop=barrier_latency,
        native="barrier_latency",
        prepare=pair_roles,
        row=_senders_latency_row,
        verify=pair_receivers,
        gather=True,
    ),
    OsuBenchmark(
        "latency_mp",
        "latency with an MPI_Barrier before every round trip (OMB 7.4 forks no process)",
        group="pt2pt_variants",
        title="MPI Multi-process Latency",
        metric="latency",
        takes=COMMON | {"t"},
        defaults=LAT,
        nprocs=exactly_two,
        loop=barrier_latency,
        native="barrier_latency",
        row=_latency_row,
        verify=from_peer,
        validate=check_t,
        extra=mp_extra,
    ),
    OsuBenchmark(
        "bw_fan_in",
        "ranks 1..P-1 each send -W messages to rank 0, which acks each; MB/s of all",
        group="pt2pt_variants",
        title="MPI Bandwidth",
        metric="fan",
        takes=COMMON | {"W"},
        defaults=BW,
        nprocs=at_least_two,
        loop=fan_in,
        native="bw_fan_in",
        prepare=fan_roles,
        row=_multi_bw_row,
        verify=fan_receivers,
        gather=True,
        directions=1,
    ),
    OsuBenchmark(
        "bw_fan_out",
        "rank 0 sends -W messages to each of ranks 1..P-1, which ack; MB/s of all",
        group="pt2pt_variants",
        title="MPI Bandwidth",
        metric="fan",
        takes=COMMON | {"W"},
        defaults=BW,
        nprocs=at_least_two,
        loop=fan_out,
        native="bw_fan_out",
        prepare=fan_roles,
        row=_multi_bw_row,
        verify=fan_receivers,
        gather=True,
        directions=1,
    ),
)
