"""The --samples row being measured: what a stopped run keeps of it.

With --samples K a row lasts up to -time seconds, and the views see it only
when its last sample is gathered. A run stopped by a signal in the middle of
such a row would lose every sample of it. So while the row is measured each
rank keeps a LiveRow (Session.live) whose `runs` the timed loop appends to;
at the signal every rank hands its completed samples to world rank 0 over the
watchdog's report channel (commbench.watchdog), and rank 0 builds from them
one record with status `interrupted`: the per-rank medians of the samples
each rank completed, and every sample, as a whole row would keep them.
A --precision row (commbench.harness.precision) is kept the same way; its
precision says it stopped at a signal and how far it had come.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from commbench import records
from commbench.suites.base import Benchmark


@dataclass
class LiveRow:
    bench: Benchmark
    base: dict  # the fields every record of the row shares (Publisher.row)
    n: int  # repetitions of one sample
    engine: str
    requested: int  # K
    world_size: int
    make: Callable[..., records.Measurement]  # Publisher.make_record (commbench.harness.publish)
    runs: list = field(default_factory=list)  # this rank's completed samples (seconds)
    # --precision's target (then `requested` is the row's sample budget)
    precision: float | None = None
    budget_secs: float | None = None
    started: float = field(default_factory=time.monotonic)
    taken: str | None = None  # how the samples are taken (commbench.harness.rounds)

    def mine(self) -> list | None:
        """This rank's completed samples, as plain data for the report channel."""
        return [list(r) if isinstance(r, tuple) else r for r in self.runs] or None

    def record(self, partials: dict[int, Any]) -> records.Measurement | None:
        """The interrupted row from every rank's completed samples (rank -> list or None)."""
        per_rank = [_runs(partials.get(r)) for r in range(self.world_size)]
        if not any(per_rank):
            return None
        gathered = [(median_run(s) if s else None, None) for s in per_rank]
        firsts = [[first(t) for t in s] if s else None for s in per_rank]
        stats = records.sample_stats(firsts, self.bench.time_factor)
        if stats:
            stats["k_requested"] = self.requested
            if self.taken is not None:
                stats["taken"] = self.taken
        extra = {"engine": self.engine, "samples": stats, "rank_samples": firsts}
        if self.precision is not None:
            extra["precision"] = self._precision(stats)
        counts = sorted({len(s) for s in per_rank if s})
        done = "-".join(map(str, (counts[0], counts[-1]) if len(counts) > 1 else counts))
        missing = [
            r
            for r, s in enumerate(per_rank)
            if not s and r in {m for g in self.base["groups"] for m in g}
        ]
        message = (
            f"stopped after {done} of {self.requested} samples; every completed sample is kept"
            + (
                f" (none from rank{'s' if len(missing) > 1 else ''} {' '.join(map(str, missing))})"
                if missing
                else ""
            )
        )
        return self.make(
            self.bench,
            self.base,
            self.n,
            gathered,
            extra=extra,
            status=records.INTERRUPTED,
            message=message,
        )

    def _precision(self, stats: dict) -> dict:
        return stopped_precision(
            self.precision, stats, self.started, self.budget_secs, self.requested
        )


def stopped_precision(
    target: float | None,
    stats: dict,
    started: float,
    budget_secs: float | None,
    budget_samples: int,
) -> dict:
    """What a --precision row had reached when a signal stopped it (stats: records.sample_stats
    of its completed samples); the kernel harness's rows and the row loop's say it alike."""
    achieved = records.relative_precision(stats.get("t_max_samples") or [])
    return {
        "target": target,
        "achieved": achieved,
        "reached": False,
        "stopped": "signal",
        "k": stats.get("k", 0),
        "secs": round(time.monotonic() - started, 6),
        "budget_secs": budget_secs,
        "budget_samples": budget_samples,
    }


def _runs(data: Any) -> list | None:
    if not isinstance(data, list) or not data:
        return None
    return [tuple(t) if isinstance(t, list) else t for t in data]


def median_run(runs: list) -> Any:
    """A rank's median over repeated runs, per component for tuple results."""
    if isinstance(runs[0], tuple):
        return tuple(statistics.median(c) for c in zip(*runs))
    return statistics.median(runs)


def first(t: Any) -> float:
    return t[0] if isinstance(t, tuple) else t
