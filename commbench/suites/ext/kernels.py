"""IMB-EXT's kernels and verifiers (the family and its descriptors: the catalog,
commbench.suites.ext)."""

from __future__ import annotations

from mpi4py import MPI

from commbench import buffers
from commbench.suites import onesided as osd
from commbench.suites.ext import AGG
from commbench.suites.verify import check_slots


def _epochs(ctx, n: int, call, args: list | None, fenced: bool = False) -> float:
    """The timed loop of one rank: its transfers (args per slot, None: no role) and fences.
    fenced: every epoch opened by fence(MPI_MODE_NOPRECEDE) and closed by
    fence(MPI_MODE_NOSUCCEED), IMB-EXT 2021.11's Accumulate; else one fence(0) closes an
    epoch and opens the next (spec §6.5)."""
    fence = ctx.win.Fence
    close = MPI.MODE_NOSUCCEED if fenced else 0
    open_ = (lambda: fence(MPI.MODE_NOPRECEDE)) if fenced else (lambda: None)
    if ctx.mode == AGG:
        t0 = MPI.Wtime()
        open_()
        if args is not None:
            for a in osd.reps(n, args, ctx.first):
                call(*a)
        fence(close)
        t = (MPI.Wtime() - t0) / n
    elif args is not None:
        t0 = MPI.Wtime()
        for a in osd.reps(n, args, ctx.first):
            open_()
            call(*a)
            fence(close)
        t = (MPI.Wtime() - t0) / n
    else:
        t0 = MPI.Wtime()
        for _ in range(n):
            open_()
            fence(close)
        t = (MPI.Wtime() - t0) / n
    if ctx.cfg.check:
        osd.count_uses(ctx, n)
    return t


# ---------------------------------------------------------------- Put / Get


def put(bidir: bool):
    def kernel(ctx, n):
        partner = 1 - ctx.rank
        args = None
        if ctx.rank == 0 or bidir:
            args = [(s, partner, d) for s, d in zip(ctx.send_specs(), ctx.disps)]
        return _epochs(ctx, n, ctx.win.Put, args)

    return kernel


def get(bidir: bool):
    def kernel(ctx, n):
        partner = 1 - ctx.rank
        args = None
        if ctx.rank == 1 or bidir:  # reference: rank 1 gets from rank 0
            args = [(r, partner, d) for r, d in zip(ctx.recv_specs(), ctx.disps)]
        return _epochs(ctx, n, ctx.win.Get, args)

    return kernel


def check_pair(bidir: bool, receiver: int):
    """What arrived: the partner's pattern in every used slot of the receiving rank(s)."""

    def expected(ctx, n):
        if not bidir and ctx.rank != receiver:
            return None
        exp = buffers.pattern(ctx.members[1 - ctx.rank], ctx.x, ctx.bench.dtype)
        return check_slots(ctx, n, lambda k: [(0, exp)])

    return expected


# ---------------------------------------------------------------- Accumulate


def accumulate(ctx, n):
    # Every active rank adds L = X/4 floats into rank 0's window, slot i (A1).
    args = [(s, 0, d, MPI.SUM) for s, d in zip(ctx.send_specs(dtype=MPI.FLOAT), ctx.disps)]
    return _epochs(ctx, n, ctx.win.Accumulate, args, ctx.cfg.method.fenced_accumulate)


def check_accumulate(ctx, n):
    if ctx.rank != 0:
        return None
    uses = ctx.uses  # repetitions per slot over every run of this size
    one = {}

    def expect(k):
        c = int(uses[k])
        if c not in one:
            one[c] = osd.scaled(ctx.members, ctx.x, c)
        return [(0, one[c])]

    dev = check_slots(ctx, n, expect)
    # spec §15: EXT Accumulate resets the target area after each verification
    ctx.rbuf[:] = 0
    uses[:] = 0
    return dev


# ---------------------------------------------------------------- Window


def window(ctx, n):
    create, info, comm = MPI.Win.Create, osd.user_set_info(ctx), ctx.comm
    mem = ctx.rbuf[: ctx.x]
    one = [ctx.sbuf[:1], MPI.BYTE]
    me, x = ctx.rank, ctx.x
    t0 = MPI.Wtime()
    for _ in range(n):
        win = create(mem, 1, info, comm)
        win.Fence(0)
        if x > 0:  # a negligible real action inside the window (A20)
            win.Put(one, me, 0)
        win.Fence(0)
        win.Free()
    return (MPI.Wtime() - t0) / n
