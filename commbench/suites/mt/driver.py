"""The mt procedure: IMB-MT's measurement of one benchmark at one count on T threads per
rank (the engine's: C POSIX threads, commbench/native/mt.c, or Python threads,
python_loops.py), and its record. The family's catalog (commbench.suites.mt) names
`procedure` as base.Lazy; the harness (commbench.harness.rows) runs the rows.
"""

from __future__ import annotations

from collections.abc import Iterator

from mpi4py import MPI

from commbench import records
from commbench.native import mt as native_mt
from commbench.option_types import RunError
from commbench.session import Session
from commbench.suites.mt import FAMILY
from commbench.suites.mt.python_loops import PyRun
from commbench.suites.mt.spec import KIND, F, MtBench, MtSettings
from commbench.suites.procedure import Procedure, Row, Unit, engines


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
        self.comms = thread_comms(self.session.comm, self.s.threads)

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


def thread_comms(comm, n: int) -> list:
    """One duplicate of comm per thread, tagged with IMB-MT's info key thread_id; an MPI
    whose limit validate (commbench.suites.mt.limits) did not know ends the run naming it,
    not with its own abort."""
    out: list = []
    try:
        for i in range(n):
            info = MPI.Info.Create({"thread_id": str(i)})
            try:
                out.append(comm.Dup(info))
            finally:
                info.Free()
    except MPI.Exception as e:
        for c in out:
            c.Free()
        raise RunError(
            f"--mt-threads {n}: this MPI created {len(out)} communicators for the threads and "
            f"refused the next ({e.Get_error_string().splitlines()[-1].strip()}); each thread "
            f"needs one (accepted: --mt-threads {max(1, len(out))} or fewer)"
        ) from None
    return out
