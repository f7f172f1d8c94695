"""The overlap procedure of OSU's nonblocking collectives on the ranks (the descriptors and the
procedure: nonblocking.py, which names these as base.Lazy; neighbor.py's ineighbor_* share
them): the dummy computation, the per-size set-up, the loop, -c's two phases, the row and
extras."""

from __future__ import annotations

import dataclasses

import numpy as np
from mpi4py import MPI

from commbench.suites.osu import collective_calls as calls
from commbench.suites.osu.settings import mem_limit
from commbench.suites.osu.spec import percentile

PARTS = ("cpu", "init", "test", "wait")


def compute(seconds: float) -> None:
    """The dummy computation, shaped as OMB 7.4's: blocks of floating-point work, each
    timed alone, until the blocks' own time reaches `seconds` (the C loops' blocks are
    OSU's 25 x 25 multiply-adds; a Python block is 16 multiply-adds, to stay short)."""
    wtime, x, spent = MPI.Wtime, 1.0, 0.0
    while spent < seconds:
        t1 = wtime()
        for _ in range(16):
            x = x * 1.000001 + 1e-9
        spent += wtime() - t1


def computation(req, seconds: float, tests: int) -> float:
    """Compute for `seconds` in -t pieces, an MPI_Test after each; the tests' seconds."""
    if not tests:
        compute(seconds)
        return 0.0
    wtime, spent = MPI.Wtime, 0.0
    for _ in range(tests):
        compute(seconds / tests)
        t1 = wtime()
        req.Test()
        spent += wtime() - t1
    return spent


def prepare(ctx, size: int) -> None:
    _, warm = ctx.bench.defaults.counts(size, ctx.s.iterations, ctx.s.warmup)
    between = int(ctx.bench.call.name != "ibarrier")  # an MPI_Barrier after each pure round
    # the overlap warm-up, -t, the barriers, the phases: fields of cbosu_args (osu.h) that
    # either loop reads (osu_overlap.h)
    ctx.ints = dataclasses.replace(
        ctx.ints, warmup=warm, tests=int(ctx.s.test_calls or 0), between=between, phases=0
    )
    calls.prepare(ctx, size)


def loop(ctx, n: int, times) -> None:
    """Untimed (times None): n pure-communication rounds (the warm-up, -c's repetitions).
    Timed: n pure-communication rounds, then warm-up + n overlap rounds; or one of the
    two phases (`phases`, as the C loop: 1 pure only, 2 overlap only on out[0] seconds). The
    means go to the control block's out (Pure Comm., Compute, Coll. Init, MPI_Test, MPI_Wait)."""
    comm, post, wtime, a = ctx.comm, ctx.own.post, MPI.Wtime, ctx.ints
    warm, tests, between, phases = a.warmup, a.tests, a.between, a.phases
    out = ctx.own.out
    if times is None:
        for _ in range(n):
            post().Wait()
            if between:
                comm.Barrier()
        return
    if phases:  # -c: the -u untimed calls (warmup), a barrier, then the checked round(s)
        for _ in range(warm):
            comm.Barrier()
            post().Wait()
        comm.Barrier()
        warm = 0
    if phases == 2:
        pure = float(out[0])
    else:
        for i in range(n):
            t0 = wtime()
            post().Wait()
            times[i] = wtime() - t0
            if between:
                comm.Barrier()
        pure = out[0] = float(np.mean(times)) if n else 0.0
        if phases == 1:
            return
        comm.Barrier()
        comm.Barrier()
    parts = np.zeros((4, n))
    for i in range(-warm, n):
        t_start = wtime()
        t0 = wtime()
        req = post()
        init = wtime() - t0
        t0 = wtime()
        test = computation(req, pure, tests)
        cpu = wtime() - t0
        t0 = wtime()
        req.Wait()
        wait = wtime() - t0
        t_stop = wtime()
        if i >= 0:
            times[i] = t_stop - t_start
            parts[:, i] = (cpu, init, test, wait)
        comm.Barrier()
    out[1:] = [float(np.mean(p)) if n else 0.0 for p in parts]


def check_rounds(ctx, rounds, u: int, times) -> int:
    """OSU 7.4's -c (osu_iallreduce.c and its relatives): every pure-communication round and
    every overlap round, the warm-up ones too, on fresh data: the buffers filled, -u untimed
    calls, an MPI_Barrier, the round (timed after the warm-up), the check (the loop runs the
    -u calls and the barrier of each round: `args`). Pure Comm. is the timed pure rounds' mean,
    which the overlap rounds compute for; `rounds(out, keep)` runs the rounds of one phase
    (engine.checked_rounds). This rank's wrong bytes."""
    st, n = ctx.own, len(times)
    own = ctx.ints
    pure, parts = (
        np.zeros(n),
        np.zeros((n, 4)),
    )  # per timed overlap round: Compute, Init, MPI_Test, MPI_Wait
    ctx.ints = dataclasses.replace(own, warmup=u, phases=1)
    wrong = rounds(pure)
    mean_pure = float(np.mean(pure)) if n else 0.0
    ctx.comm.Barrier()
    ctx.comm.Barrier()
    st.out[0] = mean_pure
    ctx.ints = dataclasses.replace(own, warmup=u, phases=2)
    wrong += rounds(times, (st.out[1:], parts))
    st.out[:] = [mean_pure, *(parts.mean(axis=0) if n else np.zeros(4))]
    ctx.ints = own
    return wrong


def release(ctx, size: int) -> None:
    """Every rank's means (Pure Comm., Compute, Coll. Init, MPI_Test, MPI_Wait) to rank 0:
    the mpi4py loop's, or those the C loop wrote into the control block."""
    ctx.own.all = ctx.comm.gather([float(x) for x in ctx.own.out], root=0)
    calls.release(ctx, size)


def row(ctx, s, times) -> dict:
    """OSU's averages over the ranks (us); t = Overall."""
    ranks = np.array([np.asarray(t) * 1e6 for t in times])  # ranks x iterations of Overall
    means = np.array(ctx.own.all) * 1e6  # ranks x (pure, cpu, init, test, wait)
    overall = ranks.mean(axis=1)
    per = list(ranks.mean(axis=0))
    v = {
        "t_ovrl": float(overall.mean()),
        "t_pure": float(means[:, 0].mean()),
        "t_pure_min": float(means[:, 0].min()),
        "t_pure_max": float(means[:, 0].max()),
    }
    v.update({f"t_{k}": float(means[:, j + 1].mean()) for j, k in enumerate(PARTS)})
    v["overlap"] = (
        max(0.0, 100.0 - 100.0 * (v["t_ovrl"] - v["t_cpu"]) / v["t_pure"])
        if v["t_pure"] > 0
        else 0.0
    )
    v.update(
        t=v["t_ovrl"],
        t_avg=v["t_ovrl"],
        t_min=float(overall.min()),
        t_max=float(overall.max()),
        iter_min=min(per),
        iter_max=max(per),
        iter_median=float(np.median(per)),
    )
    v.update({f"t_p{p}": percentile(per, p) for p in s.percentiles})
    return v


def extra(ctx, s, ex) -> dict:
    return {
        "metric": "nbc",
        "test_calls": int(s.test_calls or 0),
        "gathered": True,
        "mem_limit": mem_limit(s),
    } | ({"full": True} if s.full else {})  # -f, as the blocking collectives record it
