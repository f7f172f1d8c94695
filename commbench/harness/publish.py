"""What a row of the harness becomes: its records, built on world rank 0.

The fields every record of a row shares; the gather of every rank's times and
check defect to world rank 0 (with --samples K and --precision, every sample
and how each group's row ended) and the record built there, which also counts
the row's check verdict; every rank's per-repetition times (--per-iteration);
the rows without numbers (a time limit, -mem, an int overflow); and the LiveRow
that a signal must not lose. commbench.harness.core measures the rows.
"""

from __future__ import annotations

import itertools
from typing import Any

from commbench import policy, records
from commbench.harness import iteration_summary, iteration_times
from commbench.harness.context import Context
from commbench.harness.live import LiveRow, first, median_run
from commbench.harness.plan import Plan
from commbench.harness.precision import worst
from commbench.harness.rounds import taken
from commbench.session import Session
from commbench.suites.base import Benchmark


class Publisher:
    """The harness's records of one run, and its check verdicts by benchmark."""

    def __init__(self, session: Session, plan: Plan):
        self.session = session
        self.cfg = session.cfg
        self.plan = plan
        self.world = session.comm
        self.world_rank = session.rank
        self.world_size = session.size
        self.checked: dict[str, bool] = {}
        # how a row's --samples are taken (harness.rounds), once for the run
        self.taken = taken(self.cfg) if getattr(self.cfg, "measuring", None) else None
        # --precision: (group, how this rank's row ended), gathered with the row
        self.outcome: tuple[int, dict] | None = None
        self.positions = itertools.count()  # --shuffle: rows in the order measured
        self.position: int | None = None  # --shuffle: the current row's place in that order
        # where the rows without numbers go: the views, or with --samples in rounds the first
        # round's list, delivered after the last (commbench.harness.rounds)
        self.emit = session.emit

    @property
    def sampling(self) -> bool:
        """Rows of several samples, every one kept: --samples K or --precision."""
        return self.cfg.samples > 1 or self.cfg.measuring.precision is not None

    @property
    def measuring_each(self) -> bool:
        """Rows timed one repetition at a time: --per-iteration or --sync-start window."""
        return self.cfg.measuring.per_iteration or self.cfg.measuring.sync_start == "window"

    def failures(self) -> int:
        """The benchmarks whose check failed at some row."""
        return sum(1 for ok in self.checked.values() if not ok)

    def live_row(self, bench: Benchmark, row: dict, n: int, engine: str) -> LiveRow:
        """What a signal keeps of a row of samples (commbench.harness.live)."""
        secs, k = self.plan.row_budget()
        target = self.cfg.measuring.precision
        return LiveRow(
            bench,
            row,
            n,
            engine,
            k,
            self.world_size,
            self.make_record,
            precision=target,
            budget_secs=secs if target is not None else None,
            taken=self.taken,
        )

    def publish(
        self, bench: Benchmark, row: dict, n: int, runs: list, defect: Any, engine: str
    ) -> records.Measurement | None:
        """Gather every rank's times to world rank 0 and build the row's record there."""
        self.session.progress("the gather to rank 0")
        t = (runs[0] if len(runs) == 1 else median_run(runs)) if runs else None
        gathered = self.world.gather((t, defect), root=0)
        extra: dict[str, Any] = {"engine": engine}
        # --samples K, --precision: the row from each rank's median, every sample kept
        if self.sampling:
            per_rank = self.world.gather([first(r) for r in runs] if runs else None, root=0)
            if self.world_rank == 0:
                extra["samples"] = records.sample_stats(per_rank, bench.time_factor)
                if extra["samples"]:
                    extra["samples"]["taken"] = self.taken
                if extra["samples"] and extra["samples"]["k"] < self.cfg.samples:  # cut by -time
                    extra["samples"]["k_requested"] = self.cfg.samples
                extra["rank_samples"] = per_rank
        if self.cfg.measuring.precision is not None:
            outcomes, self.outcome = self.world.gather(self.outcome, root=0), None
            if self.world_rank == 0:
                extra["precision"] = worst(outcomes)
        if self.position is not None:
            extra["position"] = self.position
        if self.world_rank != 0:
            return None
        return self.make_record(bench, row, n, gathered, extra=extra)

    def per_iteration(
        self, ctx: Context | None, rec: records.Measurement | None, bench: Benchmark
    ) -> records.Measurement | None:
        """Every rank's per-repetition times to world rank 0: the row's record there with them
        (commbench.harness.iteration_summary); collective over the world."""
        if not self.measuring_each:
            return rec
        self.session.progress("the gather of per-repetition times to rank 0")
        gathered = self.world.gather(iteration_times.data(ctx), root=0)
        if rec is None:
            return None
        return iteration_summary.attach(
            rec, gathered, bench.time_factor, self.cfg.measuring.per_iteration
        )

    def row(
        self, bench: Benchmark, np_: int, groups: list, mode: str, x: int | None, turnover: float
    ) -> dict:
        """The fields every record of a row shares."""
        return dict(
            benchmark=bench.name,
            family=bench.family,
            kind=bench.kind,
            np_=np_,
            mode=mode,
            x=x,
            groups=groups,
            world_size=self.world_size,
            components=list(bench.components),
            turnover=turnover,
        )

    def make_record(
        self,
        bench: Benchmark,
        base: dict,
        n: int,
        gathered: list,
        extra: dict | None = None,
        **fields,
    ) -> records.Measurement:
        comps = list(bench.components)
        rank_times: dict[str, list[float | None]] = {c: [] for c in comps}
        defects = [d for _, d in gathered if d is not None]
        for t, _ in gathered:
            vals = t if isinstance(t, tuple) else (t,)
            for c, v in zip(comps, vals if t is not None else (None,) * len(comps)):
                rank_times[c].append(None if v is None else v * bench.time_factor)
        defect = max(defects) if defects else None
        if self.cfg.check and bench.expected is not None:
            defect = defect or 0.0  # verified, nothing received (e.g. Bcast at NP=1)
            ok = defect is None or defect <= policy.TOL
            self.checked[bench.name] = self.checked.get(bench.name, True) and ok
        return records.build(
            repetitions=n, rank_times=rank_times, defects=defect, extra=extra, **base, **fields
        )

    def emit_status(
        self, base: dict, status: str, message: str, engines: list[str] | None = None
    ) -> None:
        """A row without numbers; one per engine when given (the later ones held to their
        tables)."""
        if self.world_rank == 0:
            for e, engine in enumerate(engines or [None]):
                extra = ({"engine": engine} if engine else {}) | (
                    {} if self.position is None else {"position": self.position}
                )
                rec = records.build(
                    repetitions=0,
                    rank_times={c: [None] * self.world_size for c in base["components"]},
                    extra=extra or None,
                    status=status,
                    message=message,
                    **base,
                )
                self.emit(rec, hold=e > 0)
