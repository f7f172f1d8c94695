"""How the osu driver runs a benchmark's loop on an engine: the mpi4py loop or the group's C
loop (commbench/native/osu_<group>.c), and -c's validated rounds on either.

What OSU runs back to back runs in one C call: the per-size MPI_Barrier, the warm-up and
the timed iterations (osu.h's cbosu_sequence), and under -c all the rounds of a size, each
the buffers refilled, an MPI_Barrier, -u + 1 repetitions and the check (cbosu_run_rounds).
With Python between (a barrier called from Python, numpy's fill and check around every
round), `latency -c -u 0` read 4-10 x osu_latency -c -u 0 on a loaded machine: each
round lasted tens of microseconds longer than OSU's, so far more of them were hit by a
rank's descheduling, which a timed repetition right after the barrier then absorbs.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from mpi4py import MPI

from commbench.native import osu as native_osu
from commbench.suites.osu.context import OsuCtx
from commbench.suites.osu.settings import INT_MAX
from commbench.suites.osu.spec import OsuBenchmark


def loop(
    bench: OsuBenchmark, ctx: OsuCtx, runner, n: int, times, barrier: bool = False, warm: int = -1
) -> None:
    """n iterations on the engine: the mpi4py loop, or the group's C loop; before them an
    MPI_Barrier (barrier) and `warm` untimed iterations (warm >= 0), which the C engine
    runs in the same C call as the timed ones."""
    if runner is None:
        if barrier:
            ctx.comm.Barrier()
        if warm >= 0:
            bench.loop(ctx, warm, None)
        bench.loop(ctx, n, times)
        return
    a, keep = arguments(bench, ctx, max(n, warm), times)
    a.n = n
    runner.loop(bench.native, a, barrier, warm)
    del keep


def arguments(bench: OsuBenchmark, ctx: OsuCtx, n: int, times) -> tuple:
    """The C loop's argument block for n iterations (and what it points into, to keep)."""
    ints = dict(
        n=n,
        count=ctx.count,
        window=ctx.window,
        peer=ctx.peer,
        timer=int(ctx.timer),
        **dataclasses.asdict(ctx.ints),
    )
    if max(ints.values()) > INT_MAX:  # the options and checks.validate refuse them: never wrapped
        raise ValueError(
            f"osu: a count past the C loops' int ({INT_MAX}) reached {bench.name}: {ints}"
        )
    a, keep = native_osu.pack(ctx.comm, ctx.mpi_type, ctx.sbuf, ctx.rbuf, ctx.abuf, **ints)
    return native_osu.with_times(a, times), keep


def checked_rounds(
    bench: OsuBenchmark,
    ctx: OsuCtx,
    runner,
    size: int,
    warm: int,
    out,
    reps: int,
    barrier: bool = True,
    always: bool = False,
    keep=None,
) -> int:
    """warm + len(out) rounds of OSU's -c: the buffers filled (ctx.fill, bench.refill), an
    MPI_Barrier (barrier; else the loop's own), `reps` repetitions (the last one's seconds in
    out[round - warm] after the warm-up; `always`: the loop is given times in every round),
    then this rank's check (bench.verify). keep: (source, rows) to copy after each timed
    round (rows[round - warm] = source). This rank's wrong bytes."""
    if barrier:  # OSU's MPI_Barrier of the size, before its first round (untimed)
        ctx.comm.Barrier()
    if runner is not None:
        return native_rounds(bench, ctx, runner, size, warm, out, reps, barrier, always, keep)
    each, wrong = np.zeros(reps), 0
    for i in range(warm + len(out)):
        ctx.fill(size)
        if bench.refill is not None:
            bench.refill(ctx, size)
        loop(bench, ctx, runner, reps, each if i >= warm or always else None, barrier=barrier)
        if i >= warm:
            out[i - warm] = each[-1]
            if keep is not None:
                keep[1][i - warm] = keep[0]
        wrong += bench.verify(ctx, size)
        if bench.verdict:  # the receiver's verdict to the sender, as the binary sends it
            v = np.zeros(1, dtype=np.intc)
            (ctx.comm.Recv if ctx.timer else ctx.comm.Send)([v, MPI.INT], ctx.peer, bench.verdict)
    return wrong


def native_rounds(
    bench: OsuBenchmark,
    ctx: OsuCtx,
    runner,
    size: int,
    warm: int,
    out,
    reps: int,
    barrier: bool,
    always: bool,
    keep,
) -> int:
    """The rounds in C (osu.h's cbosu_run_rounds): the buffers as fill and refill leave them
    are restored before every round; a round whose received bytes equal a checked round's has
    that round's count of wrong bytes, any other comes back to be checked here."""
    ctx.fill(size)
    if bench.refill is not None:
        bench.refill(ctx, size)
    ks, kr = bench.extent(ctx.p, ctx.s) if bench.extent is not None else (1, 1)
    spre, rpre = ctx.sbuf[: ks * ctx.nbytes].copy(), ctx.rbuf[: kr * ctx.nbytes].copy()
    src, rows = keep if keep is not None else (None, None)
    total, first, wrong, post, k_post = warm + len(out), 0, 0, None, 0
    a, hold = arguments(bench, ctx, reps, None)
    while first < total:
        k = native_osu.Rounds(
            first=first,
            total=total,
            warm=warm,
            slen=spre.size,
            rlen=rpre.size,
            spre=spre.ctypes.data,
            rpre=rpre.ctypes.data,
            rpost=post.ctypes.data if post is not None else None,
            out=out.ctypes.data,
            keep_src=src.ctypes.data if src is not None else None,
            keep_dst=rows.ctypes.data if rows is not None else None,
            reps=reps,
            barrier=int(barrier),
            always=int(always),
            keep_n=src.size if src is not None else 0,
            verdict=bench.verdict,
        )
        last = runner.rounds(bench.native, a, k)  # rounds first … last - 1 matched post
        wrong += (last - first) * k_post
        if last >= total:
            break
        k_post = bench.verify(ctx, size)
        wrong, post, first = wrong + k_post, ctx.rbuf[: rpre.size].copy(), last + 1
    del hold
    return wrong
