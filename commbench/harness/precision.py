"""--precision P: the samples of a row until its median is known within +-P.

A sample is one timed run of n repetitions, as --samples K takes them. After
every sample the ranks of the group agree, in one MPI_Allreduce(MAX) of two
numbers, on that sample's t_max (the slowest rank) and on the seconds spent
(the slowest rank's clock). So every rank holds the same list of t_max and
reaches the same decision after the same sample: stop when the 95%
order-statistic CI of the median of those t_max (records.median_ci) lies
within +-P of the median on both sides, once at least max(6, --samples K)
samples are taken; or when the row's budget of seconds or samples is spent
(Plan.row_budget). The row records the precision it reached and why it stopped.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from mpi4py import MPI

from commbench import records, row_measurement
from commbench.harness.live import first

REACHED, TIME_BUDGET, SAMPLE_BUDGET, SIGNAL = "reached", "time budget", "sample budget", "signal"


@dataclass(frozen=True)
class Outcome:
    """How one group's row ended, the same on every rank of the group."""

    target: float  # relative half-width asked
    achieved: float | None  # relative half-width of the CI at the end; None below 6 samples
    stopped: str  # REACHED, TIME_BUDGET, SAMPLE_BUDGET (SIGNAL: harness.live)
    k: int  # samples taken
    secs: float  # seconds the samples took (the slowest rank's clock)
    budget: tuple[float, int]  # (seconds, samples) of the row

    def as_dict(self) -> dict:
        return {
            "target": self.target,
            "achieved": self.achieved,
            "reached": self.stopped == REACHED,
            "stopped": self.stopped,
            "k": self.k,
            "secs": round(self.secs, 6),
            "budget_secs": self.budget[0],
            "budget_samples": self.budget[1],
        }


def least(samples: int) -> int:
    """The fewest samples a row takes: a 95% CI needs 6; --samples K raises it to K."""
    return max(row_measurement.MIN_SAMPLES, samples)


def repeat(
    comm: Any, take: Callable[[], Any], runs: list, want: int, secs: float, beat: Callable[[], None]
) -> list:
    """--samples K: append K samples (take()) to runs, cut short (agreed in comm) once they
    have taken `secs` seconds (-time): the time budget bounds a row however large K is."""
    started = time.monotonic()
    runs.append(take())
    while len(runs) < want:
        beat()
        spent = time.monotonic() - started >= secs
        if comm.allreduce(spent, op=MPI.LOR):
            break
        runs.append(take())
    return runs


def sample_until(
    comm: Any,
    take: Callable[[], Any],
    runs: list,
    target: float,
    budget: tuple[float, int],
    minimum: int,
    beat: Callable[[], None],
) -> Outcome:
    """Append samples (take()) to runs until the target or the budget; every rank of comm
    calls it and returns the same Outcome."""
    secs, cap = budget
    # loads scipy (0.5 s, once) before the clock starts
    records.median_ci([0.0] * row_measurement.MIN_SAMPLES)
    started = time.monotonic()
    ordered: list[float] = []  # the group's t_max per sample, sorted
    mine, agreed = np.zeros(2), np.zeros(2)
    while True:
        t = take()
        runs.append(t)
        mine[0], mine[1] = first(t), time.monotonic() - started
        comm.Allreduce(mine, agreed, op=MPI.MAX)
        bisect.insort(ordered, float(agreed[0]))
        beat()
        k, spent = len(ordered), float(agreed[1])
        achieved = records.relative_precision(ordered)
        if k >= minimum and achieved is not None and achieved <= target:
            why = REACHED
        elif k >= cap:
            why = SAMPLE_BUDGET
        elif spent >= secs:
            why = TIME_BUDGET
        else:
            continue
        return Outcome(target, achieved, why, k, spent, budget)


def worst(outcomes: list[tuple[int, dict] | None]) -> dict | None:
    """The row's precision from every rank's (group, Outcome.as_dict()) (None: idle ranks):
    with -multi each group decides on its own samples, and the row reports its least
    precise group (every group under "groups")."""
    groups: dict[int, dict] = {}
    for o in outcomes:
        if o is not None:
            groups.setdefault(o[0], o[1])
    if not groups:
        return None
    out = dict(
        max(
            groups.values(),
            key=lambda o: (not o["reached"], np.inf if o["achieved"] is None else o["achieved"]),
        )
    )
    if len(groups) > 1:
        out["groups"] = [dict(o, group=g) for g, o in sorted(groups.items())]
    return out
