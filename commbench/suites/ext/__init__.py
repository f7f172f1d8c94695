"""IMB-EXT: MPI-2 one-sided communication, active target (spec §9).

"Assured completion" is MPI_Win_fence(0). Unidir_*/Bidir_*/Accumulate run an
AGGREGATE table (n transfers to disjoint window slots, then one fence) and a
NON-AGGREGATE table (a fence after every transfer); ranks without a transfer
role execute the same fences. The window is created per size over the receive
buffer (Put, Accumulate) or the send buffer (Get) and opened with a fence in
the descriptor's setup (spec §6.5); Window creates its own windows inside the
timed loop. All EXT sizes are multiples of 4 (spec §4). Every benchmark has a C
timed loop (native patterns ext_*, commbench/native/kernels.c) making the same calls.

The catalog: the descriptors, importing neither MPI nor numpy; the kernels and verifiers
are commbench.suites.ext.kernels, the window set-up commbench.suites.onesided (base.Lazy).
"""

from __future__ import annotations

from commbench.suites.base import GET, PUT, TWO, Benchmark, Family, Kind, Lazy, xp

F = "ext"
AGG, NONAGG = "AGGREGATE", "NON-AGGREGATE"
MODES = (AGG, NONAGG)  # aggregate first (spec §9)
KERNELS = "commbench.suites.ext.kernels"
ONESIDED = "commbench.suites.onesided"


# ---------------------------------------------------------------- descriptors


def _pair(name, desc):
    """Unidir_/Bidir_ Get/Put: its kernel, window and verifier follow from the name."""
    op, bidir = name.split("_")[1].lower(), name.startswith("Bidir")
    return Benchmark(
        name,
        F,
        Kind.SINGLE,
        Lazy(KERNELS, op, (bidir,)),
        desc,
        unit=4,
        procs=TWO,
        modes=MODES,
        slots=True,
        setup=Lazy(ONESIDED, "setup_window", (GET if op == "get" else PUT, 1, True)),
        teardown=Lazy(ONESIDED, "free_window"),
        expected=Lazy(KERNELS, "check_pair", (bidir, 1)),
        fit=True,
        native="ext_" + op + ("_bidir" if bidir else ""),
    )


BENCHMARKS = (
    Benchmark(
        "Window",
        F,
        Kind.COLLECTIVE,
        Lazy(KERNELS, "window"),
        "MPI_Win_create(X) / fence / 1-byte put to self / fence / MPI_Win_free on all ranks",
        buffers=lambda x, np_: (xp(x), xp(x)),
        unit=4,
        nonaggr_cap=True,
        native="ext_window",
    ),  # no verifier: spec §14.3 gives Window no defects column
    _pair("Unidir_Get", "rank 1 MPI_Get of X bytes from rank 0's window, fence completion"),
    _pair("Unidir_Put", "rank 0 MPI_Put of X bytes into rank 1's window, fence completion"),
    _pair("Bidir_Get", "both ranks MPI_Get X bytes from each other, fence completion"),
    _pair("Bidir_Put", "both ranks MPI_Put X bytes into each other's window, fence completion"),
    Benchmark(
        "Accumulate",
        F,
        Kind.COLLECTIVE,
        Lazy(KERNELS, "accumulate"),
        "every rank MPI_Accumulate of X/4 floats (MPI_SUM) into rank 0's window, fence completion",
        unit=4,
        modes=MODES,
        slots=True,
        setup=Lazy(ONESIDED, "setup_window", (PUT, 4, True)),
        teardown=Lazy(ONESIDED, "free_window"),
        expected=Lazy(KERNELS, "check_accumulate"),
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
