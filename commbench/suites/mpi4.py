"""IMB-MPI4: MPI-4 persistent collectives, pure and overlapped with computation.

IMB 2021.9 added IMB-MPI4: each IMB-NBC operation as a persistent collective,
`MPI_<Op>_init` once, then `MPI_Start` + `MPI_Wait` per repetition. Here, as in
IMB-NBC (commbench.suites.nbc), every operation takes the arguments, buffers,
size unit, root policy and check-mode verifier of its blocking IMB-MPI1
counterpart, and the two flavours share IMB-NBC's kernels:

- `<Name>_persist_pure`: n × {MPI_Start; MPI_Wait}, reported like an MPI-1 collective.
- `<Name>_persist`: the pure loop gives t_pure; the CPU kernel is sized to t_pure
  (× --mpi4-cpu-factor, default 1 = IMB); n × {MPI_Start; compute; MPI_Wait}
  gives t_ovrl and t_CPU, and the row overlap[%].

A persistent request binds one buffer and one root, so the benchmark's setup
(per size, outside any timed region) creates one request per (off-cache slot,
root the run uses): slots × 1 requests, or slots × NP for a rooted operation
with -root_shift on; teardown frees them. A call i starts the request of its
slot and of its root, ctx.root_of(i). docs/mpi4.md says how this maps to IMB.
The C timed loop of every benchmark (native pattern `persist`) starts and waits
for the same requests, by their handles' addresses.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat
from typing import ClassVar

from mpi4py import MPI

from commbench import deferred, mpilib
from commbench.option_types import ConfigError, Option
from commbench.suites import nbc
from commbench.suites.base import Family, FamilySettings

F = "mpi4"


@dataclass(frozen=True)
class Mpi4Settings(FamilySettings):
    prefix: ClassVar[str] = "mpi4_"
    cpu_factor: float = 1.0  # computation per repetition = F x t_pure (IMB: 1)


# ---------------------------------------------------------------- persistent requests


def _bind(stem: str, shape):
    """setup(ctx): MPI_<stem>_init once per (slot, root), in the same order on every rank."""

    def setup(ctx):
        lists, make = shape(ctx)
        init = getattr(ctx.comm, f"{stem}_init")
        slots = len(lists[0]) if lists else 1
        roots = sorted({ctx.root_of(i) for i in range(ctx.size)}) if ctx.bench.root_based else [0]
        ctx.requests = {
            root: [init(*make(root, tuple(lst[k] for lst in lists))) for k in range(slots)]
            for root in roots
        }

    return setup


def _free(ctx) -> None:
    by_root, ctx.requests = ctx.requests, {}
    for reqs in by_root.values():
        for req in reqs:
            req.Free()


def _calls(ctx, n: int) -> list:
    """The requests of calls first … first+n-1: each call's slot's, for its root."""
    by_root = ctx.requests
    roots = list(by_root)
    index = {root: j for j, root in enumerate(roots)}
    per_slot = ctx.each(n, *(by_root[r] for r in roots))
    calls = ctx.roots(n) if ctx.bench.root_based else repeat(0, n)
    return [reqs[index[root]] for root, reqs in zip(calls, per_slot)]


# ---------------------------------------------------------------- timed loops (see nbc)


def _pure_loop(ctx, n):
    reqs = _calls(ctx, n)
    start, wait = MPI.Prequest.Start, MPI.Request.Wait
    t0 = MPI.Wtime()
    for req in reqs:
        start(req)
        wait(req)
    return ((MPI.Wtime() - t0) / n,)


def _overlapped_loop(ctx, n, exploit, target):
    reqs = _calls(ctx, n)
    start, wait, clock = MPI.Prequest.Start, MPI.Request.Wait, MPI.Wtime
    t_cpu = 0.0
    t0 = clock()
    for req in reqs:
        start(req)
        c0 = clock()
        exploit(target, False)
        t_cpu += clock() - c0
        wait(req)
    return (clock() - t0) / n, t_cpu / n


def _once(stem: str):
    """ctx -> op(*args): one persistent operation initialised, started, waited for and
    freed (check mode's per-root sweep, untimed)."""

    def op_of(ctx):
        init = getattr(ctx.comm, f"{stem}_init")

        def op(*args):
            req = init(*args)
            req.Start()
            req.Wait()
            req.Free()

        return op

    return op_of


# ---------------------------------------------------------------- descriptors


def _persist_pair(stem: str, shape, what: str):
    name = f"{stem}_persist"
    return nbc.pair(
        F,
        stem,
        (name, f"{name}_pure"),
        (
            nbc.overlap_kernel(_pure_loop, _overlapped_loop, Mpi4Settings),
            nbc.pure_kernel(_pure_loop),
        ),
        what.format(op=f"persistent MPI_{stem}_init", plain=f"{stem[:-1]}_persist"),
        _once(stem),
        setups=(nbc.overlap_setup(Mpi4Settings, _bind(stem, shape)), _bind(stem, shape)),
        teardown=_free,
        default=stem != "Allgather" and stem not in nbc.OWN,
        native="persist",
    )


BENCHMARKS = tuple(
    b for stem, shape, what in nbc.OPERATIONS + nbc.OURS for b in _persist_pair(stem, shape, what)
)

# IMB-MPI4's default list (src_cpp/MPI4/MPI4_benchmark.cpp: the DEFAULT flags, in
# registration order): every _persist but Allgather_persist, whose flag is commented
# out there; it and the _persist_pure flavours run by name or -include.
_ORDER = [
    "Bcast_persist",
    "Allgatherv_persist",
    "Gather_persist",
    "Gatherv_persist",
    "Scatter_persist",
    "Scatterv_persist",
    "Alltoall_persist",
    "Alltoallv_persist",
    "Reduce_persist",
    "Reduce_scatter_persist",
    "Allreduce_persist",
    "Barrier_persist",
]


def probe() -> str | None:
    """What fails when this MPI library runs a persistent collective, or None: MPI_Barrier_init
    and MPI_Allreduce_init on MPI_COMM_SELF, each started, completed and freed, the reduction's
    result read. The capability itself, not a version number: Open MPI 5.0 implements them
    and reports MPI 3.1 (issue 33)."""
    import numpy as np

    if not hasattr(MPI.Comm, "Bcast_init"):
        return "this mpi4py has no Comm.Bcast_init (accepted: mpi4py >= 4.0)"
    try:
        req = MPI.COMM_SELF.Barrier_init()
        req.Start()
        req.Wait()
        req.Free()
        got, one = np.zeros(1, np.int32), np.ones(1, np.int32)
        req = MPI.COMM_SELF.Allreduce_init(one, got, MPI.SUM)
        req.Start()
        req.Wait()
        req.Free()
    except (NotImplementedError, MPI.Exception) as e:  # a missing symbol, an MPI error
        return f"{type(e).__name__}: {str(e).strip() or 'not implemented'}"
    if got[0] != 1:
        return f"MPI_Allreduce_init on MPI_COMM_SELF delivered {int(got[0])}, not 1"
    return None


def missing(failure: str | None, library: str, version: tuple[int, int]) -> str | None:
    """Why persistent collectives cannot run (probe()'s failure on this library), or None."""
    if failure is None:
        return None
    return (
        f"the {F} family (IMB-MPI4) needs MPI-4 persistent collectives, but this MPI library "
        f"({library}, reporting MPI {version[0]}.{version[1]}) cannot run them: {failure} "
        "(accepted: an MPI library with MPI_Bcast_init & co., e.g. MPICH >= 4.0, Open MPI "
        ">= 5.0, and mpi4py >= 4.0)"
    )


def _validate(cfg, size: int) -> None:
    """On the ranks (rank 0 parses the run there, exit 2 on every rank). The self-launcher
    does not load the MPI library to parse a run (commbench.deferred): the job checks."""
    if not deferred.loaded("mpi4py.MPI"):
        return
    problem = missing(probe(), mpilib.here().describe(), MPI.Get_version())
    if problem:
        raise ConfigError(problem)


FAMILY = Family(
    name=F,
    title="IMB-MPI4",
    part="MPI-4 part",
    benchmarks=BENCHMARKS,
    description=(
        "MPI-4 persistent collectives, pure and overlapped with computation (Intel MPI "
        "Benchmarks MPI-4 part)"
    ),
    aliases=("IMB-MPI4",),
    methodology=True,
    validate=_validate,
    options=(
        Option(
            ("--mpi4-cpu-factor",),
            "mpi4_cpu_factor",
            "<F>",
            "IMB-MPI4: computation per repetition = F × t_pure (default 1, as IMB)",
            nbc.cpu_factor("--mpi4-cpu-factor"),
        ),
    ),
)
