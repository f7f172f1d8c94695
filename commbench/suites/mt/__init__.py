"""Family "mt": IMB-MT, the multithreaded benchmarks of IMB 2021.

Ten benchmarks (PingPongMT … AllReduceMT) run by T threads in every rank at
once, each on its own MPI_Comm_dup of the world (info key thread_id), under
MPI_THREAD_MULTIPLE; #bytes is the data of all T threads of a rank (IMB-MT's
weak scaling). Options, timing, output and -check are IMB-MT 2021.11's.

A procedure of its own (commbench.suites.procedure), not per-size kernels,
which the harness times one loop per rank with IMB's dynamic repetitions
over -msglog sizes and reduces over ranks.
IMB-MT has fixed repetitions, sizes from -count, T timed loops per rank (point
to point: one region per thread after a warm-up and a barrier; collectives:
each call timed alone, five barriers after it), statistics over all threads
and its own columns: a unit per benchmark measures each count on the engine's
threads into one records.Measurement; the harness (commbench.harness.rows)
runs the rows; commbench.views.mt_text prints them.

Engines: native (default) runs the threads in C (commbench/native/mt.c, POSIX
threads, no GIL); mpi4py runs them as Python threads, which share the GIL:
mpi4py releases it inside every blocking MPI call, but the Python between the
calls runs one thread at a time, so its times include that serialisation.

Layout: the catalog (this module: options, configure, preamble, FAMILY; spec.py:
the benchmarks and settings; limits.py: what the threads ask of the MPI library
and the host), which imports neither numpy nor MPI and names the procedure as
base.Lazy; driver.py (the procedure, the threads' communicators and the records)
and python_loops.py (the mpi4py engine's threads).
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace

from commbench.option_types import C_INT_MAX, ConfigError, Option, choice, integer
from commbench.suites import mpi1
from commbench.suites.base import Family, Lazy
from commbench.suites.mt import limits
from commbench.suites.mt.spec import BENCHMARKS, WINDOW_DEFAULT, F, MtSettings
from commbench.suites.procedure import ROW_OPTIONS


def _counts(s: str) -> tuple[int, ...]:
    try:
        vals = tuple(int(v) for v in s.split(","))
    except ValueError:
        raise ConfigError(
            f"-count needs comma-separated element counts, got {s!r} (accepted: -count 1,2,4,8)"
        ) from None
    if any(v < 0 or v >= 2**31 for v in vals):
        raise ConfigError(f"-count {s}: counts are C ints >= 0 (accepted: -count 1,2,4,8)")
    return vals


# IMB-MPI1 2021 has -window_size too: one option for both families (the parser maps a
# name to one option), read into mt_window_size by configure().
WINDOW = next((o for o in mpi1.FAMILY.options if "-window_size" in o.names), None) or Option(
    ("-window_size",),
    "mt_window_size",
    "<W>",
    "mt: UniBandMT/BiBandMT messages in flight (default 64)",
    integer("-window_size", 1),
)


def _moves_data(b) -> bool:
    return b.checked


OPTIONS = (
    Option(
        ("-stride",),
        "mt_stride",
        "<S>",
        "mt: partner distance of the point-to-point benchmarks (default 0: P/2)",
        integer("-stride", 0, C_INT_MAX),
        uses=lambda b: b.paired,
    ),
    Option(
        ("-warmup",),
        "mt_warmup",
        "<N>",
        "mt: warm-up repetitions (default 100)",
        integer("-warmup", 0, C_INT_MAX),
    ),
    Option(
        ("-repeat",),
        "mt_repeat",
        "<N>",
        "mt: timed repetitions (default 1000)",
        integer("-repeat", 1, C_INT_MAX),
    ),
    WINDOW,
    Option(
        ("-barrier",),
        "mt_barrier",
        "<on|off|special>",
        "mt: barrier before timing and after each collective "
        "call: MPI_Barrier, none, or a dissemination of empty Sendrecvs (default on)",
        choice("-barrier", ("on", "off", "special")),
        uses=_moves_data,
    ),
    Option(
        ("-count",),
        "mt_count",
        "<n[,n…]>",
        "mt: message sizes in -datatype elements per thread (default 1,2,4,8)",
        _counts,
        uses=_moves_data,
    ),
    Option(
        ("-malloc_align",),
        "mt_malloc_align",
        "<bytes>",
        "mt: buffer alignment (default 64)",
        integer("-malloc_align", 1, C_INT_MAX),
        uses=_moves_data,
    ),
    Option(
        ("-malloc_algo",),
        "mt_malloc_algo",
        "<serial|continuous|parallel>",
        "mt: buffers allocated by the "
        "first thread, as one block, or by each thread (default serial)",
        choice("-malloc_algo", ("serial", "continuous", "parallel")),
        uses=_moves_data,
    ),
    Option(
        ("-datatype",),
        "mt_datatype",
        "<int|char>",
        "mt: element type of -count (default int)",
        choice("-datatype", ("int", "char")),
        uses=_moves_data,
    ),
    Option(("-noheader",), "mt_noheader", "", "mt: no 'MT part' banner"),
    Option(
        ("--mt-threads",),
        "mt_threads",
        "<T>",
        "mt: threads per rank (default $OMP_NUM_THREADS, as IMB-MT; "
        "else the CPUs this process may use)",
        integer("--mt-threads", 1, C_INT_MAX),
    ),
)


def default_threads(env=os.environ) -> int:
    """IMB-MT's thread count: OMP_NUM_THREADS's first value (OpenMP's rule), else the CPU count.

    `commbench` sets OMP_NUM_THREADS=1 for its processes unless the user set it (one
    BLAS thread per rank) and says so in COMMBENCH_OMP_DEFAULTED: then the CPU count."""
    first = (
        ""
        if env.get("COMMBENCH_OMP_DEFAULTED")
        else env.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    )
    if first.isdigit() and int(first) > 0:
        return int(first)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def configure(cfg):
    """Record the thread count, and -window_size under mt_window_size with IMB-MT's default."""
    p = dict(cfg.params)
    p.setdefault("mt_threads", default_threads())
    if WINDOW.dest != "mt_window_size":
        shared = p.pop(WINDOW.dest, None)
        p["mt_window_size"] = shared if WINDOW.dest in cfg.given else WINDOW_DEFAULT
    return replace(cfg, params=p)


def memory(params: dict, size: int) -> tuple[int, str]:
    s, big = MtSettings.of(params), max(MtSettings.of(params).count, default=0)
    return s.threads * (
        3 * big * s.unit + 2 * s.malloc_align
    ), f"mt: --mt-threads {s.threads} x 3 x the largest -count {big} x {s.unit} bytes"


def gil_note() -> list[str]:
    if hasattr(sys, "_is_gil_enabled") and not sys._is_gil_enabled():
        return ["# mpi4py engine: Python threads on a free-threaded Python (no GIL)"]
    return [
        "# mpi4py engine: the Python threads of a rank share one GIL. mpi4py releases it inside",
        "#   each blocking MPI call, so threads overlap in MPI, but the Python between calls runs",
        "#   one thread at a time and a thread back from MPI waits for the GIL: the times include",
        "#   that serialisation (docs/mt.md); --engine native runs C threads without it",
    ]


def preamble(cfg) -> list[str]:
    s = MtSettings.of(cfg.params)
    lines = [
        f"# Threads per rank      : {s.threads} (each on its own MPI_Comm_dup of the world)",
        f"# Engine                : {cfg.engine}"
        + (
            " (C POSIX threads, commbench/native/mt.c)"
            if cfg.engine != "mpi4py"
            else " (Python threads)"
        ),
    ]
    return lines + (gil_note() if cfg.engine != "native" else [])


FAMILY = Family(
    name=F,
    title="IMB-MT",
    part="MT part",
    benchmarks=BENCHMARKS,
    description=(
        "IMB-MT: the MPI-1 patterns from T threads per rank, one communicator each "
        "(-thread_level multiple)"
    ),
    aliases=("IMB-MT",),
    options=OPTIONS,
    configure=configure,
    validate=limits.validate,
    preamble=preamble,
    procedure=Lazy("commbench.suites.mt.driver", "procedure"),  # the ranks import it
    view="mt",
    honours=ROW_OPTIONS | {"check", "engine"},
    memory=memory,
)
