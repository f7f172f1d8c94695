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

The catalog: settings, descriptors and options, importing neither MPI nor numpy; the
persistent requests and timed loops are commbench.suites.mpi4.kernels, the overlap and
pure kernels IMB-NBC's (commbench.suites.nbc.kernels), all named as base.Lazy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from commbench.option_types import ConfigError, Option
from commbench.suites import nbc
from commbench.suites.base import Family, FamilySettings, Lazy, mpi_initialized

F = "mpi4"
KERNELS = "commbench.suites.mpi4.kernels"


@dataclass(frozen=True)
class Mpi4Settings(FamilySettings):
    prefix: ClassVar[str] = "mpi4_"
    cpu_factor: float = 1.0  # computation per repetition = F x t_pure (IMB: 1)


# ---------------------------------------------------------------- descriptors

PURE_LOOP = Lazy(KERNELS, "pure_loop")
OVERLAPPED_LOOP = Lazy(KERNELS, "overlapped_loop")
KERNEL_PAIR = (
    Lazy(nbc.KERNELS, "overlap_kernel", (PURE_LOOP, OVERLAPPED_LOOP, Mpi4Settings)),
    Lazy(nbc.KERNELS, "pure_kernel", (PURE_LOOP,)),
)


def _persist_pair(stem: str, what: str):
    name = f"{stem}_persist"
    bind = Lazy(KERNELS, "bind", (stem,))
    return nbc.pair(
        F,
        stem,
        (name, f"{name}_pure"),
        KERNEL_PAIR,
        what.format(op=f"persistent MPI_{stem}_init", plain=f"{stem[:-1]}_persist"),
        Lazy(KERNELS, "once", (stem,)),
        setups=(Lazy(nbc.KERNELS, "overlap_setup", (Mpi4Settings, bind)), bind),
        teardown=Lazy(KERNELS, "free"),
        # IMB-MPI4's default list (src_cpp/MPI4/MPI4_benchmark.cpp: the DEFAULT flags, in
        # registration order): every _persist but Allgather_persist, whose flag is commented
        # out there; tests/unit/test_mpi4.py holds the list
        default=stem != "Allgather" and stem not in nbc.OWN,
        native="persist",
    )


BENCHMARKS = tuple(b for stem, what in nbc.OPERATIONS + nbc.OURS for b in _persist_pair(stem, what))


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
    does not load the MPI library to parse a run (base.mpi_initialized): the job checks."""
    MPI = mpi_initialized()
    if MPI is None:
        return
    from commbench import mpilib
    from commbench.suites.mpi4 import kernels

    problem = missing(kernels.probe(), mpilib.here().describe(), MPI.Get_version())
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
