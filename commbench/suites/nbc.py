"""IMB-NBC: MPI-3 nonblocking collectives, pure and overlapped with computation (spec §11).

Every operation takes the arguments of its blocking IMB-MPI1 counterpart
(buffers, counts, displacements, MPI_FLOAT/MPI_SUM, root i%NP), so buffer
lengths, size unit, root-based policy and the check-mode verifier are taken
from the MPI-1 descriptor itself: what Ibcast leaves in the receive buffer must
equal what Bcast leaves there.

Two flavours per operation:

- `<Name>_pure`: n × {start; MPI_Wait}, reported like an MPI-1 collective.
- `<Name>` (overlap): the pure loop gives t_pure; the CPU kernel of spec §7.6 is
  sized to t_pure (times --nbc-cpu-factor, default 1 = IMB); then
  n × {start; compute; MPI_Wait} gives t_ovrl, with the compute time summed
  into t_CPU. The row shows the rank with the largest t_ovrl and
  overlap[%] of spec §7.7 (commbench.records).

Both flavours of every operation have a C timed loop (the native pattern
i<name>, a START row of commbench/native/kernels.c): the same calls, the same
protocol, with a C CPU kernel calibrated like commbench.cpu's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from mpi4py import MPI

from commbench import cpu, policy
from commbench.option_types import ConfigError, Option
from commbench.suites import collops, mpi1
from commbench.suites.base import Benchmark, Family, FamilySettings, Kind
from commbench.suites.mpi1 import collectives

F = "nbc"

# Spec §15: CHECK mode SHOULD shrink the CPU target (reference 0.001 s); timings
# are not valid there anyway, so the compute per repetition is capped.
CHECK_CPU_SECS = 0.001


@dataclass(frozen=True)
class NbcSettings(FamilySettings):
    prefix: ClassVar[str] = "nbc_"
    cpu_factor: float = 1.0  # computation per repetition = F x t_pure (IMB: 1)


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


def _floats(ctx, recv_count=None):
    return ctx.send_specs(dtype=MPI.FLOAT), ctx.recv_specs(count=recv_count, dtype=MPI.FLOAT)


def _shape_reduce(ctx):
    return _floats(ctx), lambda root, sr: (*sr, MPI.SUM, root)


def _shape_reduce_scatter(ctx):
    counts = collops.split(ctx.x // 4, ctx.size)
    return _floats(ctx, 4 * counts[ctx.rank]), lambda root, sr: (*sr, counts, MPI.SUM)


def _shape_allreduce(ctx):
    return _floats(ctx), lambda root, sr: (*sr, MPI.SUM)


def _shape_barrier(ctx):
    return (), _as_is


# (MPI-1 name, shape, what one call does: {op} is the MPI function, {plain} the
# family's name of the operation without v). Default order of the reference (spec §11).
OPERATIONS = (
    ("Bcast", _shape_bcast, "{op} of X bytes from root i%NP"),
    ("Allgather", _shape_allgather(False), "{op}, X bytes from each"),
    ("Allgatherv", _shape_allgather(True), "{op} with the data of {plain}"),
    ("Gather", _shape_gather(False), "{op} of X bytes from each to root i%NP"),
    ("Gatherv", _shape_gather(True), "{op} with the data of {plain}"),
    ("Scatter", _shape_scatter(False), "{op} of X bytes to each from root i%NP"),
    ("Scatterv", _shape_scatter(True), "{op} with the data of {plain}"),
    ("Alltoall", _shape_alltoall(False), "{op}, X bytes per pair"),
    ("Alltoallv", _shape_alltoall(True), "{op}, X bytes per pair"),
    ("Reduce", _shape_reduce, "{op} of X/4 floats to root i%NP, MPI_SUM"),
    ("Reduce_scatter", _shape_reduce_scatter, "{op} of X/4 floats, even split"),
    ("Allreduce", _shape_allreduce, "{op} of X/4 floats, MPI_SUM"),
    ("Barrier", _shape_barrier, "{op}"),
)


# commbench's own operations (collops.OURS), each shaped as the operation it is declared
# like; run by name (not in IMB-NBC's or IMB-MPI4's default list)
SHAPE_OF_CALL = {"allreduce": _shape_allreduce}
OURS = tuple(
    (o.method, SHAPE_OF_CALL[o.like], "{op} of X/4 floats: " + o.what) for o in collops.OURS
)
OWN = frozenset(stem for stem, _, _ in OURS)


def _nbc_name(stem: str) -> str:
    return "I" + stem.lower()


def _plan(stem: str, shape):
    """ctx, n -> (start, the argument tuples of calls first … first+n-1): slots and
    roots cycle exactly as in the MPI-1 kernels; built before the clock starts, from
    specs built once per row (a -sync run plans every call alone)."""
    key = f"nbc_{stem}"

    def plan(ctx, n):
        lists, make = ctx.prebuilt.get(key) or ctx.prebuilt.setdefault(key, shape(ctx))
        calls = zip(ctx.roots(n), ctx.each(n, *lists))
        return getattr(ctx.comm, _nbc_name(stem)), [make(root, specs) for root, specs in calls]

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


def cpu_target(t_pure: float, factor: float, check: bool) -> float:
    """Seconds of computation per repetition: t_pure scaled, capped in CHECK mode."""
    target = factor * t_pure
    return min(target, CHECK_CPU_SECS) if check else target


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

OVERLAP_COMPONENTS = ("t_ovrl", "t_pure", "t_cpu")


def _started_and_waited(name: str):
    """ctx -> op(*args): the nonblocking operation `name` started and waited for (check mode)."""

    def op_of(ctx):
        start = getattr(ctx.comm, name)
        return lambda *args: start(*args).Wait()

    return op_of


def pair(
    family: str,
    blocking: str,
    names: tuple[str, str],
    kernels: tuple,
    what: str,
    op_of,
    setups: tuple,
    teardown=None,
    default: bool = True,
    native: str | None = None,
) -> tuple[Benchmark, Benchmark]:
    """The overlap benchmark and the pure one, `names`, with `kernels`, shaped like
    MPI-1 `blocking`: its buffers, unit, root policy and verifier, the per-root sweep
    (collectives.ROOT_SWEPT) re-run with op_of(ctx) -> op(*args), one operation of the family;
    `native`: the C loop of both (commbench/native/kernels.c, a START row)."""
    ref = mpi1.FAMILY.get(blocking)
    if ref is None:
        raise ValueError(f"{blocking!r} is not an MPI-1 benchmark")
    sync = ref.kind == Kind.SYNC
    expected = ref.expected
    if blocking in collectives.ROOT_SWEPT:  # verified once per root with this family's operation
        expected = collectives.ROOT_SWEPT[blocking](op_of)
    common = {
        "buffers": ref.buffers,
        "unit": ref.unit,
        "root_based": ref.root_based,
        "teardown": teardown,
        "expected": expected,
        "dtype": ref.dtype,
        "int_extent": ref.int_extent,
        "native": native,
    }
    over = Benchmark(
        names[0],
        family,
        Kind.OVERLAP_SYNC if sync else Kind.OVERLAP,
        kernels[0],
        f"{what} overlapped with computation sized to its pure time",
        default=default,
        components=OVERLAP_COMPONENTS,
        setup=setups[0],
        **common,
    )
    pure = Benchmark(
        names[1],
        family,
        Kind.SYNC if sync else Kind.COLLECTIVE,
        kernels[1],
        f"{what} started and waited for at once, no computation",
        default=False,
        setup=setups[1],
        **common,
    )
    return over, pure


def _nbc_pair(stem: str, shape, what: str) -> tuple[Benchmark, Benchmark]:
    name, plan = _nbc_name(stem), _plan(stem, shape)
    pure = _pure_loop(plan)
    return pair(
        F,
        stem,
        (name, f"{name}_pure"),
        (overlap_kernel(pure, _overlapped_loop(plan), NbcSettings), pure_kernel(pure)),
        what.format(op=f"MPI_{name}", plain=_nbc_name(stem[:-1])),
        _started_and_waited(name),
        setups=(overlap_setup(NbcSettings), None),
        default=stem not in OWN,
        native=name.lower(),
    )


BENCHMARKS = tuple(
    b for stem, shape, what in OPERATIONS + OURS for b in _nbc_pair(stem, shape, what)
)

# Default execution order of the reference (spec §11); the _pure flavours only by name.
_ORDER = [
    "Ibcast",
    "Iallgather",
    "Iallgatherv",
    "Igather",
    "Igatherv",
    "Iscatter",
    "Iscatterv",
    "Ialltoall",
    "Ialltoallv",
    "Ireduce",
    "Ireduce_scatter",
    "Iallreduce",
    "Ibarrier",
]


def cpu_factor(flag: str):
    """The parser of a family's CPU factor option `flag` (--nbc-cpu-factor)."""

    def parse(s: str) -> float:
        try:
            v = float(s)
        except ValueError:
            raise ConfigError(
                f"{flag} needs a number, got {s!r} (accepted: a positive number, 1 = IMB)"
            ) from None
        if not math.isfinite(v) or v <= 0:
            raise ConfigError(
                f"{flag} must be a positive number, got {s!r} (accepted: e.g. 0.25, 1, 4)"
            )
        return v

    return parse


FAMILY = Family(
    name=F,
    title="IMB-NBC",
    part="MPI-NBC part",
    benchmarks=BENCHMARKS,
    description=(
        "nonblocking collectives, pure and overlapped "
        "with computation (Intel MPI Benchmarks NBC part)"
    ),
    aliases=("IMB-NBC",),
    methodology=True,
    options=(
        Option(
            ("--nbc-cpu-factor",),
            "nbc_cpu_factor",
            "<F>",
            "IMB-NBC: computation per repetition = F × t_pure (default 1, as IMB)",
            cpu_factor("--nbc-cpu-factor"),
        ),
    ),
)
