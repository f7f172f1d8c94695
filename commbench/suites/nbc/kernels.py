"""IMB-NBC's call shapes, timed loops, overlap kernel and set-ups (the catalog:
commbench.suites.nbc). IMB-MPI4 (commbench.suites.mpi4) runs its persistent loops in the
same overlap and pure kernels, and takes its call arguments from shape_of.
"""

from __future__ import annotations

from mpi4py import MPI

from commbench import cpu, policy
from commbench.suites import collops
from commbench.suites.mpi1 import collectives
from commbench.suites.nbc import CHECK_CPU_SECS, NbcSettings, cpu_target, nbc_name

# ---------------------------------------------------------------- the operations
#
# A shape gives, for one row, (lists, make): the per-slot buffer specs an
# operation's arguments are drawn from (one list per argument, cycled through the
# slots by Context.each) and make(root, specs) -> the argument tuple of one call.
# The tuple fits both MPI_I<op> (here) and MPI_<Op>_init (IMB-MPI4,
# commbench.suites.mpi4): mpi4py gives them the same arguments.


def _as_is(root, specs):
    return specs


def _with_root(root, specs):
    return (*specs, root)


def _shape_bcast(ctx):
    me = ctx.rank
    return (ctx.send_specs(), ctx.recv_specs()), lambda root, sr: (
        sr[0] if root == me else sr[1],
        root,
    )


def _shape_allgather(v: bool):
    def shape(ctx):
        recv = ctx.recv_specs(count=ctx.size * ctx.x)
        return (ctx.send_specs(), collectives.vspec(ctx, recv, ctx.x) if v else recv), _as_is

    return shape


def _shape_gather(v: bool):
    def shape(ctx):
        recv = ctx.recv_specs(count=ctx.size * ctx.x)
        return (ctx.send_specs(), collectives.vspec(ctx, recv, ctx.x) if v else recv), _with_root

    return shape


def _shape_scatter(v: bool):
    def shape(ctx):
        send = ctx.send_specs(count=ctx.size * ctx.x)
        return (collectives.vspec(ctx, send, ctx.x) if v else send, ctx.recv_specs()), _with_root

    return shape


def _shape_alltoall(v: bool):
    def shape(ctx):
        send = ctx.send_specs(count=ctx.size * ctx.x)
        recv = ctx.recv_specs(count=ctx.size * ctx.x)
        if v:
            send, recv = collectives.vspec(ctx, send, ctx.x), collectives.vspec(ctx, recv, ctx.x)
        return (send, recv), _as_is

    return shape


def _floats(ctx, recv_count=None, send_count=None):
    send = ctx.send_specs(count=send_count, dtype=MPI.FLOAT)
    return send, ctx.recv_specs(count=recv_count, dtype=MPI.FLOAT)


def _shape_reduce(ctx):
    return _floats(ctx), lambda root, sr: (*sr, MPI.SUM, root)


def _shape_reduce_scatter(ctx):
    counts = collops.split(collectives.reduce_scatter_items(ctx), ctx.size)  # floats: width 4
    sr = _floats(ctx, 4 * counts[ctx.rank], 4 * sum(counts))
    return sr, lambda root, sr: (*sr, counts, MPI.SUM)


def _shape_allreduce(ctx):
    return _floats(ctx), lambda root, sr: (*sr, MPI.SUM)


def _shape_barrier(ctx):
    return (), _as_is


# The call shapes, by collops operation; shape_of(stem) gives an operation's (one of
# commbench's own, collops.OURS, takes that of the operation it is `like`: Op.shape).
SHAPES = {
    "bcast": _shape_bcast,
    "allgather": _shape_allgather(False),
    "allgatherv": _shape_allgather(True),
    "gather": _shape_gather(False),
    "gatherv": _shape_gather(True),
    "scatter": _shape_scatter(False),
    "scatterv": _shape_scatter(True),
    "alltoall": _shape_alltoall(False),
    "alltoallv": _shape_alltoall(True),
    "reduce": _shape_reduce,
    "reduce_scatter": _shape_reduce_scatter,
    "allreduce": _shape_allreduce,
    "barrier": _shape_barrier,
}


def shape_of(stem: str):
    """The call shape of the MPI-1 operation `stem` (Bcast, Scan …)."""
    return SHAPES[collops.OPS[stem.lower()].shape]


def _plan(stem: str):
    """ctx, n -> (start, the argument tuples of calls first … first+n-1): slots and
    roots cycle exactly as in the MPI-1 kernels; built before the clock starts, from
    specs built once per row (a -sync run plans every call alone)."""
    key, shape = f"nbc_{stem}", shape_of(stem)

    def plan(ctx, n):
        lists, make = ctx.prebuilt.get(key) or ctx.prebuilt.setdefault(key, shape(ctx))
        calls = zip(ctx.roots(n), ctx.each(n, *lists))
        return getattr(ctx.comm, nbc_name(stem)), [make(root, specs) for root, specs in calls]

    return plan


# ---------------------------------------------------------------- timed loops
#
# A family's two loops over calls first … first+n-1, timed as a whole, in seconds
# per repetition: pure(ctx, n) -> (t,) and overlapped(ctx, n, exploit, target) ->
# (t_ovrl, t_cpu). call_by_call runs either under -sync; overlap_kernel composes them.


def _pure_loop(plan):
    def loop(ctx, n):
        start, items = plan(ctx, n)
        wait = MPI.Request.Wait
        t0 = MPI.Wtime()
        for a in items:
            wait(start(*a))
        return ((MPI.Wtime() - t0) / n,)

    return loop


def _overlapped_loop(plan):
    def loop(ctx, n, exploit, target):
        start, items = plan(ctx, n)
        wait = MPI.Request.Wait
        t_cpu = 0.0
        t0 = MPI.Wtime()
        for a in items:
            req = start(*a)
            s = MPI.Wtime()
            exploit(target, False)
            t_cpu += MPI.Wtime() - s
            wait(req)
        return (MPI.Wtime() - t0) / n, t_cpu / n

    return loop


def call_by_call(ctx, n, loop, *args) -> tuple:
    """loop(ctx, n, *args); with -sync (IMB 2021: ctx.sync > 0) each call timed alone
    as loop(ctx, 1, *args) with ctx.first = i, followed by ctx.sync barriers outside
    its time, the components summed: what the harness does for a collective kernel
    (the _pure benchmarks get it there; an overlap kernel asks for it here)."""
    if not ctx.sync:
        return loop(ctx, n, *args)
    base, barrier, sums = ctx.first, ctx.barrier, None
    try:
        for i in range(base, base + n):
            ctx.first = i
            t = loop(ctx, 1, *args)
            sums = t if sums is None else tuple(a + b for a, b in zip(sums, t))
            for _ in range(ctx.sync):
                barrier()
    finally:
        ctx.first = base
    return tuple(s / n for s in sums)


def pure_kernel(pure):
    """Spec §11 `_pure`: n × {start; MPI_Wait}, t = Δt/n."""
    return lambda ctx, n: pure(ctx, n)[0]


def overlap_kernel(pure, overlapped, settings):
    """Spec §11 overlap flavour -> (t_ovrl, t_pure, t_cpu), seconds per repetition;
    settings: the family's FamilySettings, whose cpu_factor scales the computation."""

    def kernel(ctx, n):
        # 1. the _pure measurement with the same n (the harness ran the barriers)
        (t_pure,) = call_by_call(ctx, n, pure)
        # 2. computation sized to this rank's pure communication time
        kern = cpu.shared(ctx.cfg.method.cpu_matrix)
        target = cpu_target(t_pure, settings.of(ctx.params).cpu_factor, ctx.cfg.check)
        kern.exploit(target, init=True)
        # 3. barriers
        barrier = ctx.barrier
        for _ in range(policy.N_BARR):
            barrier()
        # 4. n × {start; compute; wait}
        t_ovrl, t_cpu = call_by_call(ctx, n, overlapped, kern.exploit, target)
        return t_ovrl, t_pure, t_cpu

    return kernel


def calibrate(ctx) -> None:
    """Calibrate the CPU kernel once per process, outside any timed region: Python's, and
    the native engine's C kernel where that engine runs."""
    from commbench import native

    cpu.shared(ctx.cfg.method.cpu_matrix)
    native.calibrate_cpu(ctx.cfg.method.cpu_matrix)


def overlap_setup(settings, then=None):
    """The setup of an overlap benchmark: calibrate, and leave the sizing of the
    computation (settings' cpu_factor, the check-mode cap) in ctx.cpu_target, where the
    native loops read it; then then(ctx)."""

    def setup(ctx):
        calibrate(ctx)
        ctx.cpu_target = (
            settings.of(ctx.params).cpu_factor,
            CHECK_CPU_SECS if ctx.cfg.check else 0.0,
        )
        if then is not None:
            then(ctx)

    return setup


# ---------------------------------------------------------------- descriptors


def started_and_waited(name: str):
    """ctx -> op(*args): the nonblocking operation `name` started and waited for (check mode)."""

    def op_of(ctx):
        start = getattr(ctx.comm, name)
        return lambda *args: start(*args).Wait()

    return op_of


# ---------------------------------------------------------------- the catalog's kernels


def overlap(stem: str):
    """The overlap kernel of operation `stem`, called with the arguments of its shape."""
    plan = _plan(stem)
    return overlap_kernel(_pure_loop(plan), _overlapped_loop(plan), NbcSettings)


def pure(stem: str):
    """The _pure kernel of operation `stem` (see overlap)."""
    return pure_kernel(_pure_loop(_plan(stem)))
