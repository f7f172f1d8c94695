"""AllPairs on many hosts: per-host records, and every statistic from sorted columns; no MPI.

Up to --net-host-pairs hosts (default 64) rank 0 keeps one aggregate object per ordered host
pair and gives one record per host pair (allpairs.Fold). With one rank per host a host pair is
a rank pair, so at thousands of hosts those objects, their records and a verdict's Python
loop over a million links no longer fit (4.3 GiB and 88 s at 2,048 hosts: docs/scale.md).
Beyond it `Wide` keeps each shift step's values as they arrive (a P x samples float32 array:
O(P x steps), steps bounded by the plan, relative rounding 6e-8, far below the histogram's
0.5 %) and, at the end of the metric, reads every group at once from sorted columns
(`sorted_groups`: the values of a chunk of groups sorted by (group, value) in one np.sort of
64-bit words, so a group's order statistics are slices), in three passes:

- hosts: the inter-host values involving each host (its row as sender and as receiver), the
  host verdicts judged as verdicts.pair_verdicts judges them, and one record per host
  (its statistics, and those of its pairs within the host);
- links (unordered host pairs): the medians of every link at once, and only the links whose
  median could pass the threshold against any population (bounds below) judged one by one;
- ordered host pairs: their medians, for the host x host matrix (up to MATRIX_UP_TO hosts),
  the WORST worst pairs and the summary lines.

A group's values are exact while at most aggregate.CAP, else a histogram of them, and a
population (every inter-host value outside the group) is the histogram of all of them less
the group's, as aggregate.Pool gives them: the same numbers as the aggregates, so a verdict
does not depend on which side of --net-host-pairs a run is (tests/system/test_net_wide.py).

The link pre-filter is exact: removing a link's n values from N moves each order statistic
of the rest up by at most n places (the j-th smallest of the rest lies between the j-th and
the (j+n)-th of all), so a link whose median is not beyond the threshold against the most
favourable of those bounds cannot be named.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from commbench import records
from commbench.suites.net import verdicts
from commbench.suites.net.aggregate import CAP, View, _sparse, buckets
from commbench.suites.net.allpairs import Fold
from commbench.suites.net.settings import MATRIX_UP_TO

WORST = 64  # the worst inter-host pairs named in the matrix record
CHUNK = 1 << 23  # values sorted at once (64 MiB of 64-bit words)


def sorted_groups(items: list, limit: int = CHUNK) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(group of each value, values) of every group, sorted by group then value, a chunk of
    whole groups at a time. items: (keys, vals) with keys[row] the group of vals[row] (a
    float32 row of samples, values >= 0), -1 for none; groups are < 2**32."""
    items = [(k, v) for k, v in items if v.shape[1]]
    if not items:
        return
    keys = np.concatenate([k for k, _ in items])
    width = np.concatenate([np.full(k.size, v.shape[1], dtype=np.int64) for k, v in items])
    ok = keys >= 0
    uk, inv = np.unique(keys[ok], return_inverse=True)
    if not uk.size:
        return
    if uk[-1] >= 2**32:
        raise OverflowError(f"group key {uk[-1]} is beyond 32 bits")
    cum = np.cumsum(np.bincount(inv, weights=width[ok]).astype(np.int64))
    start = 0
    while start < uk.size:
        before = int(cum[start - 1]) if start else 0
        end = max(int(np.searchsorted(cum, before + limit, side="right")), start + 1)
        lo, hi = uk[start], uk[end - 1]
        ks, vs = [], []
        for k, v in items:
            m = (k >= lo) & (k <= hi)
            if m.any():
                ks.append(np.repeat(k[m], v.shape[1]).astype(np.uint64))
                vs.append(np.ascontiguousarray(v[m], dtype=np.float32).ravel())
        # a non-negative float32's bits sort as the float does
        word = (np.concatenate(ks) << np.uint64(32)) | np.concatenate(vs).view(np.uint32)
        word.sort()
        yield (
            (word >> np.uint64(32)).astype(np.int64),
            (word & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32),
        )
        start = end


class Groups:
    """The groups of one chunk of sorted_groups: their keys, counts and medians at once, and
    any one group's values as an aggregate.View."""

    def __init__(self, k: np.ndarray, v: np.ndarray):
        self.v = v.astype(np.float64)
        self.key, self.start, self.n = np.unique(k, return_index=True, return_counts=True)
        half = self.n // 2
        odd = self.n % 2 == 1
        self.median = np.where(
            odd, self.at(half), (self.at(np.maximum(half - 1, 0)) + self.at(half)) / 2
        )

    def at(self, j: np.ndarray) -> np.ndarray:
        """Every group's j-th smallest value (j clipped to the group)."""
        return self.v[self.start + np.clip(j, 0, self.n - 1)]

    def values(self, i: int) -> np.ndarray:
        return self.v[self.start[i] : self.start[i] + self.n[i]]

    def view(self, i: int) -> View:
        """Group i as the aggregates hold it: raw up to CAP values, a histogram beyond."""
        xs = self.values(i)
        if xs.size <= CAP:
            return View.raw(xs)
        idx, cnt, zeros = _sparse(xs)
        return View(xs.size, float(xs[0]), float(xs[-1]), idx=idx, cnt=cnt, zeros=zeros)


class Columns:
    """One metric's rows (a rank pair's samples in one shift step) and the histogram of every
    inter-host value: the populations of the verdicts."""

    def __init__(self, hid: np.ndarray, parts: list):
        p = hid.size
        self.hid = hid
        self.rows = [(hid, hid[(np.arange(p) + k) % p], v) for k, v in parts if v.shape[1]]
        src = np.concatenate([s for s, _, _ in self.rows] or [np.empty(0, np.int64)])
        dst = np.concatenate([d for _, d, _ in self.rows] or [np.empty(0, np.int64)])
        inter = src != dst
        lo = np.concatenate([v.min(axis=1) for *_, v in self.rows] or [np.empty(0)])[inter]
        hi = np.concatenate([v.max(axis=1) for *_, v in self.rows] or [np.empty(0)])[inter]
        self.src, self.dst = src[inter], dst[inter]
        self.lo, self.hi = lo.astype(np.float64), hi.astype(np.float64)
        self.by_lo, self.by_hi = np.argsort(self.lo, kind="stable"), np.argsort(-self.hi)
        least = min((self._least(v[s != d]) for s, d, v in self.rows), default=np.inf)
        least = least if np.isfinite(least) else 1.0
        most = float(self.hi.max()) if self.hi.size and self.hi.max() > 0 else 1.0
        self.base = int(buckets(np.array([least]))[0])
        size = int(buckets(np.array([most]))[0]) - self.base + 1
        self.total = np.zeros(size, dtype=np.int64)
        self.n = 0
        for s, d, v in self.rows:  # one step at a time: no copy of every value at once
            x = v[s != d].ravel()
            self.n += x.size
            x = x[x > 0].astype(np.float64)
            self.total += np.bincount(buckets(x) - self.base, minlength=size)
        self.zeros = self.n - int(self.total.sum())

    @staticmethod
    def _least(v: np.ndarray) -> float:
        """The smallest positive value of v (inf: none)."""
        pos = v[v > 0]
        return float(pos.min()) if pos.size else np.inf

    def whole(self) -> View:
        lo = float(self.lo[self.by_lo[0]]) if self.lo.size else 0.0
        hi = float(self.hi[self.by_hi[0]]) if self.hi.size else 0.0
        return View.dense(self.n, lo, hi, self.total, self.base, self.zeros)

    def rest(self, x: View, outside: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> View:
        """Every inter-host value outside group x (outside(src, dst): the rows not in it):
        raw while at most CAP, else the histogram of all less x's (as aggregate.Pool.rest)."""
        if self.n - x.n <= CAP:
            got = [v[(s != d) & outside(s, d)].ravel() for s, d, v in self.rows]
            return View.raw(np.concatenate(got).astype(np.float64))
        vec, zeros = self.total.copy(), self.zeros
        if x.xs is not None:
            idx, cnt, z = _sparse(x.xs)
        else:
            idx, cnt, z = x.idx, x.cnt, x.zeros
        vec[idx - self.base] -= cnt
        lo = self._first(self.by_lo, outside, self.lo)
        hi = self._first(self.by_hi, outside, self.hi)
        return View.dense(self.n - x.n, lo, hi, vec, self.base, zeros - z)

    def _first(self, order: np.ndarray, outside, column: np.ndarray) -> float:
        for at in range(0, order.size, 256):
            rows = order[at : at + 256]
            hit = np.flatnonzero(outside(self.src[rows], self.dst[rows]))
            if hit.size:
                return float(column[rows[hit[0]]])
        return 0.0


def could_pass(
    metric: str, whole: View, n_max: int, medians: np.ndarray, threshold: float
) -> np.ndarray:
    """Which groups (of at most n_max values, with these medians) could stand out from the
    rest of the values by more than the threshold (the bounds of the module docstring, and
    2 % for a histogram's bucket and its clamping)."""
    n = whole.n
    low = whole.at(max((n - n_max - 1) // 2, 0))
    high = whole.at(min(n // 2 + n_max, n - 1))
    bar = (1 + threshold) / 1.02
    with np.errstate(divide="ignore", invalid="ignore"):
        if verdicts.HIGHER_IS_BETTER[metric]:
            return (medians > 0) & (high / medians > bar)
        return (medians > 0) & (low > 0) & (medians / low > bar)


def outside_host(h: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    return lambda s, d: (s != h) & (d != h)


def outside_link(a: int, b: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    return lambda s, d: ~(((s == a) & (d == b)) | ((s == b) & (d == a)))


class Wide(Fold):
    """AllPairs' fold beyond --net-host-pairs hosts (module docstring): the same step records,
    verdicts judged by the same rule, one record per host instead of per host pair."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.parts: list[tuple[int, np.ndarray]] = []  # (shift, P x samples float32 values)
        self.cols: Columns | None = None
        self.host_stats: dict[int, dict] = {}
        self.found: list[dict] | None = None

    def fold(self, k: int, dst: np.ndarray, vals: np.ndarray) -> None:
        self.parts.append((k, vals.astype(np.float32)))

    def verdicts(self, threshold: float) -> list[dict]:
        self.cols = Columns(self.hid, self.parts)
        self.parts = []  # the columns hold the rows now
        hosts = self._hosts(threshold)
        self.found = hosts + self._links(threshold, {v["hosts"][0] for v in hosts})
        return self.found

    def _hosts(self, threshold: float) -> list[dict]:
        """Every host's inter-host values (as sender and as receiver): its statistics for its
        record, and its verdict against the values of the pairs without it."""
        cols, found = self.cols, []
        items = []
        for s, d, v in cols.rows:
            inter = s != d
            items += [(np.where(inter, s, -1), v), (np.where(inter, d, -1), v)]
        for k, v in sorted_groups(items):
            g = Groups(k, v)
            for i, h in enumerate(g.key.tolist()):
                x = g.view(i)
                self.host_stats[h] = x.stats()
                pop = cols.rest(x, outside_host(h))
                got = verdicts.host_verdict(self.metric, self.hosts[h], x, pop, threshold)
                if got is not None:
                    found.append(got)
        return sorted(found, key=lambda v: v["hosts"])

    def _links(self, threshold: float, named: set[str]) -> list[dict]:
        """Every link's median at once; the links that could stand out judged one by one."""
        cols, nh, found = self.cols, len(self.hosts), []
        items = [
            (np.where(s != d, np.minimum(s, d) * nh + np.maximum(s, d), -1), v)
            for s, d, v in cols.rows
        ]
        whole = cols.whole()
        for k, v in sorted_groups(items):
            g = Groups(k, v)
            maybe = could_pass(self.metric, whole, int(g.n.max()), g.median, threshold)
            for i in np.flatnonzero(maybe).tolist():
                a, b = divmod(int(g.key[i]), nh)
                x = g.view(i)
                pair = sorted((self.hosts[a], self.hosts[b]))
                pop = cols.rest(x, outside_link(a, b))
                got = verdicts.link_verdict(self.metric, pair, x, pop, threshold, named)
                if got is not None:
                    found.append(got)
        return sorted(found, key=lambda v: v["hosts"])

    def records(self) -> list[records.Measurement]:
        """One record per host (its inter-host pairs' statistics, and its pairs within the
        host), then the matrix record: the host x host medians up to MATRIX_UP_TO hosts, the
        WORST worst pairs and the summary; the columns go with it."""
        if self.found is None:
            self.verdicts(float("inf"))  # nothing passes an infinite threshold
        pairs = self._pairs()
        out = [
            self._record(
                self.hosts[h], st, {"host": self.hosts[h], "within": pairs["within"].get(h)}
            )
            for h, st in sorted(self.host_stats.items())
        ]
        self.cols, self.host_stats = None, {}
        out.append(
            self._matrix_record(
                pairs["matrix"],
                worst_pairs=pairs["worst"],
                summary=pairs["summary"],
                records_per="host",
            )
        )
        return out

    def _pairs(self) -> dict:
        """The ordered host pairs' medians: the matrix, the worst pairs, the summary."""
        nh, latency = len(self.hosts), self.metric == "latency"
        matrix = [[None] * nh for _ in range(nh)] if nh <= MATRIX_UP_TO else None
        within: dict[int, dict] = {}
        worst: list[tuple] = []
        summary = {"between hosts": Summary(), "within hosts": Summary()}
        for k, v in sorted_groups([(s * nh + d, v) for s, d, v in self.cols.rows]):
            g = Groups(k, v)
            a, b = np.divmod(g.key, nh)
            if matrix is not None:
                for ai, bi, m in zip(a.tolist(), b.tolist(), g.median.tolist()):
                    matrix[ai][bi] = m
            intra = a == b
            for i in np.flatnonzero(intra).tolist():
                within[int(a[i])] = g.view(i).stats()
            summary["within hosts"].add(g.n[intra], g.median[intra])
            summary["between hosts"].add(g.n[~intra], g.median[~intra])
            inter = np.flatnonzero(~intra)
            bad = inter[np.argsort(-g.median[inter] if latency else g.median[inter])[:WORST]]
            worst += [(float(g.median[i]), int(a[i]), int(b[i]), int(g.n[i])) for i in bad]
            worst = sorted(worst, key=lambda w: -w[0] if latency else w[0])[:WORST]
        return {
            "matrix": matrix,
            "within": within,
            "summary": {name: s.dict() for name, s in summary.items() if s.pairs},
            "worst": [
                {"src": self.hosts[a], "dst": self.hosts[b], "median": m, "n": n}
                for m, a, b, n in worst
            ],
        }


class Summary:
    """How many host pairs, their samples and the range of their medians."""

    def __init__(self):
        self.pairs, self.samples, self.binned = 0, 0, 0
        self.lo, self.hi = float("inf"), float("-inf")

    def add(self, n: np.ndarray, medians: np.ndarray) -> None:
        if n.size:
            self.pairs += int(n.size)
            self.samples += int(n.sum())
            self.binned += int(np.count_nonzero(n > CAP))
            self.lo, self.hi = (
                min(self.lo, float(medians.min())),
                max(self.hi, float(medians.max())),
            )

    def dict(self) -> dict:
        return {
            "host_pairs": self.pairs,
            "samples": self.samples,
            "median_min": self.lo,
            "median_max": self.hi,
            "beyond_raw": self.binned,
        }


def fold(metric: str, n: int, rank_hosts: list[str], plan: dict, host_pairs_up_to: int) -> Fold:
    """AllPairs' fold on rank 0: per host pair up to host_pairs_up_to hosts (0: always),
    per host beyond."""
    hosts = len(set(rank_hosts))
    if host_pairs_up_to and hosts > host_pairs_up_to:
        return Wide(metric, n, rank_hosts, plan)
    return Fold(metric, n, rank_hosts, plan)
