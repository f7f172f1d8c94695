"""Rank 0's AllPairs: each shift step folded into host-pair aggregates as it arrives; no MPI.

The driver gathers one shift step's samples (every rank's round trips to rank+k, seconds)
and hands them to `Fold.add`, which returns the step's record and folds the samples into
one aggregate per ordered host pair (aggregate.Agg: raw up to aggregate.CAP values, a log
histogram beyond), then drops them: rank 0 holds O(hosts^2) aggregates, not every sample
of every rank pair. Below RANK_MATRIX_UP_TO ranks it also keeps each rank pair's median
(the rank x rank matrix). At the end of the metric `verdicts` judges the host pairs
(verdicts.pair_verdicts), then `records` gives one record per ordered host pair
(statistics only, never samples; each aggregate goes as its record is made) and the matrix
record (host x host medians, the plan and what it covered).
benchmarks/scale_model_net.py runs this same code on synthetic samples.
"""

from __future__ import annotations

import functools

import numpy as np

from commbench import records
from commbench.suites.net import verdicts
from commbench.suites.net.aggregate import CAP, RESOLUTION, Agg
from commbench.suites.net.plan import host_ids

F = "net"
KIND = "net"
KEEP_SAMPLES_UP_TO = 64  # ranks: step records keep every rank's raw samples up to this size
RANK_MATRIX_UP_TO = 256  # ranks: matrix records keep the rank x rank matrix up to this size


@functools.lru_cache(maxsize=4)
def world(p: int) -> list[list[int]]:
    """Every rank in one group: one list shared by every record of the run (never changed:
    records.Measurement.to_dict shares it too), not P rank numbers per record."""
    return [list(range(p))]


def build(p: int, **kw) -> records.Measurement:
    """A net record of a step (records.build, every rank of the world in one group)."""
    kw.setdefault("groups", world(p))
    kw.setdefault("components", ["t"])
    kw.setdefault("turnover", 1.0)
    return records.build(family=F, kind=KIND, np_=p, world_size=p, **kw)


class Fold:
    """One AllPairs metric on rank 0: its host-pair aggregates, step by step."""

    def __init__(self, metric: str, n: int, rank_hosts: list[str], plan: dict, cap: int = CAP):
        self.metric, self.n, self.rank_hosts, self.plan = metric, n, rank_hosts, plan
        self.p = len(rank_hosts)
        self.hid, self.hosts = host_ids(rank_hosts)
        self.aggs: dict[int, Agg] = {}  # src host * H + dst host -> its aggregate
        self.cap = cap
        small = self.p <= RANK_MATRIX_UP_TO
        self.rank_matrix: list[list] | None = (
            [[None] * self.p for _ in range(self.p)] if small else None
        )

    def values(self, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(seconds as the step record keeps them, values as aggregated): latency is half
        the round trip (us), bandwidth n bytes over the time to the 0-byte ack (B/s)."""
        if self.metric == "latency":
            return times / 2, times / 2 * 1e6
        ok = times > 0
        return times, np.where(ok, self.n / np.where(ok, times, 1.0), 0.0)

    def add(self, k: int, times: np.ndarray) -> records.Measurement:
        """Shift k's samples, times[rank] = that rank's round trips to rank+k (seconds): the
        step's record; the samples go into the host-pair aggregates and are not kept."""
        p = self.p
        secs, vals = self.values(np.asarray(times, dtype=float).reshape(p, -1))
        dst = (np.arange(p) + k) % p
        self.fold(k, dst, vals)
        if self.rank_matrix is not None and vals.shape[1]:
            for src, m in enumerate(np.median(vals, axis=1).tolist()):
                self.rank_matrix[src][int(dst[src])] = m
        return self.step_record(k, secs)

    def fold(self, k: int, dst: np.ndarray, vals: np.ndarray) -> None:
        """Shift k's values (vals[rank] to rank dst[rank]) into the host-pair aggregates."""
        nh = len(self.hosts)
        key = self.hid * nh + self.hid[dst]
        order = np.argsort(key, kind="stable")
        cuts = np.flatnonzero(np.diff(key[order])) + 1
        for rows in np.split(order, cuts):
            kk = int(key[rows[0]])
            agg = self.aggs.get(kk)
            if agg is None:
                agg = self.aggs[kk] = Agg(cap=self.cap)
            agg.add(vals[rows])

    def step_record(self, k: int, secs: np.ndarray) -> records.Measurement:
        samples = secs.shape[1]
        extra = {"metric": self.metric, "shift": k, "sends_to": f"rank+{k}", "samples": samples}
        if self.p <= KEEP_SAMPLES_UP_TO:
            extra["rank_samples_s"] = secs.tolist()
        medians = np.median(secs, axis=1).tolist() if samples else [None] * self.p
        return build(
            self.p,
            benchmark="AllPairs",
            mode=f"{self.metric} shift {k}",
            x=self.n,
            repetitions=samples,
            rank_times={"t": medians},
            extra=extra,
        )

    def named_aggs(self) -> dict[tuple[str, str], Agg]:
        nh = len(self.hosts)
        return {(self.hosts[k // nh], self.hosts[k % nh]): a for k, a in sorted(self.aggs.items())}

    def records(self) -> list[records.Measurement]:
        """One record per ordered host pair measured (statistics of its aggregate), then the
        matrix record. The aggregates go as their records are made (call verdicts first), so
        rank 0 never holds a metric's aggregates and all its records at once."""
        out = []
        matrix: list[list] = [[None] * len(self.hosts) for _ in self.hosts]
        nh = len(self.hosts)
        for k in sorted(self.aggs):
            st = self.aggs.pop(k).stats()
            matrix[k // nh][k % nh] = st["median"]
            out.append(self._host_pair_record(self.hosts[k // nh], self.hosts[k % nh], st))
        out.append(self._matrix_record(matrix))
        return out

    def verdicts(self, threshold: float) -> list[dict]:
        return verdicts.pair_verdicts(self.named_aggs(), self.metric, threshold)

    def _values(self, st: dict) -> dict:
        """A record's values from the statistics st of its values (us or B/s)."""
        if self.metric == "latency":
            return {"t_median": st["median"], "t_min": st["min"], "t_max": st["max"]}
        bw = st["median"]
        return {"bytes_per_sec": bw, "t_median": self.n / bw * 1e6 if bw else 0.0}

    def _record(self, mode: str, st: dict, extra: dict) -> records.Measurement:
        """An AllPairs record of statistics st (a host pair's, or a host's)."""
        return records.Measurement(
            benchmark="AllPairs",
            family=F,
            kind=KIND,
            np=self.p,
            mode=f"{self.metric} {mode}",
            bytes=self.n,
            repetitions=st["n"],
            world_size=self.p,
            values=self._values(st),
            extra={"metric": self.metric} | extra | {"stats": st, "unit": self.unit},
        )

    @property
    def unit(self) -> str:
        return "us" if self.metric == "latency" else "B/s"

    def _host_pair_record(self, a: str, c: str, st: dict) -> records.Measurement:
        """The record of host a to host c: the statistics st of its pairs' values."""
        return self._record(f"{a}->{c}", st, {"src_host": a, "dst_host": c, "intra": a == c})

    def _matrix_record(self, matrix: list[list] | None, **more) -> records.Measurement:
        """The host pairs' medians (None: not measured; the whole matrix None beyond
        wide.MATRIX_UP_TO hosts), the plan and what it covered, and each rank pair's median
        up to RANK_MATRIX_UP_TO ranks; `more`: the wide fold's worst pairs and summary."""
        extra = {
            "metric": self.metric,
            "hosts": self.hosts,
            "rank_hosts": self.rank_hosts,
            "host_matrix": matrix,
            "unit": self.unit,
            "plan": self.plan,
            "aggregate": {"raw_up_to": self.cap, "histogram_resolution": RESOLUTION},
        } | more
        if self.rank_matrix is not None:
            extra["rank_matrix"] = self.rank_matrix
        return records.Measurement(
            benchmark="AllPairs",
            family=F,
            kind=KIND,
            np=self.p,
            mode=f"{self.metric} matrix",
            bytes=self.n,
            repetitions=0,
            world_size=self.p,
            values={},
            extra=extra,
        )
