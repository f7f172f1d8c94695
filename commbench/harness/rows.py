"""The harness's loop for the families that bring a procedure (commbench.suites.procedure):
the order of their rows, the engines, invalid rows, the samples of every row, progress, the
watchdog's steps, what a signal keeps, and the extras every record carries.

One sample of a row is one whole measurement of it by the family's procedure (OSU's warm-up
and timed iterations; IMB-P2P's pauses, barriers and timed loop), built into the row's record
on world rank 0. Its value is the time `commbench compare` judges the row by
(records.compared_time), so the samples and the gate always speak of the same quantity.
--samples K takes K samples, cut short once they have taken -time seconds; --precision takes
them until the median is known within the target (commbench.harness.precision), the
decision agreed by every rank. The row published is the sample at the median (the lower of
the two middle ones for an even K), or the first whose validation failed, with every
sample's value under extra["samples"]. Without either option a row is one sample and its
record is the family's, unchanged.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass, field

from commbench import records
from commbench.harness import rounds
from commbench.harness.live import stopped_precision
from commbench.harness.plan import Plan
from commbench.harness.precision import least, repeat, sample_until
from commbench.harness.quiet import quiet_gc
from commbench.harness.rounds import Visit, taken
from commbench.session import Session
from commbench.suites import family as family_of
from commbench.suites.procedure import Procedure, Row, Unit


@dataclass
class Kept:
    """World rank 0: the samples of the row being measured, each its value (s) and record."""

    engine: str
    requested: int
    values: list[float] = field(default_factory=list)
    recs: list = field(default_factory=list)
    precision: float | None = None
    budget_secs: float | None = None  # --precision: the row's budget of seconds
    several: list | None = None  # the records of a measurement that makes several rows
    taken: str | None = None  # how the samples were taken (commbench.harness.rounds)
    started: float = field(default_factory=time.monotonic)

    def mine(self) -> list | None:
        """The watchdog's partial: rank 0 keeps the samples; the others have nothing to send."""
        return list(self.values) or None

    def record(self, partials: dict | None = None) -> records.Measurement | None:
        """The row stopped by a signal: its median sample so far, every completed sample kept."""
        if not self.recs:
            return None
        more = {}
        if self.precision is not None:
            more["precision"] = stopped_precision(
                self.precision,
                records.sample_stats([self.values]),
                self.started,
                self.budget_secs,
                self.requested,
            )
        return publish(
            self,
            True,
            "engine" in self.recs[0].extra,
            more,
            status=records.INTERRUPTED,
            message=f"stopped after {len(self.recs)} of {self.requested} samples; every completed "
            "sample is kept",
        )


def failed(rec: records.Measurement) -> bool:
    """Did the row's check fail (defects beyond the tolerance; None: not checked)?"""
    return records.check_verdict(rec.defects) == records.FAILED


def publish(
    kept: Kept, sampling: bool, engines: bool = True, more: dict | None = None, **fields
) -> records.Measurement:
    """The row's record from its samples: the median one (or the first that failed its check),
    a new record with the harness's extras (the family's is not changed)."""
    k = len(kept.recs)
    order = sorted(range(k), key=lambda i: kept.values[i])
    rec = kept.recs[next((i for i in range(k) if failed(kept.recs[i])), order[(k - 1) // 2])]
    extra = dict(rec.extra)
    if engines:  # a family with C loops: which engine measured the row
        extra["engine"] = kept.engine
    if sampling:
        stats = records.sample_stats([kept.values])
        stats["quantity"] = records.COMPARED.get(rec.kind, "t_max")
        if k < kept.requested and kept.precision is None:  # cut by -time
            stats["k_requested"] = kept.requested
        if kept.taken is not None:
            stats["taken"] = kept.taken
        extra["samples"] = stats
    return dataclasses.replace(rec, extra=extra | (more or {}), **fields)


class RowLoop:
    """Runs a Procedure on every rank; returns the number of rows whose check failed."""

    def __init__(self, session: Session):
        self.session = session
        self.cfg = cfg = session.cfg
        self.plan = Plan(cfg, session.size)
        self.family = family_of(cfg.family)
        self.precision = cfg.measuring.precision if getattr(cfg, "measuring", None) else None
        self.sampling = cfg.samples > 1 or self.precision is not None
        self.positions = 0
        self.taken = taken(cfg) if getattr(cfg, "measuring", None) else None
        self.rounds = rounds.for_run(cfg, self.plan.seed) if self.taken else None
        if self.rounds is not None:  # the first round's records wait for the last round
            session.live = self.rounds
        self.emit = self.rounds.emit if self.rounds is not None else session.emit
        if self.sampling and session.watchdog is not None:  # a signal keeps the row's samples
            session.watchdog.partial = lambda: (
                session.live.mine() if session.live is not None else None
            )

    def run(self, procedure: Procedure) -> int:
        """Every unit; the number of rows whose check failed (world rank 0's count, on every
        rank)."""
        fam, completed, count = self.family, False, 0
        try:
            if fam.start is not None:
                fam.start(self.session)
            procedure.open()
            try:
                for unit in self.plan.shuffled(list(procedure.units()), "units"):
                    count += self.unit(unit)
                if self.rounds is not None:
                    count += self.later_rounds()
            finally:
                procedure.close()
            completed = True
            return self.session.comm.bcast(count, root=0)
        finally:
            if fam.finish is not None:
                fam.finish(self.session, completed)

    def unit(self, unit: Unit) -> int:
        session = self.session
        session.progress("set-up", benchmark=unit.benchmark, np=unit.np)
        if unit.invalid is not None:
            if session.rank == 0:
                self.emit(
                    records.Measurement(
                        benchmark=unit.benchmark,
                        family=self.family.name,
                        kind=unit.kind,
                        np=unit.np,
                        mode="",
                        bytes=None,
                        repetitions=0,
                        status=records.INVALID,
                        message=unit.invalid,
                        world_size=session.size,
                        extra=dict(unit.extra),
                    )
                )
            return 0
        count = 0
        unit.open()
        try:
            for engine in unit.engines:
                rows = self.plan.shuffled(
                    unit.rows,
                    unit.benchmark,
                    str(unit.np),
                    engine,
                    *(r.mode for r in unit.rows[:1]),
                )
                for row in rows:
                    count += self.row(unit, row, engine)
        finally:
            unit.close()
        return count

    def row(self, unit: Unit, row: Row, engine: str) -> int:
        """Every sample of one row, then its record to the views; 1 when a check failed. In
        rounds: its first sample, the others in the later rounds."""
        session, comm = self.session, self.session.comm
        session.progress("the row's first sample", **row.where())
        secs, budget = self.plan.row_budget()
        kept = Kept(
            engine,
            budget,
            precision=self.precision,  # budget: --samples K without --precision
            budget_secs=secs if self.precision is not None else None,
            taken=self.taken,
        )
        take = self.taker(unit, row, engine, kept)
        self.positions += 1
        if self.rounds is not None:
            position = self.positions - 1 if self.plan.seed is not None else None
            visit = self.rounds.visit(id(unit), kept, (unit, row, engine, position))
            self.rounds.sample(visit, take)
            return 0
        if self.sampling and session.rank == 0:
            session.live = kept
        runs: list = []
        if self.precision is not None:
            outcome = sample_until(
                comm,
                take,
                runs,
                self.precision,
                (secs, budget),
                least(self.cfg.samples),
                session.beat,
            )
        else:
            repeat(comm, take, runs, self.cfg.samples, self.cfg.secs, session.beat)
        if session.rank != 0:
            return 0
        if kept.several is not None:  # its family takes no samples (Family.honours): as made
            for rec in kept.several:
                session.emit(rec)
            return sum(int(self.cfg.check and failed(r)) for r in kept.several)
        more = {"precision": outcome.as_dict()} if self.precision is not None else {}
        if self.plan.seed is not None:
            more["position"] = self.positions - 1
        rec = publish(kept, self.sampling, self.family.has_native, more)
        session.emit(rec)
        return int(self.cfg.check and failed(rec))

    def taker(self, unit: Unit, row: Row, engine: str, kept: Kept):
        """One sample of the row: a whole measurement, its record kept on world rank 0."""
        session = self.session

        def take() -> float:
            with quiet_gc():  # one whole measurement: no collection inside it (harness.quiet)
                data = unit.measure(row, engine)
            value = 0.0
            if session.rank == 0:
                rec = unit.record(row, engine, data)
                # a measurement that makes several rows (overhead's parts)
                if isinstance(rec, list):
                    kept.several = rec
                    return value
                value = (records.compared_time(rec) or 0.0) / 1e6
                kept.values.append(value)
                kept.recs.append(rec)
            session.progress(f"sample {len(kept.values) + 1 if session.rank == 0 else 'next'}")
            return value

        return take

    def later_rounds(self) -> int:
        """--samples K in rounds (commbench.harness.rounds): rounds 2..K over every row still
        sampling, each unit set up once a round; then every row's record in the first round's
        order. The rows whose check failed (world rank 0's count)."""
        rounds, session = self.rounds, self.session
        for rnd in rounds.later(session.comm, self.cfg.secs):
            for _, visits in rounds.order(rnd):
                unit = visits[0].how[0]
                unit.open()
                try:
                    for v in visits:
                        _, row, engine, _ = v.how
                        where = row.where() | {"round": rnd}
                        session.progress(f"round {rnd} of {rounds.k}", **where)
                        rounds.sample(v, self.taker(unit, row, engine, v.live))
                finally:
                    unit.close()
        failures: list[int] = []

        def build(v: Visit) -> records.Measurement | None:
            if session.rank != 0:
                return None
            position = v.how[3]
            more = {"position": position} if position is not None else {}
            rec = publish(v.live, True, self.family.has_native, more)
            failures.append(int(self.cfg.check and failed(rec)))
            return rec

        rounds.deliver(session, build)
        return sum(failures)


def run(session: Session, procedure: Procedure) -> int:
    """The family's procedure under the harness; the number of rows whose check failed."""
    try:
        return RowLoop(session).run(procedure)
    finally:
        sys.stdout.flush()
