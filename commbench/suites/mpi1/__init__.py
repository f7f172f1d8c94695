"""IMB-MPI1: blocking point-to-point and collectives (spec §8).

Each benchmark is a descriptor plus a kernel of a few lines: the timed loop
between two MPI.Wtime() calls, with buffer specs prebuilt by the harness.
Kernels return seconds per repetition on this rank.

The catalog: every descriptor, IMB's order and the family's options, importing neither MPI
nor numpy. The kernels and verifiers are named as base.Lazy: the point-to-point ones are
commbench.suites.mpi1.pt2pt, the collectives' commbench.suites.mpi1.collectives, IMB 2021's
additions commbench.suites.mpi1.imb2021.
"""

from __future__ import annotations

import dataclasses

from commbench.option_types import ConfigError, Option, choice, integer
from commbench.policy import DATA_TYPES
from commbench.suites import collops
from commbench.suites.base import TWO, Benchmark, Family, Kind, Lazy, Procs, hooks, same, xp

F = "mpi1"
PT2PT = "commbench.suites.mpi1.pt2pt"
COLL = "commbench.suites.mpi1.collectives"
IMB2021 = "commbench.suites.mpi1.imb2021"


_pt2pt = hooks(PT2PT)
_coll = hooks(COLL)
_imb2021 = hooks(IMB2021)


# ---------------------------------------------------------------- collectives


def coll(name, kernel, expected, desc, buffers=same, unit=1, root_based=False, since="", **more):
    """A collective of IMB-MPI1; unit 4 marks a reduction (-red_data_type, float by default);
    `more`: further Benchmark fields."""
    default = {"default": False, "default_in": (since,)} if since else {}
    return Benchmark(
        name,
        F,
        Kind.COLLECTIVE,
        kernel,
        desc,
        buffers=buffers,
        unit=unit,
        **default,
        typed="red" if unit == 4 else "data",
        root_based=root_based,
        expected=expected,
        native=name.lower(),
        int_extent=_last_displacement if name.endswith("v") else None,
        **more,
    )


def _last_displacement(x: int, np_: int) -> int:
    """The v-collectives' displacements are j*X: the last one, (NP-1)*X (IMB: "rank*size")."""
    return (np_ - 1) * x


COLLECTIVES = (
    coll(
        "Allreduce",
        _coll("reduction", "Allreduce"),
        _coll("check_every_slot", "allreduce"),
        "MPI_Allreduce of X/4 floats, MPI_SUM",
        unit=4,
    ),
    coll(
        "Reduce",
        _coll("reduce"),
        _coll("check_as_root", "reduce"),
        "MPI_Reduce of X/4 floats to root i%NP",
        unit=4,
        root_based=True,
    ),
    coll(
        "Reduce_scatter",
        _coll("reduce_scatter"),
        _coll("check_every_slot", "reduce_scatter"),
        "MPI_Reduce_scatter of X/4 floats, even split (--methodology imb2021: X/4 to each)",
        unit=4,
        buffers_each=lambda x, np_: (np_ * xp(x), xp(x)),  # IMB 2021.11's NP·X/4 floats
    ),
    coll(
        "Allgather",
        _coll("allgather"),
        _coll("check_every_slot", "allgather"),
        "MPI_Allgather, X bytes from each",
        buffers=lambda x, np_: (xp(x), np_ * xp(x)),
    ),
    coll(
        "Allgatherv",
        _coll("allgatherv"),
        _coll("check_every_slot", "allgatherv"),
        "MPI_Allgatherv with the data of Allgather",
        buffers=lambda x, np_: (xp(x), np_ * xp(x)),
    ),
    coll(
        "Gather",
        _coll("gather", False),
        _coll("check_as_root", "gather"),
        "MPI_Gather of X bytes from each to root i%NP",
        buffers=lambda x, np_: (xp(x), np_ * xp(x)),
        root_based=True,
    ),
    coll(
        "Gatherv",
        _coll("gather", True),
        _coll("check_as_root", "gatherv"),
        "MPI_Gatherv with the data of Gather",
        buffers=lambda x, np_: (xp(x), np_ * xp(x)),
        root_based=True,
    ),
    coll(
        "Scatter",
        _coll("scatter", False),
        _coll("scatter_check", False, None),
        "MPI_Scatter of X bytes to each from root i%NP",
        buffers=lambda x, np_: (np_ * xp(x), xp(x)),
        root_based=True,
    ),
    coll(
        "Scatterv",
        _coll("scatter", True),
        _coll("scatter_check", True, None),
        "MPI_Scatterv with the data of Scatter",
        buffers=lambda x, np_: (np_ * xp(x), xp(x)),
        root_based=True,
    ),
    coll(
        "Alltoall",
        _coll("alltoall", False),
        _coll("check_every_slot", "alltoall"),
        "MPI_Alltoall, X bytes per pair",
        buffers=lambda x, np_: (np_ * xp(x), np_ * xp(x)),
    ),
    coll(
        "Alltoallv",
        _coll("alltoall", True),
        _coll("check_every_slot", "alltoallv"),
        "MPI_Alltoallv, X bytes per pair",
        buffers=lambda x, np_: (np_ * xp(x), np_ * xp(x)),
    ),
    coll(
        "Bcast",
        _coll("bcast"),
        _coll("bcast_check", None),
        "MPI_Bcast of X bytes from root i%NP",
        root_based=True,
    ),
    Benchmark(
        "Barrier",
        F,
        Kind.SYNC,
        _coll("barrier"),
        "MPI_Barrier",
        buffers=lambda x, np_: (0, 0),
        native="barrier",
    ),
)


def ours(o: collops.Op, like: Benchmark) -> Benchmark:
    """IMB-MPI1's benchmark of operation o (collops.OURS) from `like`'s: its buffers, unit and
    root policy; o's own call, data and verifier; run by name, not in IMB's default list."""
    return dataclasses.replace(
        like,
        name=o.method,
        kernel=_coll("kernel_like", o.like, o.method),
        expected=_coll("check_every_slot", o.name),
        description=f"MPI_{o.method} of X/4 floats: {o.what}",
        native=o.name,
        default=False,
        default_in=(),
    )


OURS = tuple(ours(o, next(b for b in COLLECTIVES if b.native == o.like)) for o in collops.OURS)


# The verifiers that re-run their operation once per root, by MPI-1 name: (the verifier
# factory of collectives.py, its arguments before op_of). IMB-NBC and IMB-MPI4 build theirs
# with their own operation: root_swept(name, op_of), op_of a Lazy of their kernels.
ROOT_SWEPT = {
    "Scatter": ("scatter_check", (False,)),
    "Scatterv": ("scatter_check", (True,)),
    "Bcast": ("bcast_check", ()),
}


def root_swept(name: str, op_of: Lazy) -> Lazy:
    """The verifier of MPI-1 collective `name` (in ROOT_SWEPT) whose per-root sweep runs
    op_of(ctx) -> op(...), one operation of another family."""
    factory, args = ROOT_SWEPT[name]
    return _coll(factory, *args, op_of)


# ---------------------------------------------------------------- point to point


# PingPong and PingPing receive from MPI_ANY_SOURCE (from the partner under --methodology
# imb2021); IMB 2021's *SpecificSource and *AnySource fix the source and run only by name:
# (name suffix, the kernel's `specific`, the native pattern's suffix, what the suffix means)
SOURCES = (
    ("", None, "_select", ""),
    ("SpecificSource", True, "_specific", "receiving from the explicit partner rank"),
    ("AnySource", False, "", "receiving from MPI_ANY_SOURCE (IMB 2021's name)"),
)


def _single(stem, desc, factor=1.0):
    """PingPong or PingPing, then its forms with a fixed source (SOURCES)."""
    return tuple(
        Benchmark(
            stem + suffix,
            F,
            Kind.SINGLE,
            _pt2pt(stem.lower(), specific),
            f"{stem} {what}" if suffix else desc,
            time_factor=factor,
            typed="data",
            default=not suffix,
            procs=TWO,
            expected=_pt2pt("from_partner"),
            native=stem.lower() + pattern,
            fit=True,
        )
        for suffix, specific, pattern, what in SOURCES
    )


def messages(np_: int, bidirectional: bool, window: int) -> float:
    """Uniband/Biband's messages per repetition: the window, over NP/2 pairs, both ways for
    Biband."""
    return (2 if bidirectional else 1) * window * (np_ // 2)


_DESCRIPTORS = (
    *_single(
        "PingPong",
        "half round trip of a message between two processes (receive from MPI_ANY_SOURCE; "
        "the partner with --methodology imb2021)",
        factor=0.5,
    ),
    *_single(
        "PingPing",
        "both processes send at once: a message obstructed by an oncoming one (source as PingPong)",
    ),
    Benchmark(
        "Sendrecv",
        F,
        Kind.PARALLEL,
        _pt2pt("sendrecv"),
        "periodic chain of MPI_Sendrecv (bidirectional bandwidth at NP=2)",
        turnover=lambda np_: 2.0,
        expected=_pt2pt("check_sendrecv"),
        native="sendrecv",
        fit=True,
        typed="data",
    ),
    Benchmark(
        "Exchange",
        F,
        Kind.PARALLEL,
        _pt2pt("exchange"),
        "each rank exchanges with both neighbours (Isend, Isend, Recv, Recv, Waitall)",
        buffers=lambda x, np_: (2 * xp(x), xp(x)),
        turnover=lambda np_: 4.0,
        expected=_pt2pt("check_exchange"),
        native="exchange",
        fit=True,
        typed="data",
    ),
    *COLLECTIVES,
    *OURS,
    # IMB 2021's additions (commbench.suites.mpi1.imb2021); Uniband/Biband only by name, as there.
    *(
        Benchmark(
            name,
            F,
            Kind.RATE,
            _imb2021("windowed", bi),
            what,
            default=False,
            turnover=lambda np_, bi=bi: messages(np_, bi, 1),
            procs=Procs(minimum=2),
            expected=_imb2021("check_windowed", bi),
            native=name.lower(),
            typed="data",
        )
        for name, bi, what in (
            (
                "Uniband",
                False,
                "windows of -window_size Isends from each rank of the first half to its "
                "partner in the second, one ack each: Mbytes/sec and Msg/sec",
            ),
            ("Biband", True, "Uniband in both directions at once"),
        )
    ),
    coll(
        "Reduce_local",
        _imb2021("reduce_local"),
        _imb2021("check_reduce_local"),
        "MPI_Reduce_local of X/4 floats, MPI_SUM, no communication",
        unit=4,
        since="imb2021",
    ),
    coll(
        "Reduce_scatter_block",
        _imb2021("reduce_scatter_block"),
        _imb2021("check_reduce_scatter_block"),
        "MPI_Reduce_scatter_block of NP X/4 floats, X/4 to each",
        unit=4,
        buffers=lambda x, np_: (np_ * xp(x), xp(x)),
        since="imb2021",
    ),
)

# Default execution order of the reference (spec §8, A18), with IMB 2021's additions
# where IMB 2021.11 lists them (Reduce_local after Reduce, …; Uniband, Biband last).
_ORDER = [
    "PingPong",
    "PingPongSpecificSource",
    "PingPongAnySource",
    "PingPing",
    "PingPingSpecificSource",
    "PingPingAnySource",
    "Sendrecv",
    "Exchange",
    "Allreduce",
    "Reduce",
    "Reduce_local",
    "Reduce_scatter",
    "Reduce_scatter_block",
    "Allgather",
    "Allgatherv",
    "Gather",
    "Gatherv",
    "Scatter",
    "Scatterv",
    "Alltoall",
    "Alltoallv",
    "Bcast",
    "Barrier",
    "Uniband",
    "Biband",
]
# commbench's own collectives (collops.OURS) come last, in their declared order
BENCHMARKS = tuple(
    sorted(_DESCRIPTORS, key=lambda b: _ORDER.index(b.name) if b.name in _ORDER else len(_ORDER))
)


def _window(s: str) -> int:
    w = integer("-window_size", 1)(s)
    if w > 65536:
        raise ConfigError(
            f"-window_size must be <= 65536, got {w} (accepted: -window_size 1..65536)"
        )
    return w


FAMILY = Family(
    name=F,
    title="IMB-MPI1",
    part="MPI-1 part",
    benchmarks=BENCHMARKS,
    description="blocking point-to-point and collectives (Intel MPI Benchmarks MPI-1 part)",
    aliases=("IMB-MPI1",),
    methodology=True,
    options=(
        Option(
            ("-window_size",),
            "mpi1_window_size",
            "<W>",
            "Uniband/Biband: messages in flight per repetition (default 256, as IMB 2021)",
            _window,
            default=256,
        ),
        Option(
            ("-data_type",),
            "mpi1_data_type",
            "<type>",
            "datatype of the messages: byte (default), char, int, float, double (IMB 2021)",
            choice("-data_type", tuple(DATA_TYPES)),
            default="byte",
        ),
        Option(
            ("-red_data_type",),
            "mpi1_red_data_type",
            "<type>",
            "datatype of the reductions: float (default), char, int, double (IMB 2021)",
            choice("-red_data_type", tuple(t for t in DATA_TYPES if t != "byte")),
            default="float",
        ),
    ),
)
