"""Samples aggregated so that rank 0 stays small at any scale: exact while few, a histogram beyond.

An `Agg` holds the values of one group (a host pair of AllPairs, a host of FanIn): raw, up to
CAP values (4096), and beyond that a histogram of logarithmic buckets of relative width
RESOLUTION (0.5 %): bucket i holds [G**i, G**(i+1)), G = 1 + RESOLUTION; values <= 0 are
counted apart (as 0). Its count, min and max are always exact. Statistics (`stats`: count,
median, the 95 % CI of the median from order statistics, min, p10, p90, max) read order
statistics from the sorted raw values, or from the histogram, where an order statistic is
its bucket's geometric centre (clamped to the exact min and max), so within the bucket's
width of the exact one. Both use the formulas of statistics.median and
statistics.quantiles(n=10, method="inclusive") and records.ci_rank, so while exact they are
those of the values' list (verdicts.stats).

A `Pool` holds one metric's aggregates by key and gives the statistics of a group of keys
and of every other key (a verdict's population), combining aggregates: raw values joined
while the union holds at most CAP, else histograms added (a dense count vector over the
pool's bucket range; the population is the pool's total minus the group), never a copy of
every sample. The CI is computed only when asked (a verdict asks it of what passes the
threshold): records.ci_rank costs some 60 ms for tens of millions of values.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Callable, Hashable, Iterable

import numpy as np

from commbench.records import ci_rank

CAP = 4096  # values kept raw per aggregate (and per combination) before the histogram
RESOLUTION = 0.005  # relative width of a histogram bucket
LOG_G = math.log1p(RESOLUTION)


@functools.cache
def _empty(dtype: str) -> np.ndarray:
    """An empty array shared while an Agg is empty (made on first use: the launcher imports
    this module to parse options and must not load numpy, tests/mpi/test_startup.py)."""
    return np.empty(0, dtype=dtype)


def buckets(values: np.ndarray) -> np.ndarray:
    """The histogram bucket of every positive value."""
    return np.floor(np.log(values) / LOG_G).astype(np.int64)


def _sparse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(bucket indices, counts, count of values <= 0) of raw values."""
    pos = values > 0
    idx, cnt = np.unique(buckets(values[pos]), return_counts=True)
    return idx, cnt.astype(np.int64), int(values.size - np.count_nonzero(pos))


class Agg:
    """The values of one group: raw up to `cap`, a log histogram beyond (module docstring)."""

    __slots__ = ("cap", "n", "lo", "hi", "raw", "idx", "cnt", "zeros")

    def __init__(self, values: Iterable[float] = (), cap: int = CAP):
        self.cap = cap
        self.n, self.lo, self.hi, self.zeros = 0, math.inf, -math.inf, 0
        self.raw: np.ndarray | None = _empty("float64")
        self.idx = self.cnt = _empty("int64")  # shared while empty: an Agg is small while raw
        self.add(values)

    @property
    def exact(self) -> bool:
        return self.raw is not None

    def add(self, values: Iterable[float]) -> None:
        v = np.asarray(values if isinstance(values, np.ndarray) else list(values), dtype=float)
        v = v.ravel()
        if not v.size:
            return
        self.n += v.size
        self.lo, self.hi = min(self.lo, float(v.min())), max(self.hi, float(v.max()))
        if self.raw is not None:
            if self.raw.size + v.size <= self.cap:
                self.raw = np.concatenate((self.raw, v))
                return
            v, self.raw = np.concatenate((self.raw, v)), None
        idx, cnt, zeros = _sparse(v)
        self.zeros += zeros
        self.idx, self.cnt = _merge(self.idx, self.cnt, idx, cnt)

    def sparse(self) -> tuple[np.ndarray, np.ndarray, int]:
        """(bucket indices, counts, zeros) of every value, raw ones bucketed."""
        return _sparse(self.raw) if self.raw is not None else (self.idx, self.cnt, self.zeros)

    def stats(self, ci: bool = True) -> dict:
        return View.of(self).stats(ci)

    def evidence(self) -> dict:
        return View.of(self).evidence()


def _merge(i1, c1, i2, c2) -> tuple[np.ndarray, np.ndarray]:
    if not i1.size:
        return i2, c2
    idx, inv = np.unique(np.concatenate((i1, i2)), return_inverse=True)
    return idx, np.bincount(inv, weights=np.concatenate((c1, c2))).astype(np.int64)


class View:
    """Order statistics of n values: sorted raw values, or a histogram (sparse or dense)."""

    def __init__(self, n: int, lo: float, hi: float, xs=None, idx=None, cnt=None, zeros=0):
        self.n, self.lo, self.hi = n, lo, hi
        self.xs = xs  # sorted raw values (exact), or None
        self.idx, self.cnt, self.zeros = idx, cnt, zeros  # the histogram otherwise
        self.cum = np.cumsum(cnt) if xs is None and cnt is not None else None

    @classmethod
    def of(cls, a: Agg) -> View:
        if a.raw is not None:
            return cls.raw(a.raw)
        return cls(a.n, a.lo, a.hi, idx=a.idx, cnt=a.cnt, zeros=a.zeros)

    @classmethod
    def raw(cls, values: np.ndarray) -> View:
        xs = np.sort(values)
        return cls(xs.size, float(xs[0]) if xs.size else 0.0, float(xs[-1]) if xs.size else 0.0, xs)

    @classmethod
    def dense(cls, n: int, lo: float, hi: float, vec: np.ndarray, base: int, zeros: int) -> View:
        nz = np.flatnonzero(vec)
        return cls(n, lo, hi, idx=nz + base, cnt=vec[nz], zeros=zeros)

    def at(self, j: int) -> float:
        """The j-th smallest value (0-based)."""
        if self.xs is not None:
            return float(self.xs[j])
        if j <= 0:
            return self.lo
        if j >= self.n - 1:
            return self.hi
        if j < self.zeros:
            return 0.0
        b = int(self.idx[int(np.searchsorted(self.cum, j - self.zeros, side="right"))])
        return min(max(math.exp((b + 0.5) * LOG_G), self.lo), self.hi)

    def stats(self, ci: bool = True) -> dict:
        """As verdicts.stats of the values (exact), or read from the histogram."""
        n, at = self.n, self.at
        if not n:
            return {"n": 0}
        half = n // 2
        median = at(half) if n % 2 else (at(half - 1) + at(half)) / 2
        qs = [_quantile(at, n, i) for i in (1, 9)] if n > 1 else [at(0)] * 2
        out = {"n": n, "median": median, "ci95": None, "min": at(0), "p10": qs[0]}
        out |= {"p90": qs[1], "max": at(n - 1), "exact": self.xs is not None}
        if self.xs is None:
            out["resolution"] = RESOLUTION
        if ci:
            out["ci95"] = self.ci()
        else:
            del out["ci95"]
        return out

    def ci(self) -> list[float] | None:
        rank = ci_rank(self.n)
        return None if rank is None else [self.at(rank - 1), self.at(self.n - rank)]

    def evidence(self) -> dict:
        """The values themselves while exact, else the histogram (bucket i: [G**i, G**(i+1)))."""
        if self.xs is not None:
            return {"values": self.xs.tolist()}
        return {
            "histogram": {
                "resolution": RESOLUTION,
                "bucket": "i holds [(1 + resolution)**i, (1 + resolution)**(i + 1))",
                "index": self.idx.tolist(),
                "count": self.cnt.tolist(),
                "zeros": self.zeros,
                "min": self.lo,
                "max": self.hi,
            }
        }


def _quantile(at: Callable[[int], float], n: int, i: int) -> float:
    """statistics.quantiles(n=10, method="inclusive")[i - 1], from order statistics."""
    j, delta = divmod(i * (n - 1), 10)
    return (at(j) * (10 - delta) + at(j + 1) * delta) / 10


def stats(values: Iterable[float]) -> dict:
    """Statistics of a list of values, exact (no histogram, no cap)."""
    xs = sorted(values)
    if not xs:
        return {"n": 0}
    qs = statistics.quantiles(xs, n=10, method="inclusive") if len(xs) > 1 else [xs[0]] * 9
    rank = ci_rank(len(xs))
    return {
        "n": len(xs),
        "median": statistics.median(xs),
        "ci95": None if rank is None else [xs[rank - 1], xs[len(xs) - rank]],
        "min": xs[0],
        "p10": qs[0],
        "p90": qs[-1],
        "max": xs[-1],
    }


class Pool:
    """One metric's aggregates by key, and the statistics of any group of keys and of the rest.

    `groups` (optional) names groups whose histograms are summed once, in the same pass as the
    total (AllPairs' hosts: every host pair that involves the host); other groups are summed
    when asked (a link: its two host pairs)."""

    def __init__(self, aggs: dict, groups: dict | None = None, cap: int = CAP):
        self.cap = cap
        self.aggs = {k: a for k, a in aggs.items() if a.n}
        self.n = sum(a.n for a in self.aggs.values())
        pos = [a for a in self.aggs.values() if a.hi > 0]
        lo = min((a.lo if a.lo > 0 else _min_pos(a) for a in pos), default=1.0)
        self.base = int(buckets(np.array([lo]))[0])
        top = int(buckets(np.array([max((a.hi for a in pos), default=1.0)]))[0])
        self.size = top - self.base + 1
        self.total = np.zeros(self.size, dtype=np.int64)
        self.zeros = 0
        self.groups = {g: list(ks) for g, ks in (groups or {}).items()}
        member: dict[Hashable, list] = {}
        for g, ks in self.groups.items():
            for k in ks:
                member.setdefault(k, []).append(g)
        self.gvec = {g: np.zeros(self.size, dtype=np.int64) for g in self.groups}
        self.gzeros = dict.fromkeys(self.groups, 0)
        for k, a in self.aggs.items():
            idx, cnt, zeros = a.sparse()
            self.total[idx - self.base] += cnt
            self.zeros += zeros
            for g in member.get(k, ()):
                self.gvec[g][idx - self.base] += cnt
                self.gzeros[g] += zeros
        self.by_lo = sorted(self.aggs, key=lambda k: self.aggs[k].lo)
        self.by_hi = sorted(self.aggs, key=lambda k: -self.aggs[k].hi)

    def _dense(self, keys: list) -> tuple[np.ndarray, int]:
        vec, zeros = np.zeros(self.size, dtype=np.int64), 0
        for k in keys:
            idx, cnt, z = self.aggs[k].sparse()
            vec[idx - self.base] += cnt
            zeros += z
        return vec, zeros

    def group(self, g: Hashable, keys: list | None = None) -> View:
        """The values of group g (a precomputed group, or the given keys)."""
        ks = [k for k in (self.groups[g] if keys is None else keys) if k in self.aggs]
        n = sum(self.aggs[k].n for k in ks)
        if n <= self.cap and all(self.aggs[k].exact for k in ks):
            return View.raw(np.concatenate([self.aggs[k].raw for k in ks] or [np.empty(0)]))
        lo, hi = min(self.aggs[k].lo for k in ks), max(self.aggs[k].hi for k in ks)
        vec, zeros = (self.gvec[g], self.gzeros[g]) if keys is None else self._dense(ks)
        return View.dense(n, lo, hi, vec, self.base, zeros)

    def rest(self, g: Hashable, keys: list | None = None) -> View:
        """The values of every key outside group g: the group's population."""
        out = set(self.groups[g] if keys is None else keys)
        n = self.n - sum(self.aggs[k].n for k in out if k in self.aggs)
        if n <= self.cap and all(a.exact for k, a in self.aggs.items() if k not in out):
            return View.raw(
                np.concatenate([a.raw for k, a in self.aggs.items() if k not in out] or [[]])
            )
        lo = next(self.aggs[k].lo for k in self.by_lo if k not in out)
        hi = next(self.aggs[k].hi for k in self.by_hi if k not in out)
        if keys is None:
            vec, zeros = self.gvec[g], self.gzeros[g]
        else:
            vec, zeros = self._dense([k for k in out if k in self.aggs])
        return View.dense(n, lo, hi, self.total - vec, self.base, self.zeros - zeros)


def _min_pos(a: Agg) -> float:
    """The smallest positive value of an aggregate whose min is not positive."""
    if a.raw is not None:
        return float(a.raw[a.raw > 0].min())
    return math.exp(int(a.idx[0]) * LOG_G)
