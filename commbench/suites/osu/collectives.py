"""OSU's blocking collectives and their MPI-4 persistent forms (OMB 7.4): allreduce,
allgather, allgatherv, alltoall, alltoallv, alltoallw, barrier, bcast, gather,
gatherv, reduce, reduce_scatter, reduce_scatter_block, scatter, scatterv, and
<name>_persistent for each but reduce_scatter_block (the programs OMB 7.4 builds).

Their procedure, read off the binaries with a preloaded call logger
(tests/data/osu/trace_coll.c; tests/data/osu/README.md, "Blocking and persistent
collectives"). Per size, after one MPI_Barrier, skip + iterations rounds of
"MPI_Wtime, the collective, MPI_Wtime, MPI_Barrier" on every rank (barrier: no
MPI_Barrier between the rounds; persistent forms: MPI_<Coll>_init before the
size's barrier, MPI_Start + MPI_Wait as the collective, MPI_Request_free after).
Every rank times every round; OSU's row is the mean over the ranks of each rank's
mean (-f: also their minimum and maximum, and the iterations) and -z's values are
those of the per-round times averaged over the ranks (read with a made-up clock,
tests/data/osu/wtime_ranks.c). Defaults: 1000 iterations and 100 warm-up rounds
(100 and 10 above 8192 bytes), sizes 1 B … 1 MiB, root 0, MPI_SUM in the -T type.

-M BYTES (default 512 MiB, at least 1 MiB as OSU): the programs with a buffer of
P blocks (all/gather(v), all-to-all(v,w), scatter(v)) stop at M / P bytes, the
others at M. The calls, their arguments and -c: collective_calls.py, from the one
declaration of each operation (commbench.suites.collops).
"""

from __future__ import annotations

import sys

import numpy as np
from mpi4py import MPI

from commbench.native import osu as native_osu
from commbench.suites import collops
from commbench.suites.osu import collective_calls as calls
from commbench.suites.osu.settings import mem_limit
from commbench.suites.osu.spec import Defaults, OsuBenchmark, percentile

COLL = Defaults(iterations=1000, iterations_large=100, skip=100, skip_large=10, max_size=1 << 20)
TAKES = frozenset("mixzcTfMu")
BARRIER_TAKES = frozenset(
    "mixzfM"
)  # osu_barrier refuses -c and -T; it takes -m and measures no size


# OSU's title words of each program (headers.txt), in the order of OMB 7.4's list.
TITLES = {
    "allreduce": "Allreduce",
    "allgather": "Allgather",
    "allgatherv": "Allgatherv",
    "alltoall": "All-to-All Personalized Exchange",
    "alltoallv": "All-to-Allv Personalized Exchange",
    "alltoallw": "All-to-Allw Personalized Exchange",
    "barrier": "Barrier",
    "bcast": "Broadcast",
    "gather": "Gather",
    "gatherv": "Gatherv",
    "reduce": "Reduce",
    "reduce_scatter": "Reduce_scatter",
    "reduce_scatter_block": "Reduce_scatter_block",
    "scatter": "Scatter",
    "scatterv": "Scatterv",
}
# commbench's own operations (collops.OURS) after OMB's, blocking and persistent
TITLES.update({o.name: o.title for o in collops.OURS})
CALLS = tuple(calls.call(name) for name in TITLES)
NOT_PERSISTENT = {"reduce_scatter_block"}  # OMB 7.4 has no osu_reduce_scatter_block_persistent


def arguments(ctx, call: calls.Call) -> tuple:
    """The mpi4py arguments of one call at the context's size."""
    return collops.arguments(
        call.op, ctx.rank, ctx.p, ctx.sbuf, ctx.rbuf, ctx.count, ctx.mpi_type, 0, ctx.tsize, MPI.SUM
    )


def control(ctx, call: calls.Call, req) -> native_osu.CollCtl:
    """The native loops' control block (cbosu_coll_ctl of osu.h): the receive count of
    reduce_scatter, the int32 arrays counts, displacements and byte displacements (P
    each), the persistent request (or none)."""
    cnt, dsp = collops.counts(call.op, ctx.count, ctx.p)
    v = np.array(cnt + dsp + [d * ctx.tsize for d in dsp], dtype=np.int32)
    ctx.own.v = v
    return native_osu.CollCtl(
        rs_count=int(cnt[ctx.rank]),
        v=v.ctypes.data,
        req=MPI._addressof(req) if req is not None else None,
    )


def prepare(ctx, size: int) -> None:
    call = ctx.bench.call
    persistent = call.persistent
    if call.name == "barrier" and ctx.s.message_size and ctx.rank == 0:
        print(
            f"commbench: osu {ctx.bench.name}: -m does not apply (no message; osu_barrier takes it "
            "and measures no size too)",
            file=sys.stderr,
            flush=True,
        )
    fn = getattr(ctx.comm, call.op.method + ("_init" if persistent else ""))
    args = arguments(ctx, call)
    req = fn(*args) if persistent else None
    ctx.own = calls.Coll(call=(fn, args), req=req)
    ctx.own.ctl = control(ctx, call, req)
    ctx.abuf = native_osu.block(ctx.own.ctl)  # what the driver hands the C loop as abuf


def release(ctx, size: int) -> None:
    req, ctx.own.req = ctx.own.req, None
    if req is not None:
        req.Free()
    ctx.own.call = None


def loop(ctx, n: int, times) -> None:
    """n rounds: MPI_Wtime, the collective (or MPI_Start, MPI_Wait), MPI_Wtime, MPI_Barrier
    (none for barrier), as OSU: every rank times, the warm-up too (its times are dropped)."""
    wtime, bar = MPI.Wtime, ctx.comm.Barrier
    req = ctx.own.req
    if req is not None:
        start, wait = req.Start, req.Wait
        between = ctx.bench.call.name != "barrier"
        for i in range(n):
            t0 = wtime()
            start()
            wait()
            t = wtime() - t0
            if times is not None:
                times[i] = t
            if between:
                bar()
        return
    fn, args = ctx.own.call
    if ctx.bench.call.name == "barrier":
        for i in range(n):
            t0 = wtime()
            fn()
            t = wtime() - t0
            if times is not None:
                times[i] = t
        return
    for i in range(n):
        t0 = wtime()
        fn(*args)
        t = wtime() - t0
        if times is not None:
            times[i] = t
        bar()


def row(ctx, s, data) -> dict:
    """OSU's row from every rank's per-round seconds: t = the mean over ranks of each rank's
    mean (us), t_min/t_max their extremes (-f); iter_* and t_p<P> over the rounds' times
    averaged over the ranks (OSU's -z)."""
    us = np.array([np.asarray(t, dtype=float) for t in data]) * 1e6
    per_rank, per_round = us.mean(axis=1), us.mean(axis=0)
    t = float(per_rank.mean())
    vals = {
        "t": t,
        "t_avg": t,
        "t_min": float(per_rank.min()),
        "t_max": float(per_rank.max()),
        "iter_min": float(per_round.min()),
        "iter_max": float(per_round.max()),
        "iter_median": float(np.median(per_round)),
    }
    rounds = per_round.tolist()
    vals.update({f"t_p{q}": percentile(rounds, q) for q in s.percentiles})
    return vals


def extra(ctx, s, ex) -> dict:
    call = ctx.bench.call
    more = {"root": 0, "mem_limit": mem_limit(s)}
    if s.full:
        more["full"] = True
    if call.op.reduces:
        more["op"] = "MPI_SUM"
    return more


def barrier_sizes(settings, dtype: str) -> list[int]:
    """osu_barrier: one row without a size, for the run's first -T type only."""
    return [0] if dtype == settings.types[0] else []


def describe(call: calls.Call) -> str:
    what = f"MPI_{call.op.method}" + (
        "_init once per size, then MPI_Start and MPI_Wait" if call.persistent else ""
    )
    return (
        what + ("" if call.name == "barrier" else ", MPI_Barrier") + " per round; every rank timed"
    )


def benchmark(name: str, persistent: bool) -> OsuBenchmark:
    call, barrier = calls.call(name, persistent), name == "barrier"
    return OsuBenchmark(
        name + ("_persistent" if persistent else ""),
        describe(call),
        group="coll",
        default=not call.op.ours,  # commbench's own (collops.OURS): by name, not in OMB's list
        title=f"MPI {TITLES[name]}{' Persistent' if persistent else ''} Latency",
        metric="sync" if barrier else "collective",
        takes=BARRIER_TAKES if barrier else TAKES,
        defaults=COLL,
        loop=loop,
        prepare=prepare,
        release=release,
        native=("barrier_persistent" if barrier else "persistent") if persistent else name,
        buffers=sum(call.extent(2)),
        row=row,
        verify=None if barrier else calls.verify,
        refill=None if barrier else calls.refill,
        gather=True,
        call=call,
        extra=extra,
        sizes=barrier_sizes if barrier else None,
        extent=call.extent,
        limit=lambda s, p, call=call: calls.limit(call, s, p),
    )


BENCHMARKS = tuple(benchmark(name, False) for name in TITLES) + tuple(
    benchmark(name, True) for name in TITLES if name not in NOT_PERSISTENT
)
