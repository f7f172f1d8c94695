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

The catalog: settings, operations, descriptors and options, importing neither MPI nor
numpy; the call shapes, timed loops and set-ups are commbench.suites.nbc.kernels (base.Lazy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from commbench.option_types import ConfigError, Option
from commbench.suites import collops, mpi1
from commbench.suites.base import Benchmark, Family, FamilySettings, Kind, Lazy

F = "nbc"
KERNELS = "commbench.suites.nbc.kernels"

# Spec §15: CHECK mode SHOULD shrink the CPU target (reference 0.001 s); timings
# are not valid there anyway, so the compute per repetition is capped.
CHECK_CPU_SECS = 0.001


@dataclass(frozen=True)
class NbcSettings(FamilySettings):
    prefix: ClassVar[str] = "nbc_"
    cpu_factor: float = 1.0  # computation per repetition = F x t_pure (IMB: 1)


# (MPI-1 name, what one call does: {op} is the MPI function, {plain} the family's name of
# the operation without v). Its call's shape is collops' (Op.shape: kernels.shape_of).
# Default order of the reference (spec §11), held by tests/unit/test_nbc.py.
OPERATIONS = (
    ("Bcast", "{op} of X bytes from root i%NP"),
    ("Allgather", "{op}, X bytes from each"),
    ("Allgatherv", "{op} with the data of {plain}"),
    ("Gather", "{op} of X bytes from each to root i%NP"),
    ("Gatherv", "{op} with the data of {plain}"),
    ("Scatter", "{op} of X bytes to each from root i%NP"),
    ("Scatterv", "{op} with the data of {plain}"),
    ("Alltoall", "{op}, X bytes per pair"),
    ("Alltoallv", "{op}, X bytes per pair"),
    ("Reduce", "{op} of X/4 floats to root i%NP, MPI_SUM"),
    ("Reduce_scatter", "{op} of X/4 floats, even split"),
    ("Allreduce", "{op} of X/4 floats, MPI_SUM"),
    ("Barrier", "{op}"),
)


# commbench's own operations (collops.OURS), each shaped as the operation it is declared
# like; run by name (not in IMB-NBC's or IMB-MPI4's default list)
OURS = tuple((o.method, "{op} of X/4 floats: " + o.what) for o in collops.OURS)
OWN = frozenset(stem for stem, _ in OURS)

OVERLAP_COMPONENTS = ("t_ovrl", "t_pure", "t_cpu")


def nbc_name(stem: str) -> str:
    return "I" + stem.lower()


def cpu_target(t_pure: float, factor: float, check: bool) -> float:
    """Seconds of computation per repetition: t_pure scaled, capped in CHECK mode."""
    target = factor * t_pure
    return min(target, CHECK_CPU_SECS) if check else target


# ---------------------------------------------------------------- descriptors


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
    (mpi1.ROOT_SWEPT) re-run with op_of(ctx) -> op(*args), one operation of the family (a
    Lazy of its kernels);
    `native`: the C loop of both (commbench/native/kernels.c, a START row)."""
    ref = mpi1.FAMILY.get(blocking)
    if ref is None:
        raise ValueError(f"{blocking!r} is not an MPI-1 benchmark")
    sync = ref.kind == Kind.SYNC
    expected = ref.expected
    if blocking in mpi1.ROOT_SWEPT:  # verified once per root with this family's operation
        expected = mpi1.root_swept(blocking, op_of)
    common = {
        "buffers": ref.buffers,
        "buffers_each": ref.buffers_each,
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


def _nbc_pair(stem: str, what: str) -> tuple[Benchmark, Benchmark]:
    name = nbc_name(stem)
    return pair(
        F,
        stem,
        (name, f"{name}_pure"),
        (Lazy(KERNELS, "overlap", (stem,)), Lazy(KERNELS, "pure", (stem,))),
        what.format(op=f"MPI_{name}", plain=nbc_name(stem[:-1])),
        Lazy(KERNELS, "started_and_waited", (name,)),
        setups=(Lazy(KERNELS, "overlap_setup", (NbcSettings, None)), None),
        default=stem not in OWN,
        native=name.lower(),
    )


BENCHMARKS = tuple(b for stem, what in OPERATIONS + OURS for b in _nbc_pair(stem, what))


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
