"""IMB-RMA: MPI-3 one-sided communication, passive target (spec §12).

Common frame of every kernel: the origin(s) lock the target(s) (shared lock,
or lock_all), time the pattern, unlock; then all members meet in
MPI_Barrier(MY_COMM). Targets make no RMA calls — they wait in that barrier —
and return a negative time, which the records leave out of min/max/avg.
"Agg" benchmarks run NON-AGGREGATE (a completion call after every operation)
then AGGREGATE (n operations to disjoint slots, one completion call).
The window is created per size in the descriptor's setup, without a fence.
"""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

from commbench import buffers, cpu
from commbench.suites import onesided as osd
from commbench.suites.base import TWO, Benchmark, Family, Kind, xp
from commbench.suites.verify import check_slots, worst

F = "rma"
AGG, NONAGG = "AGGREGATE", "NON-AGGREGATE"
MODES = (NONAGG, AGG)  # non-aggregate first [ref order] (spec §12)
NO_TIME = -1.0


# ---------------------------------------------------------------- argument lists per slot
# Each builder returns, per slot k, the argument tuple of one RMA call towards
# `target`; the timed loops only unpack prebuilt tuples.


def _put_args(ctx, target):
    return [(s, target, d) for s, d in zip(ctx.send_specs(), ctx.disps)]


def _get_args(ctx, target):
    return [(r, target, d) for r, d in zip(ctx.recv_specs(), ctx.disps)]


def _acc_args(ctx, target):
    return [(s, target, d, MPI.SUM) for s, d in zip(ctx.send_specs(dtype=MPI.FLOAT), ctx.disps)]


def _getacc_args(ctx, target):
    return [
        (s, r, target, d, MPI.SUM)
        for s, r, d in zip(
            ctx.send_specs(dtype=MPI.FLOAT), ctx.recv_specs(dtype=MPI.FLOAT), ctx.disps
        )
    ]


def _fop_args(ctx, target):
    return [
        (s, r, target, d, MPI.SUM)
        for s, r, d in zip(
            ctx.send_specs(4, dtype=MPI.FLOAT),
            ctx.recv_specs(4, dtype=MPI.FLOAT),
            ctx.disps,
        )
    ]


def _cas_args(ctx, target):
    # origin, compare and result values live in the origin's receive slot:
    # result @0, compare @4, origin @8 (spec §12)
    res = ctx.recv_specs(4, 0, MPI.INT)
    cmp_ = ctx.recv_specs(4, 4, MPI.INT)
    org = ctx.recv_specs(4, 8, MPI.INT)
    return [(o, c, r, target, d) for o, c, r, d in zip(org, cmp_, res, ctx.disps)]


OPS = {  # name -> (MPI.Win method, argument builder, window over, the native patterns' stem)
    "put": ("Put", _put_args, osd.PUT, "rma_put"),
    "get": ("Get", _get_args, osd.GET, "rma_get"),
    "acc": ("Accumulate", _acc_args, osd.PUT, "rma_accumulate"),
    "getacc": ("Get_accumulate", _getacc_args, osd.PUT, "rma_get_accumulate"),
    "fop": ("Fetch_and_op", _fop_args, osd.PUT, "rma_fetch_and_op"),
    "cas": ("Compare_and_swap", _cas_args, osd.PUT, "rma_compare_and_swap"),
}


def _args(ctx, op: str, target: int) -> list:
    key = (op, target)
    got = ctx.prebuilt.get(key)
    if got is None:
        got = ctx.prebuilt[key] = OPS[op][1](ctx, target)
    return got


def _done(ctx, n: int) -> None:
    ctx.comm.Barrier()  # targets wait here while the origin works
    if ctx.cfg.check:
        osd.count_uses(ctx, n)


# ---------------------------------------------------------------- single transfer (pair)


def _pair(op: str, completion: str, bidir: bool):
    """Unidir/Bidir put/get, Put_local/Get_local, Accumulate, Get_accumulate, Fetch_and_op, CAS."""
    method = OPS[op][0]

    def kernel(ctx, n):
        me = ctx.rank
        t = NO_TIME
        if op == "cas" and me == 0:
            _cas_values(ctx)  # --engine both: the second engine finds the receive buffer cleared
        if me == 0 or bidir:
            partner = 1 - me
            win = ctx.win
            call, done = getattr(win, method), getattr(win, completion)
            items = osd.reps(n, _args(ctx, op, partner), ctx.first)
            win.Lock(partner, MPI.LOCK_SHARED)
            if ctx.mode == AGG:
                t0 = MPI.Wtime()
                for a in items:
                    call(*a)
                done(partner)
                t = (MPI.Wtime() - t0) / n
            else:
                t0 = MPI.Wtime()
                for a in items:
                    call(*a)
                    done(partner)
                t = (MPI.Wtime() - t0) / n
            win.Unlock(partner)
        _done(ctx, n)
        return t

    return kernel


# ---------------------------------------------------------------- one/all to all


def _targets(me: int, size: int) -> list[int]:
    """(p + rank) % NP for p = 0..NP-1, skipping itself: staggered, no hot spot."""
    return [t for t in ((p + me) % size for p in range(size)) if t != me]


def _to_all(op: str, completion: str, everyone: bool):
    """One_put_all/One_get_all (rank 0), Put_all_local/Get_all_local, All_put_all/All_get_all."""
    method = OPS[op][0]

    def kernel(ctx, n):
        me = ctx.rank
        t = NO_TIME
        if me == 0 or everyone:
            win = ctx.win
            call, done = getattr(win, method), getattr(win, completion)
            per_target = [_args(ctx, op, tgt) for tgt in _targets(me, ctx.size)]
            per_slot = [[args[k] for args in per_target] for k in range(ctx.slots)]
            items = osd.reps(n, per_slot, ctx.first)
            win.Lock_all(0)
            t0 = MPI.Wtime()
            for batch in items:
                for a in batch:
                    call(*a)
            done()  # one completion after all n repetitions (A10)
            t = (MPI.Wtime() - t0) / n
            win.Unlock_all()
        _done(ctx, n)
        return t

    return kernel


# ---------------------------------------------------------------- exchange


def _exchange(op: str):
    method = OPS[op][0]

    def kernel(ctx, n):
        me, size, x = ctx.rank, ctx.size, ctx.x
        left, right = (me - 1) % size, (me + 1) % size
        win = ctx.win
        call, flush = getattr(win, method), win.Flush
        disps = ctx.disps
        if op == "put":  # send[0:X] -> left at slot, send[X:2X] -> right at slot+X
            first = [(s, left, d) for s, d in zip(ctx.send_specs(), disps)]
            second = [(s, right, d + x) for s, d in zip(ctx.send_specs(offset=x), disps)]
        else:  # right's send[0:X] -> recv[0:X], left's send[X:2X] -> recv[X:2X]
            first = [(r, right, d) for r, d in zip(ctx.recv_specs(), disps)]
            second = [(r, left, d + x) for r, d in zip(ctx.recv_specs(offset=x), disps)]
        items = osd.reps(n, list(zip(first, second)), ctx.first)
        two = left != right
        win.Lock(left, MPI.LOCK_SHARED)
        if two:
            win.Lock(right, MPI.LOCK_SHARED)
        t0 = MPI.Wtime()
        if two:
            for a, b in items:
                call(*a)
                call(*b)
                flush(left)
                flush(right)
        else:  # two processes: both transfers go to the one neighbour
            for a, b in items:
                call(*a)
                call(*b)
                flush(left)
        t = (MPI.Wtime() - t0) / n
        win.Unlock(left)
        if two:
            win.Unlock(right)
        _done(ctx, n)
        return t

    return kernel


# ---------------------------------------------------------------- Truly_passive_put


def _passive_setup(ctx):
    from commbench import native

    osd.create_window(ctx, osd.PUT)
    cpu.shared(ctx.cfg.method.cpu_matrix)  # calibrate the CPU kernel outside any timing
    native.calibrate_cpu(ctx.cfg.method.cpu_matrix)  # and the native engine's, where it runs


def truly_passive_put(ctx, n):
    """Put+flush+barrier while the target waits in MPI (t_pure), then while it computes (t_ovrl).

    Returns (t_pure, t_ovrl, t_cpu) on the origin; t_cpu is the target's
    computation per repetition, kept in the records next to the two printed
    columns so a reader can tell whether it matched t_pure.
    """
    win, comm = ctx.win, ctx.comm
    barrier = comm.Barrier
    box = np.zeros(1, dtype=np.float64)
    if ctx.rank == 0:
        put, flush = win.Put, win.Flush
        args = _args(ctx, "put", 1)
        win.Lock(1, MPI.LOCK_SHARED)
        t0 = MPI.Wtime()
        for a in osd.reps(n, args):
            put(*a)
            flush(1)
            barrier()
        t_pure = (MPI.Wtime() - t0) / n
        box[0] = t_pure
        comm.Send([box, MPI.DOUBLE], 1, 2)
        barrier()
        t0 = MPI.Wtime()
        for a in osd.reps(n, args):
            put(*a)
            flush(1)
            barrier()
        t_ovrl = (MPI.Wtime() - t0) / n
        win.Unlock(1)
        comm.Recv([box, MPI.DOUBLE], 1, 3)
        out = (t_pure, t_ovrl, float(box[0]))
    else:
        for _ in range(n):
            barrier()
        comm.Recv([box, MPI.DOUBLE], 0, 2)
        kernel = cpu.shared(ctx.cfg.method.cpu_matrix)
        t_cpu = float(box[0])
        kernel.exploit(t_cpu, True)  # size the computation to one pure put
        barrier()
        work = kernel.exploit
        spent = 0.0
        for _ in range(n):
            spent += work(t_cpu, False)
            barrier()
        # what the target really computed per repetition (the kernel's smallest
        # amount of work can exceed a short t_pure): recorded as t_cpu, not printed
        box[0] = spent / n
        comm.Send([box, MPI.DOUBLE], 0, 3)
        out = (NO_TIME, NO_TIME, NO_TIME)
    _done(ctx, n)
    return out


# ---------------------------------------------------------------- check mode (spec §15)


def _pat(ctx, group_rank: int, nbytes: int | None = None) -> np.ndarray:
    return buffers.pattern(
        ctx.members[group_rank], ctx.x if nbytes is None else nbytes, ctx.bench.dtype
    )


def _arrived(receivers, source):
    """Put targets / get origins hold the source's pattern in every used slot."""

    def expected(ctx, n):
        me = ctx.rank
        if me not in receivers(ctx):
            return None
        if not op_is_get(ctx):  # get origins read their own buffer, complete after the flush
            osd.sync_local(ctx)
        exp = _pat(ctx, source(ctx))
        return check_slots(ctx, n, lambda k: [(0, exp)])

    return expected


def op_is_get(ctx) -> bool:
    return ctx.bench.variant == osd.GET


def _from_one_of(receivers, sources):
    """Concurrent transfers into one area (One_get_all, All_*): one source's data survives.

    So a source whose data is wrong would pass whenever another's survived:
    after the timed data, every source's is verified once more, one source at a
    time, into slot 0 (onesided.each_source)."""

    def expected(ctx, n):
        mine = ctx.rank in receivers(ctx)
        timed = None
        cands = [_pat(ctx, s) for s in sources(ctx)] if mine else []
        if cands:
            if not op_is_get(ctx):
                osd.sync_local(ctx)
            stride = ctx.bufs.recv_stride
            timed = osd.each_used_slot(
                ctx,
                n,
                lambda k: osd.one_of(osd.slot_area(ctx, ctx.rbuf, stride, k, 0, ctx.x), cands),
            )
        swept = osd.each_source(ctx, mine, _others(ctx), lambda s: _pat(ctx, s), op_is_get(ctx))
        return worst([timed, swept]) if cands else None

    return expected


def _check_exchange(ctx, n):
    if not op_is_get(ctx):
        osd.sync_local(ctx)
    x = ctx.x
    right, left = (ctx.rank + 1) % ctx.size, (ctx.rank - 1) % ctx.size
    exp = [(0, _pat(ctx, right)), (x, _pat(ctx, left, 2 * xp(x))[x : 2 * x])]
    return check_slots(ctx, n, lambda k: exp)


def _check_accumulate(fetches: bool, nbytes=None):
    """Target: uses×pattern of rank 0 per slot; origin (fetching ops): (uses−1)×pattern."""

    def expected(ctx, n):
        size = ctx.x if nbytes is None else nbytes
        uses = ctx.uses
        m0 = [ctx.members[0]]
        dev = None
        if ctx.rank == 1:
            osd.sync_local(ctx)
            dev = check_slots(ctx, n, lambda k: [(0, osd.scaled(m0, size, int(uses[k])))])
        elif fetches:
            dev = check_slots(ctx, n, lambda k: [(0, osd.scaled(m0, size, int(uses[k]) - 1))])
        osd.restart_uses(ctx)
        return dev

    return expected


def _cas_values(ctx):
    # The origin swaps in the first int of its send slot (so corrupted send data
    # is caught); compare value 0 = the target's initial contents.
    for k in range(ctx.slots):
        a, s = k * ctx.bufs.recv_stride, k * ctx.bufs.send_stride
        ctx.rbuf[a + 4 : a + 8] = 0
        ctx.rbuf[a + 8 : a + 12] = ctx.sbuf[s : s + 4]


def _cas_setup(ctx):
    if ctx.rank == 0:
        _cas_values(ctx)
    osd.create_window(ctx, osd.PUT, 4)


def _check_cas(ctx, n):
    value = _pat(ctx, 0, 4)
    zero = np.zeros(4, dtype=np.uint8)
    uses = ctx.uses
    stride = ctx.bufs.recv_stride
    if ctx.rank == 1:  # the first swap succeeded, later ones found a non-matching value
        osd.sync_local(ctx)
        dev = osd.each_used_slot(
            ctx, n, lambda k: osd.exact(osd.slot_area(ctx, ctx.rbuf, stride, k, 0, 4), value)
        )
    else:  # origin: the first result is the old value 0, later results the swapped-in value
        dev = osd.each_used_slot(
            ctx,
            n,
            lambda k: osd.exact(
                osd.slot_area(ctx, ctx.rbuf, stride, k, 0, 4), zero if uses[k] == 1 else value
            ),
        )
    osd.restart_uses(ctx)
    return dev


# ---------------------------------------------------------------- descriptors


def _r0(ctx):
    return (0,)


def _r1(ctx):
    return (1,)


def _both(ctx):
    return (0, 1)


def _partner(ctx):
    return 1 - ctx.rank


def _others(ctx):
    return [r for r in range(ctx.size) if r != ctx.rank]


def _not_r0(ctx):
    return tuple(range(1, ctx.size))


def _all(ctx):
    return tuple(range(ctx.size))


def _single(name, op, completion, bidir, expected, desc, default=True, unit=1, **kw):
    over = OPS[op][2]
    unit_disp = 4 if op in ("acc", "getacc", "fop", "cas") else 1
    return Benchmark(
        name,
        F,
        Kind.SINGLE,
        _pair(op, completion, bidir),
        desc,
        unit=unit,
        default=default,
        procs=TWO,
        modes=MODES,
        slots=True,
        setup=kw.pop("setup", osd.setup_window(over, unit_disp)),
        teardown=osd.free_window,
        expected=expected,
        variant=over,
        fit="fixed_sizes" not in kw,
        **kw,
        native=OPS[op][3]
        + ("_local" if completion == "Flush_local" else "")
        + ("_bidir" if bidir else ""),
    )


def _multiple(name, op, completion, expected, desc, default=True):
    over = OPS[op][2]
    return Benchmark(
        name,
        F,
        Kind.MULTIPLE,
        _to_all(op, completion, False),
        desc,
        default=default,
        turnover=lambda np_: float(np_ - 1),
        setup=osd.setup_window(over),
        teardown=osd.free_window,
        expected=expected,
        variant=over,
        native=OPS[op][3] + "_all" + ("_local" if completion == "Flush_local_all" else ""),
    )


def _all_to_all(name, op, expected, desc):
    over = OPS[op][2]
    return Benchmark(
        name,
        F,
        Kind.COLLECTIVE,
        _to_all(op, "Flush_all", True),
        desc,
        setup=osd.setup_window(over),
        teardown=osd.free_window,
        expected=expected,
        variant=over,
        native=f"rma_all_{op}_all",
    )


def _exchange_bench(name, op, desc):
    over = OPS[op][2]
    return Benchmark(
        name,
        F,
        Kind.COLLECTIVE,
        _exchange(op),
        desc,
        buffers=lambda x, np_: (2 * xp(x), 2 * xp(x)),
        setup=osd.setup_window(over),
        teardown=osd.free_window,
        expected=_check_exchange,
        variant=over,
        native=f"rma_exchange_{op}",
    )


PASSIVE_COMMENTS = (
    "The benchmark measures execution time of MPI_Put for 2 cases:",
    "1) The target is waiting in MPI_Barrier call (t_pure value)",
    "2) The target performs computation and then enters MPI_Barrier routine (t_ovrl value)",
)

BENCHMARKS = (
    _single(
        "Unidir_put",
        "put",
        "Flush",
        False,
        _arrived(_r1, lambda c: 0),
        "rank 0 MPI_Put of X bytes into rank 1, MPI_Win_flush",
    ),
    _single(
        "Unidir_get",
        "get",
        "Flush",
        False,
        _arrived(_r0, lambda c: 1),
        "rank 0 MPI_Get of X bytes from rank 1, MPI_Win_flush",
    ),
    _single(
        "Bidir_put",
        "put",
        "Flush",
        True,
        _arrived(_both, _partner),
        "both ranks MPI_Put X bytes into each other, MPI_Win_flush",
    ),
    _single(
        "Bidir_get",
        "get",
        "Flush",
        True,
        _arrived(_both, _partner),
        "both ranks MPI_Get X bytes from each other, MPI_Win_flush",
    ),
    _multiple(
        "One_put_all",
        "put",
        "Flush_all",
        _arrived(_not_r0, lambda c: 0),
        "rank 0 MPI_Put of X bytes to every other rank, one MPI_Win_flush_all",
    ),
    _multiple(
        "One_get_all",
        "get",
        "Flush_all",
        _from_one_of(_r0, _others),
        "rank 0 MPI_Get of X bytes from every other rank, one MPI_Win_flush_all",
    ),
    _all_to_all(
        "All_put_all",
        "put",
        _from_one_of(_all, _others),
        "every rank MPI_Put of X bytes to every other rank (staggered), MPI_Win_flush_all",
    ),
    _all_to_all(
        "All_get_all",
        "get",
        _from_one_of(_all, _others),
        "every rank MPI_Get of X bytes from every other rank (staggered), MPI_Win_flush_all",
    ),
    _single(
        "Put_local",
        "put",
        "Flush_local",
        False,
        _arrived(_r1, lambda c: 0),
        "as Unidir_put, local completion MPI_Win_flush_local",
    ),
    _single(
        "Get_local",
        "get",
        "Flush_local",
        False,
        _arrived(_r0, lambda c: 1),
        "as Unidir_get, local completion MPI_Win_flush_local",
        default=False,
    ),
    _multiple(
        "Put_all_local",
        "put",
        "Flush_local_all",
        _arrived(_not_r0, lambda c: 0),
        "as One_put_all, local completion MPI_Win_flush_local_all",
    ),
    _multiple(
        "Get_all_local",
        "get",
        "Flush_local_all",
        _from_one_of(_r0, _others),
        "as One_get_all, local completion MPI_Win_flush_local_all",
        default=False,
    ),
    _exchange_bench(
        "Exchange_put", "put", "every rank MPI_Put of X bytes to both neighbours, two MPI_Win_flush"
    ),
    _exchange_bench(
        "Exchange_get",
        "get",
        "every rank MPI_Get of X bytes from both neighbours, two MPI_Win_flush",
    ),
    _single(
        "Accumulate",
        "acc",
        "Flush",
        False,
        _check_accumulate(False),
        "rank 0 MPI_Accumulate of X/4 floats (MPI_SUM) into rank 1, MPI_Win_flush",
        unit=4,
    ),
    _single(
        "Get_accumulate",
        "getacc",
        "Flush",
        False,
        _check_accumulate(True),
        "rank 0 MPI_Get_accumulate of X/4 floats (MPI_SUM) with rank 1, MPI_Win_flush",
        unit=4,
    ),
    _single(
        "Fetch_and_op",
        "fop",
        "Flush",
        False,
        _check_accumulate(True, 4),
        "rank 0 MPI_Fetch_and_op of one float (MPI_SUM) on rank 1, MPI_Win_flush",
        unit=4,
        fixed_sizes=(4,),
    ),
    _single(
        "Compare_and_swap",
        "cas",
        "Flush",
        False,
        _check_cas,
        "rank 0 MPI_Compare_and_swap of one int on rank 1, MPI_Win_flush",
        unit=4,
        fixed_sizes=(4,),
        buffers=lambda x, np_: (xp(x), 3 * xp(x)),
        setup=_cas_setup,
        comments=("Uses MPI_INT data type",),
    ),
    Benchmark(
        "Truly_passive_put",
        F,
        Kind.PASSIVE,
        truly_passive_put,
        "MPI_Put+flush while the target waits in MPI (t_pure) and while it computes (t_ovrl)",
        procs=TWO,
        components=("t_pure", "t_ovrl", "t_cpu"),
        setup=_passive_setup,
        teardown=osd.free_window,
        expected=_arrived(_r1, lambda c: 0),
        comments=PASSIVE_COMMENTS,
        variant=osd.PUT,
        native="rma_truly_passive_put",
    ),
)

_DEFAULT = [
    "Unidir_put",
    "Unidir_get",
    "Bidir_put",
    "Bidir_get",
    "One_put_all",
    "One_get_all",
    "All_put_all",
    "All_get_all",
    "Put_local",
    "Put_all_local",
    "Exchange_put",
    "Exchange_get",
    "Accumulate",
    "Get_accumulate",
    "Fetch_and_op",
    "Compare_and_swap",
    "Truly_passive_put",
]
assert [b.name for b in BENCHMARKS if b.default] == _DEFAULT

FAMILY = Family(
    name=F,
    title="IMB-RMA",
    part="MPI-RMA part",
    imb2021_order=(
        "Unidir_put",
        "Bidir_put",
        "Unidir_get",
        "Bidir_get",
        "Put_local",
        "Put_all_local",
        "One_put_all",
        "All_put_all",
        "One_get_all",
        "All_get_all",
        "Exchange_put",
        "Exchange_get",
        "Accumulate",
        "Get_accumulate",
        "Fetch_and_op",
        "Compare_and_swap",
        "Truly_passive_put",
    ),
    benchmarks=BENCHMARKS,
    description=(
        "MPI-3 one-sided communication, passive target "
        "with lock/flush (Intel MPI Benchmarks RMA part)"
    ),
    aliases=("IMB-RMA",),
    alloc="mpi",  # spec §6.1: one-sided buffers SHOULD come from MPI_Alloc_mem; --alloc overrides
)
