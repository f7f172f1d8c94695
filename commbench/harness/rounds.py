"""--samples K in rounds: every row's K samples spread over the run.

Taken one after another, a row's K samples share whatever the machine did in those
seconds: one scheduling burst takes all K with it, and a test that counts them as K
independent samples of the row misjudges its noise (docs/statistics.md). In rounds, the
first round measures every row once in the run's order (it calibrates each row's
repetitions, as a sweep does), and each later round visits every row once more, in an
order drawn from the run's seed (--shuffle's, else 0) and the round's number: the units
(a benchmark at one process count; a procedure's unit) shuffled, and within each its rows
(mode, size, engine) shuffled. A visit sets the row up anew (buffers allocated and filled,
the benchmark's set-up), takes one sample with the repetitions the first round calibrated
and tears the row down, so every sample is one whole measurement, as the first one is.

The records wait for the last round: each row is built from all its samples, in the first
round's order, so views and files see the rows as a sweep gives them. -time bounds a row's
samples as it does consecutive ones (the row's sampling seconds over the rounds, agreed by
every rank at the end of a round). A signal keeps every row's completed samples and the
records the first round made (SampleRounds.record).

The samples stay consecutive where a row needs them so: --precision (a row samples until
its own target is met), --per-iteration and --sync-start window (a row's per-repetition
times are one run's), and --consecutive-samples (harness.rounds.taken).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from mpi4py import MPI

from commbench.row_measurement import samples_taken

ROUNDS, CONSECUTIVE = "rounds", "consecutive"


def taken(cfg: Any) -> str | None:
    """How this run takes a row's --samples K: ROUNDS, CONSECUTIVE, or None (one sample)."""
    return samples_taken(cfg.samples, cfg.measuring.as_dict())


def for_run(cfg: Any, seed: int | None) -> SampleRounds | None:
    """The run's rounds when it takes its samples in rounds (seed: --shuffle's, else 0)."""
    return SampleRounds(cfg.samples, seed or 0) if taken(cfg) == ROUNDS else None


@dataclass
class Visit:
    """One row (on one engine) that takes a sample in every round."""

    unit: Any  # the visits of one unit share a set-up in a round: (benchmark, NP), a unit
    live: Any  # what a signal keeps of it: mine() and record(partials)
    how: Any  # what the harness needs to take a sample of it again
    spent: float = 0.0  # this rank's seconds in its samples
    done: bool = False  # its samples have taken -time seconds


@dataclass
class SampleRounds:
    """The run's rows in rounds: what the first round said, in order (records of rows without
    numbers, --engine both's releases, the rows being sampled), and each round's order."""

    k: int
    seed: int
    items: list = field(default_factory=list)  # ("emit", rec, hold) | ("release",) | Visit
    visits: list[Visit] = field(default_factory=list)
    flushed: int = 0  # items already delivered to the views
    spans_rows = True  # Session.emit: a record delivered does not end what a signal keeps

    def emit(self, rec: Any, hold: bool = False) -> None:
        self.items.append(("emit", rec, hold))

    def release(self) -> None:
        self.items.append(("release",))

    def visit(self, unit: Any, live: Any, how: Any) -> Visit:
        v = Visit(unit, live, how)
        self.visits.append(v)
        self.items.append(v)
        return v

    def order(self, rnd: int) -> list[tuple[Any, list[Visit]]]:
        """Round rnd's units and their visits, shuffled (the same on every rank)."""
        rng = np.random.default_rng([self.seed, rnd])
        units: dict[Any, list[Visit]] = {}
        for v in self.visits:
            if not v.done:
                units.setdefault(v.unit, []).append(v)
        keys = list(units)
        return [
            (keys[i], [units[keys[i]][j] for j in rng.permutation(len(units[keys[i]]))])
            for i in rng.permutation(len(keys))
        ]

    def later(self, comm: Any, secs: float) -> Iterator[int]:
        """Rounds 2..K, while a row still takes samples: rows whose samples took -time seconds
        on some rank take no more (agreed by every rank before each round)."""
        for rnd in range(2, self.k + 1):
            spent = np.array([v.spent for v in self.visits], dtype=float)
            if len(spent):
                comm.Allreduce(MPI.IN_PLACE, spent, op=MPI.MAX)
            for v, s in zip(self.visits, spent):
                v.done = v.done or s >= secs
            if all(v.done for v in self.visits):
                return
            yield rnd

    def sample(self, v: Visit, take: Callable[..., Any], *args: Any) -> Any:
        """One sample of v (take(*args)), its seconds counted against -time."""
        t0 = time.monotonic()
        out = take(*args)
        v.spent += time.monotonic() - t0
        return out

    def deliver(self, session: Any, build: Callable[[Visit], Any]) -> None:
        """After the last round: the first round's items to the views in order, each row's
        record built from all its samples by build(visit) (collective: every rank calls it)."""
        for item in self.items:
            if isinstance(item, Visit):
                rec = build(item)
                if rec is not None:
                    session.emit(rec, hold=getattr(item.how, "hold", False))
            elif item[0] == "emit":
                session.emit(item[1], hold=item[2])
            else:
                session.release()
            self.flushed += 1

    # -- what a signal keeps (Session.stop) ----------------------------------------------------
    def mine(self) -> list:
        """This rank's completed samples of every row, by the row's place in the run."""
        return [v.live.mine() for v in self.visits]

    def record(self, partials: dict[int, Any]) -> list:
        """Rank 0 at a signal: what is not yet delivered, every row from the samples each rank
        completed (partials: rank -> its mine())."""
        place = {id(v): i for i, v in enumerate(self.visits)}
        out = []
        for item in self.items[self.flushed :]:
            if isinstance(item, Visit):
                i = place[id(item)]
                mine = {
                    r: p[i] if isinstance(p, list) and i < len(p) else None
                    for r, p in partials.items()
                }
                rec = item.live.record(mine)
                if rec is not None:
                    out.append(rec)
            elif item[0] == "emit":
                out.append(item[1])
        return out
