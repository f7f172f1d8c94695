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
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import replace

from commbench import records
from commbench.native import mt as native_mt
from commbench.option_types import C_INT_MAX, ConfigError, Option, choice, integer
from commbench.session import Session
from commbench.suites import mpi1
from commbench.suites.base import Family
from commbench.suites.mt import limits
from commbench.suites.mt.python_loops import PyRun
from commbench.suites.mt.spec import BENCHMARKS, KIND, WINDOW_DEFAULT, F, MtBench, MtSettings
from commbench.suites.procedure import Procedure, Row, Unit, engines


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


# --------------------------------------------------- the procedure (commbench.harness.rows runs it)


class MtProcedure(Procedure):
    """The run's benchmarks on T threads per rank: a unit per benchmark, a row per count;
    the threads' communicators are the whole run's."""

    def __init__(self, session: Session):
        self.session = session
        self.s = MtSettings.of(session.params)
        self.comms: list = []
        self.runners: dict = {}

    def open(self) -> None:
        self.runners = engines(self.session, lambda: native_mt.resolve(self.session.comm))
        self.comms = limits.thread_comms(self.session.comm, self.s.threads)

    def close(self) -> None:
        for c in self.comms:
            c.Free()
        self.comms = []

    def units(self) -> Iterator[Unit]:
        s, p = self.s, self.session.size
        for name in self.session.cfg.benchmarks:
            bench = FAMILY.get(name)
            counts = [0] if bench.columns == "barrier" else list(s.count)
            rows = [
                Row(name, p, None if bench.columns == "barrier" else c * s.unit * s.threads)
                for c in counts
            ]
            yield MtUnit(
                name,
                p,
                rows,
                list(self.runners),
                kind=KIND,
                procedure=self,
                bench=bench,
                counts=counts,
            )


class MtUnit(Unit):
    def __init__(self, *args, procedure: MtProcedure, bench: MtBench, counts: list[int], **kw):
        super().__init__(*args, **kw)
        self.proc, self.bench, self.counts = procedure, bench, dict(zip(self.rows, counts))

    def measure(self, row: Row, engine: str) -> list | None:
        proc, session = self.proc, self.proc.session
        got = _measure(
            session,
            proc.s,
            proc.comms,
            self.bench,
            self.counts[row],
            max(self.counts.values()),
            proc.runners[engine],
        )
        return session.comm.gather(got, root=0)

    def record(self, row: Row, engine: str, every: list) -> records.Measurement:
        session = self.proc.session
        return row_record(
            self.bench,
            self.proc.s,
            engine,
            self.counts[row],
            every,
            session.size,
            session.cfg.check,
        )


def procedure(session: Session) -> MtProcedure:
    return MtProcedure(session)


def _measure(
    session: Session, s: MtSettings, comms: list, bench: MtBench, count: int, alloc: int, runner
):
    check, corrupt = session.cfg.check, session.corrupt
    if runner is None:
        return PyRun(s, comms, session.comm, bench, count, alloc, check, corrupt).run()
    return runner.run(
        comms,
        session.comm,
        bench=native_mt.BENCH_CODES[bench.name],
        count=count,
        alloc_count=alloc,
        type_char=int(s.datatype == "char"),
        repeat=s.repeat,
        warmup=s.warmup,
        stride=s.stride,
        window=s.window_size,
        barrier=native_mt.BARRIER_CODES[s.barrier],
        check=int(check),
        align=s.malloc_align,
        algo=native_mt.ALLOC_CODES[s.malloc_algo],
        corrupt=int(corrupt),
    )


def row_record(
    bench: MtBench, s: MtSettings, engine: str, count: int, every: list, size: int, check: bool
):
    """IMB-MT's numbers from every rank's (seconds, took part, failures) per thread (world rank
    0)."""
    divider = bench.divide * (s.window_size if bench.window else 1)
    per_rep = 1.0 / (s.repeat * divider)
    nres = sum(sum(took) for _, took, _ in every)
    timed = [t * per_rep for times, took, _ in every for t, ok in zip(times, took) if ok]
    members = [r for r, (_, took, _) in enumerate(every) if any(took)]
    threads = [
        [t * per_rep if ok else None for t, ok in zip(times, took)] for times, took, _ in every
    ]
    total = count * s.unit * s.threads  # IMB-MT's #bytes: the data of all threads of a rank
    fails = [list(f) for _, _, f in every]
    return records.build(
        benchmark=bench.name,
        family=F,
        kind=KIND,
        np_=nres // s.threads,
        mode="",
        x=None if bench.columns == "barrier" else total,
        repetitions=s.repeat,
        groups=[members],
        world_size=size,
        components=["t"],
        rank_times={"t": [max((t for t in th if t is not None), default=None) for th in threads]},
        turnover=1.0,
        defects=float(sum(map(sum, fails))) if check and bench.checked else None,
        extra=_extra(bench, s, engine, count, nres, threads, fails if check else None),
        values=_values(bench, s, timed, nres, total),
        status=records.OK if timed else records.INVALID,
        message="" if timed else "NO SUCCESSFUL EXECUTIONS",
    )


def _extra(
    bench: MtBench, s: MtSettings, engine: str, count: int, nres: int, threads: list, fails
) -> dict:
    """What IMB-MT ran a row with, and every thread's time per repetition (None: it took no
    part) and -check failures (None without -check)."""
    extra = {
        "engine": engine,
        "threads": s.threads,
        "count": count,
        "datatype": s.datatype,
        "message_bytes": count * s.unit,
        "processes": nres // s.threads,
        "thread_times": threads,
        "repeat": s.repeat,
        "warmup": s.warmup,
        "barrier": s.barrier,
        "stride": s.stride,
        "columns": bench.columns,
        "check_failures": fails,
    }
    if bench.window:
        extra["window_size"] = s.window_size
    return extra


def _values(bench: MtBench, s: MtSettings, timed: list, nres: int, total: int) -> dict:
    """IMB-MT's columns over the nres threads that took part (timed: their seconds per
    repetition; total: #bytes): t_min, t_max, t_avg (usec) and, by the benchmark's columns,
    the bandwidth and message rate; none when no thread was timed."""
    if not timed:
        return {}
    t_avg, t_max = sum(timed) / nres, max(timed)
    v = {"t_min": min(timed) * 1e6, "t_max": t_max * 1e6, "t_avg": t_avg * 1e6, "t": t_max * 1e6}
    if bench.columns == "p2p":
        v["bytes_per_sec"] = total * bench.bw_factor / t_max if t_max > 0 else 0.0
    elif bench.columns == "rate":
        v["bytes_per_sec"] = total / s.threads * (nres // 2) / t_max if t_max > 0 else 0.0
        v["msgs_per_sec"] = float(int((nres // 2) / t_avg)) if t_avg > 0 else 0.0
    return v


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
    procedure=procedure,
    view="mt",
    honours=frozenset(
        {"check", "engine", "samples", "precision", "precision_budget", "shuffle", "time"}
    ),
    memory=memory,
)
