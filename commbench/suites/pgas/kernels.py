"""The timed kernels of the PGAS tests: each returns (t2 - t1) / N of its loop.

Puts complete with MPI_Win_flush, gets with MPI_Win_flush_local. Everything a
loop needs (window methods, buffer specs, the random plan, the notifier) is
made before its clock starts.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
from mpi4py import MPI

from commbench.suites.pgas import random_slots, slot_len
from commbench.suites.pgas.segment import SegmentRow, random_draws


def _notifier(ctx) -> tuple[Callable[[], None], Callable[[], None]]:
    """'Synchronize with target' and 'wait for partner' of put-put / get-get.

    p2p: a one-sided notification like the SHMEM reference's shmem_int_inc /
    shmem_int_wait. Each process has a counter in a flag window; notify PUTs
    the next count into the partner's counter and flushes; wait polls its own
    counter (MPI_Win_sync, then a load: the unified memory model) until it
    equals the count it expects, calling MPI_Iprobe between polls: MPI_Win_sync
    is only a memory barrier, and a library whose puts need the target's
    progress (Debian's MPICH 4.0.2, ch4:ucx, on one node) completes the
    partner's put only while this rank is in a call that must progress (a
    repeated test or probe, weak progress); with Win_sync alone the partner
    sat in MPI_Win_flush for good. Testing for equality is safe against a torn
    read of a concurrent put, and the protocol never lets the partner run more
    than one notification ahead. The data operation was flushed before the
    notification, so a raised flag means the put has landed (or the get has
    finished reading). An atomic MPI_Accumulate / MPI_Fetch_and_op flag worked
    too, but took 6-16 ms per round trip here against tens of microseconds
    (MPICH may send the atomics through its active-message path, which waits
    for the target's progress engine); benchmarks/pgas_choices.py compares.
    barrier: MPI_Barrier of the whole group, the reference's other variant.
    """
    st: SegmentRow = ctx.own
    if st.settings.sync == "barrier":
        b = ctx.comm.Barrier
        return b, b  # lower: op, B, B; upper: B, op, B (the reference's barrier variant)
    flag, part = st.flag, st.partner
    put, flush, sync = flag.Put, flag.Flush, flag.Sync
    mine = st.flag_mem
    out = np.zeros(1, np.int64)
    origin, spec = [out, 1, MPI.INT64_T], (0, 1, MPI.INT64_T)
    yield_cpu = os.sched_yield
    probe, anyone, anytag = ctx.comm.Iprobe, MPI.ANY_SOURCE, MPI.ANY_TAG

    def notify() -> None:
        st.sent += 1
        out[0] = st.sent
        put(origin, part, spec)
        flush(part)

    def wait() -> None:
        st.seen += 1
        want = st.seen
        sync()
        while mine[0] != want:
            probe(anyone, anytag)  # progress: the partner's put may need it
            yield_cpu()  # oversubscribed nodes: let the partner run
            sync()

    return notify, wait


# ---------------------------------------------------------------- latency kernels


def _specs(ctx):
    st: SegmentRow = ctx.own
    x = ctx.x
    src = [ctx.sbuf[:x], MPI.BYTE]
    dst = [ctx.rbuf[:x], MPI.BYTE]
    return st.win, st.partner, src, dst, (0, x, MPI.BYTE), (st.seg.s_off, x, MPI.BYTE)


def putget_latency(ctx, n):
    """Lower rank of each pair: PUT to the partner, then GET from it, N times."""
    if not ctx.own.lower:
        return -1.0
    win, part, src, dst, r_at, s_at = _specs(ctx)
    put, get, flush, flush_local = win.Put, win.Get, win.Flush, win.Flush_local
    t0 = MPI.Wtime()
    for _ in range(n):
        put(src, part, r_at)
        flush(part)
        get(dst, part, s_at)
        flush_local(part)
    return (MPI.Wtime() - t0) / n


def pingpong_kernel(is_put: bool):
    def kernel(ctx, n):
        win, part, src, dst, r_at, s_at = _specs(ctx)
        if is_put:
            op, buf, at, done = win.Put, src, r_at, win.Flush
        else:
            op, buf, at, done = win.Get, dst, s_at, win.Flush_local
        notify, wait = _notifier(ctx)
        if ctx.own.lower:
            t0 = MPI.Wtime()
            for _ in range(n):
                op(buf, part, at)
                done(part)
                notify()  # synchronize with target
                wait()  # wait for the partner to do the same to me
            return (MPI.Wtime() - t0) / n
        t0 = MPI.Wtime()
        for _ in range(n):
            wait()
            op(buf, part, at)
            done(part)
            notify()
        return (MPI.Wtime() - t0) / n

    return kernel


# ---------------------------------------------------------------- bandwidth kernels


def _put_stream(win, part, src, at, n):
    """N PUTs to the partner, one MPI_Win_flush completes them."""
    put = win.Put
    t0 = MPI.Wtime()
    for _ in range(n):
        put(src, part, at)
    win.Flush(part)
    return (MPI.Wtime() - t0) / n


def _get_stream(win, part, dst, at, n):
    """N blocking GETs from the partner (each completed by MPI_Win_flush_local, as in SHMEM)."""
    get, flush_local = win.Get, win.Flush_local
    t0 = MPI.Wtime()
    for _ in range(n):
        get(dst, part, at)
        flush_local(part)
    return (MPI.Wtime() - t0) / n


def _pair_stream(ctx, n, put: bool):
    win, part, src, dst, r_at, s_at = _specs(ctx)
    return _put_stream(win, part, src, r_at, n) if put else _get_stream(win, part, dst, s_at, n)


def put_bw(ctx, n):
    """Lower rank of each pair PUTs M bytes to its partner N times; one flush completes them."""
    return _pair_stream(ctx, n, True) if ctx.own.lower else -1.0


def get_bw(ctx, n):
    """Lower rank of each pair GETs M bytes from its partner N times (blocking gets, as in
    SHMEM)."""
    return _pair_stream(ctx, n, False) if ctx.own.lower else -1.0


def put_bidir_bw(ctx, n):
    """Both processes of every pair PUT M bytes to each other N times."""
    return _pair_stream(ctx, n, True)


def get_bidir_bw(ctx, n):
    """Both processes of every pair GET M bytes from each other N times."""
    return _pair_stream(ctx, n, False)


# ---------------------------------------------------------------- strided kernels


def strided_put_bw(ctx, n):
    """Lower rank PUTs M bytes (M/4 floats) to its partner with stride S, N times."""
    st: SegmentRow = ctx.own
    return _put_stream(st.win, st.partner, st.origin, st.target, n) if st.lower else -1.0


def strided_get_bw(ctx, n):
    """Lower rank GETs M bytes (M/4 floats) from its partner with stride S, N times."""
    st: SegmentRow = ctx.own
    return _get_stream(st.win, st.partner, st.origin, st.target, n) if st.lower else -1.0


# ---------------------------------------------------------------- random kernels


def _random_plan(ctx, n: int, region: bool) -> list[tuple[int, tuple]]:
    st: SegmentRow = ctx.own
    s = st.settings
    slot = slot_len(ctx.x)
    k = random_slots(ctx.x, s.span)
    targets, slots = random_draws(s.seed, ctx.world_rank, ctx.rank, ctx.size, k, n)
    base = ctx.rank * k * slot if region else st.seg.s_off
    st.max_n = max(st.max_n, n)
    st.last_target = int(targets[-1]) if n else None
    x, BYTE = ctx.x, MPI.BYTE
    return [(int(t), (base + int(j) * slot, x, BYTE)) for t, j in zip(targets, slots)]


def random_put_bw(ctx, n):
    """Every process PUTs M bytes to a random slot at a random other process, N times."""
    plan = _random_plan(ctx, n, region=True)
    win = ctx.own.win
    put = win.Put
    src = [ctx.sbuf[: ctx.x], MPI.BYTE]
    t0 = MPI.Wtime()
    for target, at in plan:
        put(src, target, at)
    win.Flush_all()
    return (MPI.Wtime() - t0) / n


def random_get_bw(ctx, n):
    """Every process GETs M bytes from a random slot at a random other process, N times."""
    plan = _random_plan(ctx, n, region=False)
    win = ctx.own.win
    get, flush_local = win.Get, win.Flush_local
    dst = [ctx.rbuf[: ctx.x], MPI.BYTE]
    t0 = MPI.Wtime()
    for target, at in plan:
        get(dst, target, at)
        flush_local(target)
    return (MPI.Wtime() - t0) / n


# ---------------------------------------------------------------- reductions


def reduction_separate(ctx, n):
    """Sum-to-all of M/4 ints into a non-overlapping target buffer, N times."""
    op, SUM = ctx.comm.Allreduce, MPI.SUM
    count = ctx.x // 4
    src, dst = [ctx.sbuf[: 4 * count], count, MPI.INT], [ctx.rbuf[: 4 * count], count, MPI.INT]
    t0 = MPI.Wtime()
    for _ in range(n):
        op(src, dst, SUM)
    return (MPI.Wtime() - t0) / n


def reduction_inplace(ctx, n):
    """Sum-to-all of M/4 ints back into the same source buffer, N times."""
    op, SUM, IN_PLACE = ctx.comm.Allreduce, MPI.SUM, MPI.IN_PLACE
    count = ctx.x // 4
    buf = [ctx.rbuf[: 4 * count], count, MPI.INT]
    t0 = MPI.Wtime()
    for _ in range(n):
        op(IN_PLACE, buf, SUM)
    t = (MPI.Wtime() - t0) / n
    ctx.own.done += n
    return t
