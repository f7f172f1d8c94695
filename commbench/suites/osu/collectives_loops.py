"""The blocking and persistent collectives' per-size set-up, loop, row and extras (the
descriptors and the procedure: collectives.py, which names these as base.Lazy; the calls'
buffers and -c: collective_calls.py)."""

from __future__ import annotations

import sys

import numpy as np
from mpi4py import MPI

from commbench.native import osu as native_osu
from commbench.suites import collops
from commbench.suites.osu import collective_calls as calls
from commbench.suites.osu.settings import mem_limit
from commbench.suites.osu.spec import Call, percentile


def arguments(ctx, call: Call) -> tuple:
    """The mpi4py arguments of one call at the context's size."""
    return collops.arguments(
        call.op, ctx.rank, ctx.p, ctx.sbuf, ctx.rbuf, ctx.count, ctx.mpi_type, 0, ctx.tsize, MPI.SUM
    )


def control(ctx, call: Call, req) -> native_osu.CollCtl:
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
