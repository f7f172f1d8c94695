"""GPCNeT's statistics of a test, with commbench's confidence intervals.

- **99 %** (and 99.9 %): every timed iteration of every taking-part rank pooled in a
  histogram of 100,000 equal buckets between the pooled minimum and maximum (reduced to
  rank 0: its memory does not grow with the samples). Latency counts from the bottom and
  reports the upper edge of the bucket where floor(0.99 N) samples are reached; bandwidth
  counts from the top and reports the lower edge (the value 99 % of the samples reach or
  exceed: the slow tail). commbench adds the 95 % interval of that order statistic
  (binomial ranks N q -/+ 1.96 sqrt(N q (1 - q)), read off the same buckets).
- **Avg**: the mean over slots (one per ring per measurement; a collective's per-rank
  total) of the mean over ranks of their slot values; verbose: min, max and the mean of
  the worst rank per slot. commbench adds a 95 % interval: mean -/+ 1.96 standard errors of
  the per-slot means (a collective: of its repetitions' means).
Every rank of the communicator calls `summarise`; ranks that took no part pass None.
"""

from __future__ import annotations

import math

import numpy as np
from mpi4py import MPI

BUCKETS = 100_000
Z95 = 1.959964


def from_histogram(hist: np.ndarray, lo: float, d: float, q: float, lat: bool) -> float:
    """GPCNeT's percentile q of a histogram (counts per bucket, lowest first)."""
    n = int(hist.sum())
    return at_count(hist, lo, d, int(q * n), lat)


def at_count(hist: np.ndarray, lo: float, d: float, target: int, lat: bool) -> float:
    """The bucket edge where the cumulative count (from the bottom for latency, from the top
    for bandwidth) first reaches target."""
    target = max(target, 1)
    if lat:
        j = int(np.searchsorted(np.cumsum(hist), target))
        return lo + (min(j, len(hist) - 1) + 1) * d
    j = int(np.searchsorted(np.cumsum(hist[::-1]), target))
    return lo + (len(hist) - 1 - min(j, len(hist) - 1)) * d


def percentile_ci(hist: np.ndarray, lo: float, d: float, q: float, lat: bool) -> list[float]:
    """95 % interval of GPCNeT's q percentile: the order statistics N q -/+ 1.96 sd."""
    n = int(hist.sum())
    half = Z95 * math.sqrt(n * q * (1 - q))
    ends = (
        at_count(hist, lo, d, int(math.floor(n * q - half)), lat),
        at_count(hist, lo, d, min(n, int(math.ceil(n * q + half))), lat),
    )
    return sorted(ends)


def pooled(comm, samples: np.ndarray | None, lat: bool, root: bool) -> dict:
    """The pooled percentiles (rank 0 of comm gets them; {} elsewhere)."""
    x = samples[samples >= 0] if samples is not None else np.empty(0)
    ends = np.array([x.min() if x.size else np.inf, -(x.max()) if x.size else np.inf])
    comm.Allreduce(MPI.IN_PLACE, ends, op=MPI.MIN)
    lo, hi = float(ends[0]), -float(ends[1])
    if not math.isfinite(lo):
        return {}
    d = (hi - lo) / (BUCKETS - 1) if hi > lo else max(abs(lo), 1e-30) * 1e-9
    hist = np.bincount(
        np.clip(((x - lo) / d).astype(np.int64), 0, BUCKETS - 1), minlength=BUCKETS
    ).astype(np.int64)
    out = np.zeros(BUCKETS, dtype=np.int64) if root else None
    comm.Reduce(hist, out, op=MPI.SUM, root=0)
    if not root:
        return {}
    return {
        "p99": from_histogram(out, lo, d, 0.99, lat),
        "p99_ci": percentile_ci(out, lo, d, 0.99, lat),
        "p999": from_histogram(out, lo, d, 0.999, lat),
        "samples": int(out.sum()),
        "sample_min": lo,
        "sample_max": hi,
    }


def reduced_slots(comm, slots, lat: bool, root: bool) -> dict:
    """Every rank of comm: the slots of the ranks taking part (slots None elsewhere), reduced
    to rank 0 slot by slot (GPCNeT reduces too): each slot's sum and count of the values > 0
    (values <= 0 do not count, as in GPCNeT), its worst value (latency: the highest) and the
    extremes, so rank 0 holds O(slots), not every rank's slots. Over the first k slots, k
    the fewest any taking-part rank has (ranks of a test agree on its measurements)."""
    none = np.iinfo(np.int64).max
    n = np.array([len(slots) if slots is not None else none], dtype=np.int64)
    comm.Allreduce(MPI.IN_PLACE, n, op=MPI.MIN)
    k = 0 if int(n[0]) == none else int(n[0])
    v = np.asarray(slots[:k], dtype=float) if slots is not None else np.full(k, np.nan)
    ok = v > 0
    sums = np.vstack([np.where(ok, v, 0.0), ok.astype(float)])
    bad = -np.inf if lat else np.inf
    worst = np.where(ok, v, bad)
    ends = np.array([v[ok].min() if ok.any() else np.inf, -v[ok].max() if ok.any() else np.inf])
    out = [np.zeros_like(x) if root else None for x in (sums, worst, ends)]
    comm.Reduce(sums, out[0], op=MPI.SUM, root=0)
    comm.Reduce(worst, out[1], op=MPI.MAX if lat else MPI.MIN, root=0)
    comm.Reduce(ends, out[2], op=MPI.MIN, root=0)
    if not root:
        return {}
    return {"sums": out[0][0], "counts": out[0][1], "worst": out[1], "ends": out[2]}


def slot_stats(red: dict) -> dict:
    """Avg and its interval, min, max, the worst rank's mean, from the reduced slots."""
    good = red["counts"] > 0
    per_slot = red["sums"][good] / red["counts"][good]
    if not per_slot.size:
        return {}
    avg = float(per_slot.mean())
    se = float(per_slot.std(ddof=1) / math.sqrt(per_slot.size)) if per_slot.size > 1 else 0.0
    return {
        "avg": avg,
        "avg_ci": [avg - Z95 * se, avg + Z95 * se] if per_slot.size > 1 else None,
        "min": float(red["ends"][0]),
        "max": -float(red["ends"][1]),
        "avg_worst": float(red["worst"][good].mean()),
        "slots": int(per_slot.size),
    }


def totals(vals: list[float], st: dict, lat: bool) -> dict:
    """A collective: GPCNeT's Avg, min, max and worst are of the ranks' totals (operations
    over their summed time); the interval is the repetitions' (a relative half-width put
    around the total: a mean of rates is not a total rate)."""
    v = np.asarray(vals, dtype=float)
    v = v[v > 0]  # a rank alone in its slice moved nothing over the network
    if not v.size:
        return {}
    avg = float(v.mean())
    out = {"avg": avg, "min": float(v.min()), "max": float(v.max())}
    out["avg_worst"] = out["max"] if lat else out["min"]
    c, centre = st.get("avg_ci"), st.get("avg")
    out["avg_ci"] = [avg * c[0] / centre, avg * c[1] / centre] if c and centre else None
    return out


def summarise(comm, part: dict | None, lat: bool, hosts: list[str]) -> dict:
    """Every rank of comm: part = {"samples", "slots", "value"} of a rank that took part
    (value: a collective's per-rank total, replacing the slots' mean in Avg), else None.
    Rank 0 of comm gets the test's statistics and each host's mean; {} elsewhere. What
    reaches rank 0 is O(slots + buckets) reduced, and one number per rank (its mean or
    total, for the per-host means): not every rank's slots (docs/scale.md)."""
    root = comm.Get_rank() == 0
    got = pooled(comm, part["samples"] if part else None, lat, root)
    red = reduced_slots(comm, part["slots"] if part else None, lat, root)
    rows = comm.gather(_own(part) if part else None, root=0)
    if not root:
        return {}
    mine = [(r, hosts[i]) for i, r in enumerate(rows) if r is not None]
    st = slot_stats(red)
    values = [val for (val, _), _ in mine if val is not None]
    if mine and mine[0][0][0] is not None:
        st |= totals(values, st, lat)
    per_host: dict[str, list[float]] = {}
    for (val, mean), h in mine:
        own = val if val is not None else mean
        if own is not None:
            per_host.setdefault(h, []).append(own)
    st["per_host"] = {h: float(np.mean(v)) for h, v in sorted(per_host.items())}
    st["ranks"] = len(mine)
    return st | got


def _own(part: dict) -> tuple:
    """(a collective's total or None, the mean of the rank's slots > 0 or None)."""
    s = np.asarray(part["slots"], dtype=float)
    ok = s[s > 0]
    return part.get("value"), float(ok.mean()) if ok.size else None
