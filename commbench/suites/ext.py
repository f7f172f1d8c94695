"""IMB-EXT: MPI-2 one-sided communication, active target (spec §9).

"Assured completion" is MPI_Win_fence(0). Unidir_*/Bidir_*/Accumulate run an
AGGREGATE table (n transfers to disjoint window slots, then one fence) and a
NON-AGGREGATE table (a fence after every transfer); ranks without a transfer
role execute the same fences. The window is created per size over the receive
buffer (Put, Accumulate) or the send buffer (Get) and opened with a fence in
the descriptor's setup (spec §6.5); Window creates its own windows inside the
timed loop. All EXT sizes are multiples of 4 (spec §4). Every benchmark has a C
timed loop (native patterns ext_*, commbench/native/kernels.c) making the same calls.
"""

from __future__ import annotations

from mpi4py import MPI

from commbench import buffers
from commbench.suites import onesided as osd
from commbench.suites.base import TWO, Benchmark, Family, Kind, xp
from commbench.suites.verify import check_slots

F = "ext"
AGG, NONAGG = "AGGREGATE", "NON-AGGREGATE"
MODES = (AGG, NONAGG)  # aggregate first (spec §9)


def _epochs(ctx, n: int, call, args: list | None) -> float:
    """The timed loop of one rank: its transfers (args per slot, None: no role) and fences."""
    fence = ctx.win.Fence
    if ctx.mode == AGG:
        t0 = MPI.Wtime()
        if args is not None:
            for a in osd.reps(n, args, ctx.first):
                call(*a)
        fence(0)
        t = (MPI.Wtime() - t0) / n
    elif args is not None:
        t0 = MPI.Wtime()
        for a in osd.reps(n, args, ctx.first):
            call(*a)
            fence(0)
        t = (MPI.Wtime() - t0) / n
    else:
        t0 = MPI.Wtime()
        for _ in range(n):
            fence(0)
        t = (MPI.Wtime() - t0) / n
    if ctx.cfg.check:
        osd.count_uses(ctx, n)
    return t


# ---------------------------------------------------------------- Put / Get


def _put(bidir: bool):
    def kernel(ctx, n):
        partner = 1 - ctx.rank
        args = None
        if ctx.rank == 0 or bidir:
            args = [(s, partner, d) for s, d in zip(ctx.send_specs(), ctx.disps)]
        return _epochs(ctx, n, ctx.win.Put, args)

    return kernel


def _get(bidir: bool):
    def kernel(ctx, n):
        partner = 1 - ctx.rank
        args = None
        if ctx.rank == 1 or bidir:  # reference: rank 1 gets from rank 0
            args = [(r, partner, d) for r, d in zip(ctx.recv_specs(), ctx.disps)]
        return _epochs(ctx, n, ctx.win.Get, args)

    return kernel


def _check_pair(bidir: bool, receiver: int):
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
    return _epochs(ctx, n, ctx.win.Accumulate, args)


def _check_accumulate(ctx, n):
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


# ---------------------------------------------------------------- descriptors


def _pair(name, kernel, over, expected, desc):
    native = "ext_" + name.split("_")[1].lower() + ("_bidir" if name.startswith("Bidir") else "")
    return Benchmark(
        name,
        F,
        Kind.SINGLE,
        kernel,
        desc,
        unit=4,
        procs=TWO,
        modes=MODES,
        slots=True,
        setup=osd.setup_window(over, 1, fence=True),
        teardown=osd.free_window,
        expected=expected,
        fit=True,
        native=native,
    )


BENCHMARKS = (
    Benchmark(
        "Window",
        F,
        Kind.COLLECTIVE,
        window,
        "MPI_Win_create(X) / fence / 1-byte put to self / fence / MPI_Win_free on all ranks",
        buffers=lambda x, np_: (xp(x), xp(x)),
        unit=4,
        nonaggr_cap=True,
        native="ext_window",
    ),  # no verifier: spec §14.3 gives Window no defects column
    _pair(
        "Unidir_Get",
        _get(False),
        osd.GET,
        _check_pair(False, 1),
        "rank 1 MPI_Get of X bytes from rank 0's window, fence completion",
    ),
    _pair(
        "Unidir_Put",
        _put(False),
        osd.PUT,
        _check_pair(False, 1),
        "rank 0 MPI_Put of X bytes into rank 1's window, fence completion",
    ),
    _pair(
        "Bidir_Get",
        _get(True),
        osd.GET,
        _check_pair(True, 1),
        "both ranks MPI_Get X bytes from each other, fence completion",
    ),
    _pair(
        "Bidir_Put",
        _put(True),
        osd.PUT,
        _check_pair(True, 1),
        "both ranks MPI_Put X bytes into each other's window, fence completion",
    ),
    Benchmark(
        "Accumulate",
        F,
        Kind.COLLECTIVE,
        accumulate,
        "every rank MPI_Accumulate of X/4 floats (MPI_SUM) into rank 0's window, fence completion",
        unit=4,
        modes=MODES,
        slots=True,
        setup=osd.setup_window(osd.PUT, 4, fence=True),
        teardown=osd.free_window,
        expected=_check_accumulate,
        native="ext_accumulate",
    ),
)

_ORDER = ["Window", "Unidir_Get", "Unidir_Put", "Bidir_Get", "Bidir_Put", "Accumulate"]

FAMILY = Family(
    name=F,
    title="IMB-EXT",
    part="MPI-2 part",
    benchmarks=BENCHMARKS,
    description=(
        "MPI-2 one-sided communication, active target "
        "with MPI_Win_fence (Intel MPI Benchmarks EXT part)"
    ),
    aliases=("IMB-EXT",),
    alloc="mpi",  # spec §6.1: one-sided buffers SHOULD come from MPI_Alloc_mem; --alloc overrides
)
