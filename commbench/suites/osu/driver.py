"""The osu procedure: OSU's measurement of one benchmark, type and size, and its record.
The harness (commbench.harness.rows) runs the rows: their order, samples and progress.

Per benchmark and -T type: a unit (buffers of the largest size: OsuCtx); per engine
(--engine native|mpi4py|both) and size: OSU's counts (spec.Defaults.counts:
-i/-x, else the program's small and large counts), the benchmark's prepare,
MPI_Barrier, the warm-up iterations, the timed iterations (each timed alone
on the timing ranks; engine.loop: one C call), or under -c OSU's validated
rounds (engine.checked_rounds; the one-sided programs: one validation round
after the timed ones; the receivers count wrong bytes, the sum over ranks is
the record's defects), release; rank 0 turns the per-iteration seconds into
the row (bench.row). A row whose validation failed counts as a check failure
(exit status 1).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from commbench import records
from commbench.native import osu as native_osu
from commbench.session import Session
from commbench.suites.osu.context import OsuCtx
from commbench.suites.osu.engine import checked_rounds, loop
from commbench.suites.osu.settings import VALIDATION_WARMUP, OsuSettings, sizes
from commbench.suites.osu.spec import OsuBenchmark, unfit
from commbench.suites.procedure import Procedure, Row, Unit
from commbench.suites.procedure import engines as procedure_engines

F = "osu"
KIND = {
    "latency": records.Kind.SINGLE.value,
    "bandwidth": records.Kind.RATE.value,
    "rma_latency": records.Kind.SINGLE.value,
    "collective": records.Kind.COLLECTIVE.value,
    "sync": records.Kind.SYNC.value,
    "overlap": records.Kind.SINGLE.value,
    "nbc": records.Kind.OVERLAP.value,
    "nbc_sync": records.Kind.OVERLAP_SYNC.value,
    "neighbor": records.Kind.COLLECTIVE.value,
    "mbw_mr": records.Kind.RATE.value,
    "fan": records.Kind.RATE.value,
    "init": records.Kind.SYNC.value,
}


def engines(session: Session, bench: OsuBenchmark, cache: dict) -> dict[str, object]:
    """{engine: the group's native runner, or None for the mpi4py loop}, agreed by every rank,
    resolved once per group of programs (cache)."""
    if not bench.native:
        return {"mpi4py": None}
    if bench.group not in cache:
        cache[bench.group] = procedure_engines(
            session, lambda: native_osu.resolve(session.comm, bench.group)
        )
    return cache[bench.group]


class OsuProcedure(Procedure):
    """The run's benchmarks: a unit per benchmark and -T type (an invalid one where OSU's
    program would stop), a row per size."""

    def __init__(self, session: Session):
        self.session = session
        self.s = OsuSettings.of(session.params)
        self.cache: dict = {}

    def units(self) -> Iterator[Unit]:
        from commbench.suites.osu import BY_NAME

        session, s, p = self.session, self.s, self.session.size
        for name in session.cfg.benchmarks:
            bench = BY_NAME[name]
            kind = KIND.get(bench.metric, bench.metric)
            why = unfit(bench, s, p)
            if why:  # OSU's program would stop with these words; the others of the run go on
                yield Unit(
                    name,
                    p,
                    kind=kind,
                    invalid=why,
                    extra={"title": bench.title, "metric": bench.metric},
                )
                continue
            runners = engines(session, bench, self.cache)
            for dtype in s.types:
                todo = sizes(bench, s, dtype, p)
                if todo:
                    yield OsuUnit(
                        name,
                        p,
                        [Row(name, p, size, dtype.upper()) for size in todo],
                        list(runners),
                        kind=kind,
                        session=session,
                        bench=bench,
                        s=s,
                        dtype=dtype,
                        runners=runners,
                    )


class OsuUnit(Unit):
    """One benchmark and type: its buffers (of the largest size) and OSU's procedure per size."""

    def __init__(
        self,
        *args,
        session: Session,
        bench: OsuBenchmark,
        s: OsuSettings,
        dtype: str,
        runners: dict,
        **kw,
    ):
        super().__init__(*args, **kw)
        self.session, self.bench, self.s, self.dtype, self.runners = (
            session,
            bench,
            s,
            dtype,
            runners,
        )
        self.ctx: OsuCtx | None = None

    def open(self) -> None:
        self.ctx = OsuCtx(
            self.session, self.bench, self.s, self.dtype, max(r.bytes or 0 for r in self.rows)
        )

    def close(self) -> None:
        if self.ctx is not None:
            self.ctx.free()
            self.ctx = None

    def measure(self, row: Row, engine: str) -> tuple:
        return measure(self.session, self.bench, self.ctx, self.s, self.runners[engine], row.bytes)

    def record(self, row: Row, engine: str, data: tuple) -> records.Measurement:
        n, warm, data, defects = data
        return record(self.bench, self.ctx, self.s, engine, row.bytes, n, warm, data, defects)


def measure(
    session: Session, bench: OsuBenchmark, ctx: OsuCtx, s: OsuSettings, runner, size: int
) -> tuple:
    """OSU's procedure at one size on this rank: (n, warm-up, the timed iterations' seconds
    (every rank's on rank 0 when the benchmark gathers), the wrong bytes of -c or None)."""
    comm, cfg = session.comm, session.cfg
    n, warm = bench.defaults.counts(size, s.iterations, s.warmup)
    ctx.at(size)
    if bench.prepare is not None:
        bench.prepare(ctx, size)
    times = np.zeros(n)
    defects = None
    if (
        cfg.check and bench.verify is not None and "u" in bench.takes
    ):  # OSU's -c: every round validated
        session.progress("validated rounds")
        u = VALIDATION_WARMUP if s.validation_warmup is None else s.validation_warmup
        if (
            bench.check_rounds is not None
        ):  # the nonblocking collectives' two phases, -u inside their loop

            def rounds(out, keep=None):
                return checked_rounds(bench, ctx, runner, size, warm, out, 1, False, True, keep)

            defects = comm.allreduce(bench.check_rounds(ctx, rounds, u, times))
        else:  # a barrier, -u untimed repetitions and a timed one per round
            defects = comm.allreduce(checked_rounds(bench, ctx, runner, size, warm, times, 1 + u))
    else:  # OSU's MPI_Barrier, warm-up and timed iterations, back to back
        session.progress("warm-up and the timed loop")
        loop(bench, ctx, runner, n, times, barrier=True, warm=warm)
    if (
        cfg.check and bench.verify is not None and defects is None
    ):  # one checked round after the timed ones
        session.progress("validation")
        ctx.fill(size)
        if bench.refill is not None:
            bench.refill(ctx, size)
        comm.Barrier()
        loop(bench, ctx, runner, 1, None)
        defects = comm.allreduce(bench.verify(ctx, size))
    if bench.release is not None:
        bench.release(ctx, size)
    data = comm.gather(times if ctx.timer else None, root=0) if bench.gather else times
    return n, warm, data, defects


def record(
    bench: OsuBenchmark,
    ctx: OsuCtx,
    s: OsuSettings,
    engine: str,
    size: int,
    n: int,
    warm: int,
    data,
    defects,
) -> records.Measurement:
    """OSU's row as a record (rank 0): the values bench.row computes, OSU's settings in extra."""
    p = ctx.p
    values = bench.row(ctx, s, data)
    timed = data if bench.gather else [data] + [None] * (p - 1)
    extra = {
        "engine": engine,
        "datatype": ctx.dtype.upper(),
        "warmup_iterations": warm,
        "title": bench.title,
        "metric": bench.metric,
        "percentiles": list(s.percentiles),
        "message_bytes": ctx.nbytes,
        "alloc": session_alloc(ctx),
    }
    if "W" in bench.takes:
        extra["window_size"] = ctx.window
    if (
        s.buffers
    ):  # OMB's buffer operands (D D): taken, and the buffers host memory, as OMB 7.4's CPU build
        extra.update(buffer_operands=s.buffers, buffers="host")
    if defects is not None:
        extra["validation"] = "Pass" if defects == 0 else "Fail"
        if "u" in bench.takes:  # every round validated (OSU's -c), after -u untimed repetitions
            extra["validated_rounds"] = (warm + n) * (
                2 if bench.check_rounds else 1
            )  # nbc: pure and overlap
            extra["validation_warmup"] = (
                VALIDATION_WARMUP if s.validation_warmup is None else s.validation_warmup
            )
    if bench.extra is not None:
        extra.update(bench.extra(ctx, s, extra))
    return records.Measurement(
        benchmark=bench.name,
        family=F,
        kind=KIND.get(bench.metric, bench.metric),
        np=p,
        mode=ctx.dtype.upper(),
        bytes=size,
        repetitions=n,
        groups=[list(range(p))],
        world_size=p,
        components=["t"],
        rank_times={"t": [float(np.mean(t)) if t is not None and len(t) else None for t in timed]},
        turnover=float(bench.directions) * ctx.window if bench.metric == "bandwidth" else 1.0,
        values=values,
        defects=float(defects) if defects is not None else None,
        extra=extra,
    )


def session_alloc(ctx: OsuCtx) -> str:
    return ctx.session.cfg.alloc


def procedure(session: Session) -> OsuProcedure:
    return OsuProcedure(session)
