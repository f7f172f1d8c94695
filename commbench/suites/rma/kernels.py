"""IMB-RMA's timed kernels (the catalog, commbench.suites.rma, declares the benchmarks):
each slot's argument lists, the single-transfer, one/all-to-all and exchange patterns, and
Truly_passive_put.

Common frame: the origin(s) lock the target(s) (shared lock, or lock_all), time the
pattern, unlock; then all members meet in MPI_Barrier(MY_COMM). Targets make no RMA calls
and return NO_TIME, which the records leave out of min/max/avg.
"""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

from commbench import cpu
from commbench.suites import onesided as osd
from commbench.suites.rma import AGG, OPERATIONS

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


# each operation's argument builder; its method, window side and native stem: OPERATIONS
ARGS = {
    "put": _put_args,
    "get": _get_args,
    "acc": _acc_args,
    "getacc": _getacc_args,
    "fop": _fop_args,
    "cas": _cas_args,
}


def _args(ctx, op: str, target: int) -> list:
    key = (op, target)
    got = ctx.prebuilt.get(key)
    if got is None:
        got = ctx.prebuilt[key] = ARGS[op](ctx, target)
    return got


def _done(ctx, n: int) -> None:
    ctx.comm.Barrier()  # targets wait here while the origin works
    if ctx.cfg.check:
        osd.count_uses(ctx, n)


# ---------------------------------------------------------------- single transfer (pair)


def pair(op: str, completion: str, bidir: bool):
    """Unidir/Bidir put/get, Put_local/Get_local, Accumulate, Get_accumulate, Fetch_and_op, CAS."""
    method = OPERATIONS[op][0]

    def kernel(ctx, n):
        me = ctx.rank
        t = NO_TIME
        if op == "cas" and me == 0:
            cas_values(ctx)  # --engine both: the second engine finds the receive buffer cleared
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


def to_all(op: str, completion: str, everyone: bool):
    """One_put_all/One_get_all (rank 0), Put_all_local/Get_all_local, All_put_all/All_get_all."""
    method = OPERATIONS[op][0]

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


def exchange(op: str):
    method = OPERATIONS[op][0]

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


def passive_setup(ctx):
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


def cas_values(ctx):
    # The origin swaps in the first int of its send slot (so corrupted send data
    # is caught); compare value 0 = the target's initial contents.
    for k in range(ctx.slots):
        a, s = k * ctx.bufs.recv_stride, k * ctx.bufs.send_stride
        ctx.rbuf[a + 4 : a + 8] = 0
        ctx.rbuf[a + 8 : a + 12] = ctx.sbuf[s : s + 4]
