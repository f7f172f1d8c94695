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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from mpi4py import MPI

from commbench import cpu, policy
from commbench.options import ConfigError, Option
from commbench.suites import mpi1
from commbench.suites.base import Benchmark, Family, FamilySettings, Kind

F = "nbc"

# Spec §15: CHECK mode SHOULD shrink the CPU target (reference 0.001 s); timings
# are not valid there anyway, so the compute per repetition is capped.
CHECK_CPU_SECS = 0.001


@dataclass(frozen=True)
class Settings(FamilySettings):
    prefix: ClassVar[str] = "nbc_"
    cpu_factor: float = 1.0  # computation per repetition = F x t_pure (IMB: 1)


# ---------------------------------------------------------------- one repetition
#
# A plan returns (start, items): start(*args) begins one operation and returns
# its request; items yields the argument tuple of each of the n repetitions
# (slots and roots cycle exactly as in the MPI-1 kernels). Called afresh for
# every loop, so the pure and the overlapped loops see the same sequence, and
# listed before the clock starts, so no tuple is built inside a timed loop.

def _plan_bcast(ctx, n):
    op, me = ctx.comm.Ibcast, ctx.rank
    pairs = zip(ctx.roots(n), ctx.each(n, ctx.send_specs(), ctx.recv_specs()))
    return op, ((s if root == me else r, root) for root, (s, r) in pairs)


def _plan_allgather(v: bool):
    def plan(ctx, n):
        recv = ctx.recv_specs(count=ctx.size * ctx.x)
        if v:
            return ctx.comm.Iallgatherv, ctx.each(n, ctx.send_specs(), mpi1._vspec(ctx, recv, ctx.x))
        return ctx.comm.Iallgather, ctx.each(n, ctx.send_specs(), recv)

    return plan


def _plan_gather(v: bool):
    def plan(ctx, n):
        recv = ctx.recv_specs(count=ctx.size * ctx.x)
        if v:
            recv = mpi1._vspec(ctx, recv, ctx.x)
        pairs = zip(ctx.roots(n), ctx.each(n, ctx.send_specs(), recv))
        return ctx.comm.Igatherv if v else ctx.comm.Igather, ((s, r, root) for root, (s, r) in pairs)

    return plan


def _plan_scatter(v: bool):
    def plan(ctx, n):
        send = ctx.send_specs(count=ctx.size * ctx.x)
        if v:
            send = mpi1._vspec(ctx, send, ctx.x)
        pairs = zip(ctx.roots(n), ctx.each(n, send, ctx.recv_specs()))
        return ctx.comm.Iscatterv if v else ctx.comm.Iscatter, ((s, r, root) for root, (s, r) in pairs)

    return plan


def _plan_alltoall(v: bool):
    def plan(ctx, n):
        send = ctx.send_specs(count=ctx.size * ctx.x)
        recv = ctx.recv_specs(count=ctx.size * ctx.x)
        if v:
            send, recv = mpi1._vspec(ctx, send, ctx.x), mpi1._vspec(ctx, recv, ctx.x)
        return ctx.comm.Ialltoallv if v else ctx.comm.Ialltoall, ctx.each(n, send, recv)

    return plan


def _plan_reduce(ctx, n):
    pairs = zip(ctx.roots(n),
                ctx.each(n, ctx.send_specs(dtype=MPI.FLOAT), ctx.recv_specs(dtype=MPI.FLOAT)))
    return ctx.comm.Ireduce, ((s, r, MPI.SUM, root) for root, (s, r) in pairs)


def _plan_reduce_scatter(ctx, n):
    counts = policy.even_counts(ctx.x // 4, ctx.size)
    items = ctx.each(n, ctx.send_specs(dtype=MPI.FLOAT),
                     ctx.recv_specs(count=4 * counts[ctx.rank], dtype=MPI.FLOAT))
    return ctx.comm.Ireduce_scatter, ((s, r, counts, MPI.SUM) for s, r in items)


def _plan_allreduce(ctx, n):
    items = ctx.each(n, ctx.send_specs(dtype=MPI.FLOAT), ctx.recv_specs(dtype=MPI.FLOAT))
    return ctx.comm.Iallreduce, ((s, r, MPI.SUM) for s, r in items)


def _plan_barrier(ctx, n):
    return ctx.comm.Ibarrier, ((),) * n


# ---------------------------------------------------------------- kernels

def _args(ctx, n, plan):
    """(start, list of n argument tuples): built before the clock starts."""
    start, items = plan(ctx, n)
    return start, list(items)


def _pure_loop(ctx, n, plan, sync: int = 0) -> float:
    """n × {start; wait}; with sync (-sync, IMB 2021) each one timed alone and followed
    by `sync` barriers. (The _pure benchmarks get that from the harness, which times
    a collective kernel one call at a time; the overlap kernel asks for it here.)"""
    start, items = _args(ctx, n, plan)
    wait = MPI.Request.Wait
    if sync:
        barrier, total = ctx.barrier, 0.0
        for a in items:
            t0 = MPI.Wtime()
            wait(start(*a))
            total += MPI.Wtime() - t0
            for _ in range(sync):
                barrier()
        return total / n
    t0 = MPI.Wtime()
    for a in items:
        wait(start(*a))
    return (MPI.Wtime() - t0) / n


def _pure(plan):
    """Spec §11 `_pure`: n × {start; MPI_Wait}, t = Δt/n."""

    def kernel(ctx, n):
        return _pure_loop(ctx, n, plan)

    return kernel


def cpu_target(t_pure: float, factor: float, check: bool) -> float:
    """Seconds of computation per repetition: t_pure scaled, capped in CHECK mode."""
    target = factor * t_pure
    return min(target, CHECK_CPU_SECS) if check else target


def _overlap(plan):
    """Spec §11 overlap flavour -> (t_ovrl, t_pure, t_cpu), seconds per repetition."""

    def kernel(ctx, n):
        # 1. the _pure measurement with the same n (the harness ran the barriers)
        t_pure = _pure_loop(ctx, n, plan, ctx.sync)
        # 2. computation sized to this rank's pure communication time
        kern = cpu.shared()
        target = cpu_target(t_pure, Settings.of(ctx.params).cpu_factor, ctx.cfg.check)
        kern.exploit(target, init=True)
        # 3. barriers
        barrier = ctx.barrier
        for _ in range(policy.N_BARR):
            barrier()
        # 4. n × {start; compute; wait}
        start, items = _args(ctx, n, plan)
        wait, exploit = MPI.Request.Wait, kern.exploit
        t_cpu = 0.0
        if ctx.sync:  # -sync (IMB 2021): each repetition timed alone, barriers after it
            t_ovrl = 0.0
            for a in items:
                t0 = MPI.Wtime()
                req = start(*a)
                s = MPI.Wtime()
                exploit(target, False)
                t_cpu += MPI.Wtime() - s
                wait(req)
                t_ovrl += MPI.Wtime() - t0
                for _ in range(ctx.sync):
                    barrier()
            return t_ovrl / n, t_pure, t_cpu / n
        t0 = MPI.Wtime()
        for a in items:
            req = start(*a)
            s = MPI.Wtime()
            exploit(target, False)
            t_cpu += MPI.Wtime() - s
            wait(req)
        # 5.
        return (MPI.Wtime() - t0) / n, t_pure, t_cpu / n

    return kernel


def _calibrate(ctx) -> None:
    """Calibrate the CPU kernel once per process, outside any timed region."""
    cpu.shared()


# ---------------------------------------------------------------- descriptors

OVERLAP_COMPONENTS = ("t_ovrl", "t_pure", "t_cpu")


def _started_and_waited(name: str):
    """ctx -> op(*args): the nonblocking operation `name` started and waited for (check mode)."""
    def op_of(ctx):
        start = getattr(ctx.comm, name)
        return lambda *args: start(*args).Wait()

    return op_of


def _pair(name: str, blocking: str, plan, what: str) -> tuple[Benchmark, Benchmark]:
    """The overlap benchmark `name` and `name_pure`, shaped like MPI-1 `blocking`."""
    ref = mpi1.FAMILY.get(blocking)
    assert ref is not None, blocking
    sync = ref.kind == Kind.SYNC
    expected = ref.expected
    if blocking in mpi1.ROOT_SWEPT:  # verified once per root with this family's own operation
        expected = mpi1.ROOT_SWEPT[blocking](_started_and_waited(name))
    common = {"buffers": ref.buffers, "unit": ref.unit, "root_based": ref.root_based,
              "expected": expected, "dtype": ref.dtype, "int_extent": ref.int_extent}
    over = Benchmark(name, F, Kind.OVERLAP_SYNC if sync else Kind.OVERLAP, _overlap(plan),
                     f"{what} overlapped with computation sized to its pure time",
                     components=OVERLAP_COMPONENTS, setup=_calibrate, **common)
    pure = Benchmark(f"{name}_pure", F, Kind.SYNC if sync else Kind.COLLECTIVE, _pure(plan),
                     f"{what} started and waited for at once, no computation", default=False, **common)
    return over, pure


_PAIRS = (
    ("Ibcast", "Bcast", _plan_bcast, "MPI_Ibcast of X bytes from root i%NP"),
    ("Iallgather", "Allgather", _plan_allgather(False), "MPI_Iallgather, X bytes from each"),
    ("Iallgatherv", "Allgatherv", _plan_allgather(True), "MPI_Iallgatherv with the data of Iallgather"),
    ("Igather", "Gather", _plan_gather(False), "MPI_Igather of X bytes from each to root i%NP"),
    ("Igatherv", "Gatherv", _plan_gather(True), "MPI_Igatherv with the data of Igather"),
    ("Iscatter", "Scatter", _plan_scatter(False), "MPI_Iscatter of X bytes to each from root i%NP"),
    ("Iscatterv", "Scatterv", _plan_scatter(True), "MPI_Iscatterv with the data of Iscatter"),
    ("Ialltoall", "Alltoall", _plan_alltoall(False), "MPI_Ialltoall, X bytes per pair"),
    ("Ialltoallv", "Alltoallv", _plan_alltoall(True), "MPI_Ialltoallv, X bytes per pair"),
    ("Ireduce", "Reduce", _plan_reduce, "MPI_Ireduce of X/4 floats to root i%NP, MPI_SUM"),
    ("Ireduce_scatter", "Reduce_scatter", _plan_reduce_scatter, "MPI_Ireduce_scatter of X/4 floats, even split"),
    ("Iallreduce", "Allreduce", _plan_allreduce, "MPI_Iallreduce of X/4 floats, MPI_SUM"),
    ("Ibarrier", "Barrier", _plan_barrier, "MPI_Ibarrier"),
)

BENCHMARKS = tuple(b for name, blocking, plan, what in _PAIRS for b in _pair(name, blocking, plan, what))

# Default execution order of the reference (spec §11); the _pure flavours only by name.
_ORDER = ["Ibcast", "Iallgather", "Iallgatherv", "Igather", "Igatherv", "Iscatter", "Iscatterv",
          "Ialltoall", "Ialltoallv", "Ireduce", "Ireduce_scatter", "Iallreduce", "Ibarrier"]
assert [b.name for b in BENCHMARKS if b.default] == _ORDER


def _cpu_factor(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        raise ConfigError(f"--nbc-cpu-factor needs a number, got {s!r} (accepted: a positive number, 1 = IMB)") from None
    if not math.isfinite(v) or v <= 0:
        raise ConfigError(f"--nbc-cpu-factor must be a positive number, got {s!r} (accepted: e.g. 0.25, 1, 4)")
    return v


FAMILY = Family(
    name=F,
    title="IMB-NBC",
    part="MPI-NBC part",
    benchmarks=BENCHMARKS,
    description="nonblocking collectives, pure and overlapped with computation (Intel MPI Benchmarks NBC part)",
    aliases=("IMB-NBC",),
    methodology=True,
    options=(
        Option(("--nbc-cpu-factor",), "nbc_cpu_factor", "<F>",
               "IMB-NBC: computation per repetition = F × t_pure (default 1, as IMB)", _cpu_factor),
    ),
)
