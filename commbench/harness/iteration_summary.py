"""--per-iteration and --sync-start window on world rank 0: a row's per-repetition
distribution, its synchronization record, and its IMB columns from the valid
repetitions (the timing on each rank is commbench.harness.iteration_times).

A repetition's value is the slowest rank's time of it: for repetition i the
maximum over the row's timed ranks of their times of call i (the benchmark's
time factor applied, as in t_max). The repetitions are aligned on every rank
by the barrier after each call, or by the common start of --sync-start window;
a window repetition that started late on any rank is left out (invalid).
Percentiles are order statistics (numpy's inverted CDF: an observed value),
their 95% confidence intervals distribution-free, from the binomial
distribution of the order statistics (scipy.stats.quantile_test); a side the
repetitions cannot bound is null. A percentile below the timer floor (the
timer's resolution plus the cost of timing an empty region, both measured on
every rank, the largest taken) is refused: null, its value kept under
`refused`.
"""

from __future__ import annotations

import dataclasses
import math
import os

import numpy as np

from commbench import records, row_measurement
from commbench.policy import MIN_VALID_REPETITIONS, MIN_VALID_SHARE

QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))
METHOD = (
    "SKaMPI's ping-pong offset (the shortest round trip of 24) over HCA's binomial tree; "
    "offset and drift from a sync before and one after the row, interpolated linearly"
)
ALIGNED = (
    "per repetition the slowest rank's time, each rank timed from its own start after a barrier"
)
WINDOWED = (
    "per repetition the slowest rank's end minus the "
    "common start (rank 0's clock); late starts left out"
)


def percentiles(values: np.ndarray, floor: float) -> dict:
    """P50/P90/P99/max of per-repetition values (µs) with 95% CIs, refusing those below floor."""
    from scipy.stats import quantile_test  # loaded only where a row has per-repetition times

    out: dict = {"n": int(len(values))}
    ci: dict[str, list | None] = {}
    refused: dict[str, float] = {}
    for name, q in QUANTILES:
        if not len(values):
            out[name], ci[name] = None, None
            continue
        v = float(values.max()) if q == 1 else float(np.quantile(values, q, method="inverted_cdf"))
        if q < 1:
            c = quantile_test(values, q=v, p=q).confidence_interval(0.95)
            ci[name] = [None if math.isnan(b) else float(b) for b in (c.low, c.high)]
        else:
            ci[name] = None  # no distribution-free bound above the largest value
        if v < floor:
            refused[name] = v
            out[name] = None
        else:
            out[name] = v
    out["ci95"] = ci
    out["refused"] = refused
    return out


def _floor(have: dict[int, dict], factor: float) -> dict[str, float]:
    """The largest resolution, Wtick and overhead over the ranks (µs, factor applied),
    and the floor."""
    fl = {
        k: max(d["floor"][k] for d in have.values()) * factor
        for k in ("resolution", "wtick", "overhead")
    }
    fl["floor"] = fl["resolution"] + fl["overhead"]
    return fl


def attach(
    rec: records.Measurement, gathered: list, factor: float, per_iteration: bool
) -> records.Measurement:
    """The row's record completed from every world rank's per-repetition data (or None): a new
    record, rec is not changed."""
    members = [r for g in rec.groups for r in g]
    have = {r: gathered[r] for r in members if r < len(gathered) and gathered[r] is not None}
    timed = [r for r, d in have.items() if d["t"] and max(d["t"]) >= 0]
    extra = dict(rec.extra)
    if not timed:
        if per_iteration and rec.ok:
            why = row_measurement.per_iteration_skip(rec.family, rec.benchmark, rec.kind, rec.mode)
            extra["per_iteration"] = {"skipped": why or "no rank timed its repetitions"}
        return dataclasses.replace(rec, extra=extra)
    n = min(len(have[r]["t"]) for r in timed)
    t = np.array([have[r]["t"][:n] for r in timed]) * factor  # seconds, ranks x repetitions
    valid = np.ones(n, dtype=bool)
    window = any(d["late"] is not None for d in have.values())
    if window:
        late = np.array([have[r]["late"][:n] for r in have], dtype=bool).any(axis=0)
        valid = ~late
        extra["sync"] = sync_record(rec, have, late)
        rec = imb_columns(rec, timed, t, valid)
    if per_iteration:
        extra["per_iteration"] = distribution(rec, timed, t, valid, _floor(have, factor), window)
    few = few_repetitions(int(valid.sum()), n, window)
    if few:
        extra["few_repetitions"] = few
    return dataclasses.replace(rec, extra=extra)


def few_repetitions(valid: int, run: int, window: bool) -> dict | None:
    """The row's mark when its estimate rests on too few valid repetitions (policy), else None."""
    least = MIN_VALID_REPETITIONS
    if valid >= least and not (window and valid < MIN_VALID_SHARE * run):
        return None
    why = (
        f"{valid} valid of {run} repetitions"
        + (f" ({run - valid} started late on some rank)" if window else "")
        + (
            f": fewer than {least}"
            if valid < least
            else f": fewer than {MIN_VALID_SHARE:.0%} of them"
        )
    )
    return {"valid": valid, "repetitions": run, "least": least, "why": why}


def distribution(
    rec: records.Measurement,
    timed: list[int],
    t: np.ndarray,
    valid: np.ndarray,
    floor: dict[str, float],
    window: bool,
) -> dict:
    """The row's per_iteration record: percentiles of the row and of each group."""
    us = t * 1e6
    st = percentiles(us.max(axis=0)[valid], floor["floor"])
    st.update(
        start="window" if window else "barrier",
        definition=WINDOWED if window else ALIGNED,
        repetitions=int(len(valid)),
        **floor,
    )
    st["values"] = us.max(axis=0)[valid].tolist()
    rank_values: list[list[float] | None] = [None] * rec.world_size
    for i, r in enumerate(timed):
        rank_values[r] = us[i].tolist()
    st["rank_values"] = rank_values
    if len(rec.groups) > 1:
        rows = {r: i for i, r in enumerate(timed)}
        st["groups"] = []
        for g in rec.groups:
            idx = [rows[r] for r in g if r in rows]
            st["groups"].append(
                percentiles(us[idx].max(axis=0)[valid], floor["floor"]) if idx else None
            )
    return st


def imb_columns(
    rec: records.Measurement, timed: list[int], t: np.ndarray, valid: np.ndarray
) -> records.Measurement:
    """With --sync-start window the IMB columns come from the repetitions valid on every rank:
    the record with those times and values (a new one; rec is not changed)."""
    if not valid.any():
        return rec
    comp = rec.components[0]
    rank_times = {k: list(v) for k, v in rec.rank_times.items()}
    for i, r in enumerate(timed):
        rank_times[comp][r] = float(t[i, valid].mean())
    members = [r for g in rec.groups for r in g]

    def values(ranks: list[int]) -> dict:
        return records.reduce_times(
            rec.kind, rec.components, rank_times, ranks, rec.bytes, rec.turnover
        )

    groups = [values(g) for g in rec.groups] if len(rec.groups) > 1 else rec.group_values
    return dataclasses.replace(
        rec, rank_times=rank_times, values=values(members), group_values=groups
    )


def sync_record(rec: records.Measurement, have: dict[int, dict], late: np.ndarray) -> dict:
    """Each rank's estimated offset (seconds, local minus its group's rank 0, before the
    row), drift, their error bounds, and its late starts; None for ranks outside the row."""
    ws = rec.world_size
    cols: dict[str, list] = {
        k: [None] * ws for k in ("offsets", "errors", "drifts", "drift_errors", "late")
    }
    windows = []
    for r, d in have.items():
        s = d["sync"]
        cols["offsets"][r], cols["drifts"][r] = s["offset"], s["drift"]
        cols["errors"][r] = d["sync_error"]
        cols["drift_errors"][r] = s["drift_error"] if math.isfinite(s["drift_error"]) else None
        cols["late"][r] = int(sum(d["late"]))
        windows.append(s["window"])
    out = {
        "method": METHOD,
        "reference": [g[0] for g in rec.groups],
        "window": max(windows) * 1e6,
        **cols,
        "error": max(e for e in cols["errors"] if e is not None),
        "invalid": int(late.sum()),
        "repetitions": int(len(late)),
    }
    injected = row_measurement.parse_clock_faults(
        os.environ.get(row_measurement.CLOCK_OFFSET_ENV, "")
    )
    if injected:  # a test's fault: recorded, so no one takes these offsets for a real clock's
        out["injected"] = {str(r): list(v) for r, v in sorted(injected.items())}
    return out
