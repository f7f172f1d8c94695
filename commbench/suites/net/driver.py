"""The net procedure: every pattern as steps of samples, records on rank 0, verdicts at the end.

A step (one shift, one ring, one matching, one fan target) runs up to
--net-samples samples and stops early when it has taken -time seconds
(patterns.go: every rank agrees at every sample); each step names itself to
the watchdog (Session.progress), so --timeout bounds it too. Rank 0 gathers
the samples of every step and emits its record as it goes; AllPairs adds one
record per ordered host pair and a matrix record per metric; the run ends
with a "Verdicts" record whose list also goes to the results file's top-level
"verdicts" key (through the results sink's add_section, as fits do).
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
from mpi4py import MPI

from commbench import records
from commbench.session import Session
from commbench.suites.net import patterns, verdicts
from commbench.suites.net.settings import Settings, fan_size
from commbench.suites.procedure import Procedure, Row, Unit

F = "net"
KIND = "net"
KEEP_SAMPLES_UP_TO = 64  # ranks: step records keep every rank's raw samples up to this size
RANK_MATRIX_UP_TO = 256  # ranks: matrix records keep the rank x rank matrix up to this size


@dataclass
class Run:
    session: Session
    s: Settings
    hosts: list[str]  # rank_hosts
    b: patterns.Buffers
    pairs: dict = field(default_factory=dict)  # metric -> [(src, dst, values)] (rank 0)
    fans: dict = field(default_factory=dict)  # FanIn/FanOut -> {host: B/s samples} (rank 0)
    bws: list = field(default_factory=list)  # Bisection: every round's per-pair bandwidths (rank 0)
    made: list = field(default_factory=list)  # the records of the measurement being made (rank 0)

    @functools.cached_property
    def ring_orders(self) -> dict[str, list[int]]:
        """HPCC's rings: the natural order and --net-rings random ones (from the seed), once."""
        rng = np.random.default_rng(self.s.seed)
        return {"natural": list(range(self.p))} | {
            f"random {i + 1}": [int(x) for x in rng.permutation(self.p)]
            for i in range(self.s.rings)
        }

    @functools.cached_property
    def matchings(self) -> list:
        """--net-rounds random perfect matchings (drawn from the seed + 1000), once."""
        rng = np.random.default_rng(self.s.seed + 1000)
        return [patterns.matching(self.p, rng) for _ in range(self.s.rounds)]

    @property
    def comm(self):
        return self.session.comm

    @property
    def p(self) -> int:
        return self.session.size

    @property
    def root(self) -> bool:
        return self.session.rank == 0

    def step(self, sample: Callable[[], float | None], **where) -> list | None:
        """Up to --net-samples samples within -time seconds; rank 0 gets every rank's list."""
        return self.interleaved({0: (sample, where)}, shuffle=False)[0]

    def interleaved(self, steps: dict, shuffle: bool = True) -> dict:
        """{key: (sample, where)} -> {key: every rank's samples (rank 0; None elsewhere)}.

        Round-robin: one sample of every step per round, --net-samples rounds, the
        steps in a random order each round (seeded), so a burst of load elsewhere on
        the machine or the network hits every step's samples alike instead of all of
        one step's (which would make the pairs of that step look slow). A step stops
        when it has taken -time seconds; every rank agrees at every sample (patterns.go)."""
        rng = np.random.default_rng(self.s.seed)
        keys = list(steps)
        got: dict = {k: [] for k in keys}
        spent = dict.fromkeys(keys, 0.0)
        for _ in range(self.s.samples):
            for i in rng.permutation(len(keys)) if shuffle else range(len(keys)):
                key = keys[int(i)]
                sample, where = steps[key]
                self.session.progress("samples", np=self.p, **where)
                t0 = time.monotonic()
                if patterns.go(self.comm, spent[key] > self.session.cfg.secs):
                    got[key].append(sample())
                spent[key] += time.monotonic() - t0
        self.session.progress("gather")
        return {k: self.comm.gather(got[k], root=0) for k in keys}

    def emit(self, **kw) -> records.Measurement:
        kw.setdefault("groups", [list(range(self.p))])
        kw.setdefault("components", ["t"])
        kw.setdefault("turnover", 1.0)
        rec = records.build(family=F, kind=KIND, np_=self.p, world_size=self.p, **kw)
        self.made.append(rec)
        return rec


def _median(xs: list) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


class NetProcedure(Procedure):
    """The run's patterns as the harness's rows (commbench.harness.rows): a ring, a round
    of Bisection, one metric of AllPairs or one fan is a row; the verdicts the last.
    AllPairs' shift steps and a fan's targets are one row each because their samples
    are interleaved round-robin across the steps (Run.interleaved): a burst of load
    elsewhere then hits every step alike, which a row-by-row order would not give."""

    def __init__(self, session: Session):
        self.session = session
        self.r: Run | None = None

    def open(self) -> None:
        s, session = Settings.of(self.session.cfg.params), self.session
        hosts = session.comm.allgather(MPI.Get_processor_name())
        self.r = Run(
            session,
            s,
            hosts,
            patterns.Buffers(s.large, fan_size(s.large, session.size) * max(session.size - 1, 1)),
        )

    def units(self) -> Iterator[Unit]:
        p, s = self.session.size, Settings.of(self.session.cfg.params)
        steps = {
            "AllPairs": [("latency", s.small), ("bandwidth", s.large)],
            "Rings": [
                (f"{m} {label}", n)
                for m, n in (("latency", s.small), ("bandwidth", s.large))
                for label in ["natural"] + [f"random {i + 1}" for i in range(s.rings)]
            ],
            "Bisection": [(f"bandwidth round {i + 1}", s.large) for i in range(s.rounds)]
            + [("bandwidth distribution", s.large)],
            "FanIn": [("bandwidth", fan_size(s.large, p))],
            "FanOut": [("bandwidth", fan_size(s.large, p))],
        }
        for name in self.session.cfg.benchmarks:
            yield Pattern(
                name, p, [Row(name, p, n, mode) for mode, n in steps[name]], kind=KIND, proc=self
            )
        yield Pattern("Verdicts", p, [Row("Verdicts", p)], kind=KIND, proc=self)


class Pattern(Unit):
    def __init__(self, *args, proc: NetProcedure, **kw):
        super().__init__(*args, **kw)
        self.proc = proc

    def measure(self, row: Row, engine: str) -> list:
        r = self.proc.r
        r.made = []
        STEPS[row.benchmark](r, row)
        return r.made

    def record(self, row: Row, engine: str, made: list) -> list:
        return made


def procedure(session: Session) -> NetProcedure:
    return NetProcedure(session)


def all_pairs(r: Run, row: Row) -> None:
    """One metric's shift steps k = 1 … P-1: the P x P matrix in P-1 steps."""
    metric, n = row.mode, row.bytes
    ack = n if metric == "latency" else 0
    steps = {}
    for k in range(1, r.p):
        plan = patterns.colours(r.p, k, r.session.rank)
        steps[k] = (
            lambda k=k, c=plan: patterns.shift(r.comm, r.b, k, n, ack, c),
            {"benchmark": "AllPairs", "mode": f"{metric} shift {k}", "bytes": n},
        )
    got = []
    for k, every in r.interleaved(steps).items():
        if r.root:
            got += _shift_record(r, metric, n, k, every)
    if r.root:
        r.pairs[metric] = got
        _pair_records(r, metric, n, got)


def _shift_record(r: Run, metric: str, n: int, k: int, every: list) -> list:
    # latency: half the round trip (us); bandwidth: n over the time to the 0-byte ack (B/s)
    conv = (lambda t: t / 2 * 1e6) if metric == "latency" else (lambda t: n / t if t > 0 else 0.0)
    secs = [[t / 2 if metric == "latency" else t for t in ts] for ts in every]
    extra = {"metric": metric, "shift": k, "sends_to": f"rank+{k}", "samples": len(every[0])}
    if r.p <= KEEP_SAMPLES_UP_TO:
        extra["rank_samples_s"] = secs
    r.emit(
        benchmark="AllPairs",
        mode=f"{metric} shift {k}",
        x=n,
        repetitions=len(every[0]),
        rank_times={"t": [_median(ts) for ts in secs]},
        extra=extra,
    )
    return [(src, (src + k) % r.p, [conv(t) for t in every[src]]) for src in range(r.p)]


def _pair_records(r: Run, metric: str, n: int, got: list) -> None:
    """One record per ordered host pair (median, CI, spread) and the matrix record."""
    order = list(dict.fromkeys(r.hosts))
    by = verdicts.by_host_pair(got, r.hosts)
    matrix: list[list] = [[None] * len(order) for _ in order]
    for (a, c), vals in sorted(
        by.items(), key=lambda kv: (order.index(kv[0][0]), order.index(kv[0][1]))
    ):
        st = verdicts.stats(vals)
        matrix[order.index(a)][order.index(c)] = st["median"]
        r.made.append(_host_pair_record(r, metric, n, a, c, st))
    r.made.append(_matrix_record(r, metric, n, got, order, matrix))


def _host_pair_record(r: Run, metric: str, n: int, a: str, c: str, st: dict) -> records.Measurement:
    """The record of host a to host c: the statistics st of its pairs' values."""
    values = (
        {"t_median": st["median"], "t_min": st["min"], "t_max": st["max"]}
        if metric == "latency"
        else {
            "bytes_per_sec": st["median"],
            "t_median": n / st["median"] * 1e6 if st["median"] else 0.0,
        }
    )
    return records.Measurement(
        benchmark="AllPairs",
        family=F,
        kind=KIND,
        np=r.p,
        mode=f"{metric} {a}->{c}",
        bytes=n,
        repetitions=st["n"],
        world_size=r.p,
        values=values,
        extra={
            "metric": metric,
            "src_host": a,
            "dst_host": c,
            "intra": a == c,
            "stats": st,
            "unit": "us" if metric == "latency" else "B/s",
        },
    )


def _matrix_record(
    r: Run, metric: str, n: int, got: list, order: list, matrix: list[list]
) -> records.Measurement:
    """The matrix record: the host pairs' medians, and each rank pair's up to
    RANK_MATRIX_UP_TO ranks."""
    extra = {
        "metric": metric,
        "hosts": order,
        "rank_hosts": r.hosts,
        "host_matrix": matrix,
        "unit": "us" if metric == "latency" else "B/s",
    }
    if r.p <= RANK_MATRIX_UP_TO:
        rm: list[list] = [[None] * r.p for _ in range(r.p)]
        for src, dst, vals in got:
            rm[src][dst] = statistics.median(vals) if vals else None
        extra["rank_matrix"] = rm
    return records.Measurement(
        benchmark="AllPairs",
        family=F,
        kind=KIND,
        np=r.p,
        mode=f"{metric} matrix",
        bytes=n,
        repetitions=0,
        world_size=r.p,
        values={},
        extra=extra,
    )


def rings(r: Run, row: Row) -> None:
    """One ring, one metric: each rank exchanges with both neighbours in the ring's order."""
    metric, label = row.mode.split(" ", 1)
    order, n, me = r.ring_orders[label], row.bytes, r.session.rank
    at = order.index(me)
    left, right = order[at - 1], order[(at + 1) % r.p]
    every = r.step(
        lambda: patterns.ring(r.comm, r.b, left, right, n),
        benchmark="Rings",
        mode=row.mode,
        bytes=n,
    )
    if r.root:
        r.emit(
            benchmark="Rings",
            mode=row.mode,
            x=n,
            repetitions=len(every[0]),
            rank_times={"t": [_median(ts) for ts in every]},
            turnover=2.0,
            extra={
                "metric": metric,
                "ring": label,
                "order": order,
                "seed": r.s.seed,
                "samples": len(every[0]),
            },
        )


def bisection(r: Run, row: Row) -> None:
    """A round: pairs of a matching exchange --net-large both ways at once; the distribution
    of every round's per-pair bandwidth is the last row."""
    n = row.bytes
    if row.mode == "bandwidth distribution":
        if r.root:
            st = verdicts.stats(r.bws)
            r.made.append(
                records.Measurement(
                    benchmark="Bisection",
                    family=F,
                    kind=KIND,
                    np=r.p,
                    mode=row.mode,
                    bytes=n,
                    repetitions=r.s.rounds,
                    world_size=r.p,
                    values={"bytes_per_sec": st.get("median", 0.0)},
                    extra={"stats": st, "unit": "B/s", "rounds": r.s.rounds},
                )
            )
        return
    partner = r.matchings[int(row.mode.split()[-1]) - 1]
    every = r.step(
        lambda: patterns.pair(r.comm, r.b, partner[r.session.rank], n),
        benchmark="Bisection",
        mode=row.mode,
        bytes=n,
    )
    if not r.root:
        return
    med = [_median(ts) for ts in every]
    pairs = [
        [a, c, n / max(med[a], med[c])]
        for a, c in enumerate(partner)
        if c is not None and a < c and med[a] and med[c]
    ]
    r.bws += [bw for _, _, bw in pairs]
    r.emit(
        benchmark="Bisection",
        mode=row.mode,
        x=n,
        repetitions=len(every[0]),
        rank_times={"t": med},
        extra={
            "pairs": pairs,
            "partner": partner,
            "seed": r.s.seed + 1000,
            "sum_bytes_per_sec": sum(bw for _, _, bw in pairs),
        },
    )


def fan(r: Run, row: Row) -> None:
    """The first rank of each host as the target of N-1 senders (FanIn) or receivers (FanOut)."""
    name, m, inward = row.benchmark, row.bytes, row.benchmark == "FanIn"
    targets = {h: r.hosts.index(h) for h in dict.fromkeys(r.hosts)}
    per_host = {}
    steps = {
        h: (
            lambda t=t: patterns.fan(r.comm, r.b, t, m, inward),
            {"benchmark": name, "mode": f"bandwidth {h}", "bytes": m},
        )
        for h, t in targets.items()
    }
    for h, every in r.interleaved(steps).items():
        t = targets[h]
        if not r.root:
            continue
        bw = [(r.p - 1) * m / x for x in every[t] if x]
        per_host[h] = bw
        times: list = [None] * r.p
        times[t] = _median(every[t])
        r.emit(
            benchmark=name,
            mode=f"bandwidth {h}",
            x=m,
            repetitions=len(every[t]),
            rank_times={"t": times},
            turnover=float(r.p - 1),
            extra={
                "target": t,
                "host": h,
                "peers": r.p - 1,
                "stats": verdicts.stats(bw),
                "unit": "B/s",
            },
        )
    if r.root:
        r.fans[name] = per_host


def conclude_row(r: Run, row: Row) -> None:
    if r.root:
        conclude(r)


STEPS: dict[str, Callable[[Run, Row], None]] = {
    "AllPairs": all_pairs,
    "Rings": rings,
    "Bisection": bisection,
    "FanIn": fan,
    "FanOut": fan,
    "Verdicts": conclude_row,
}


def conclude(r: Run) -> None:
    """Rank 0: the verdicts, as the last record and as the results file's "verdicts"."""
    thr = r.s.threshold
    found = []
    for metric, got in r.pairs.items():
        found += verdicts.pair_verdicts(
            got, r.hosts, metric, r.s.latency_threshold if metric == "latency" else thr
        )
    for (
        name,
        per_host,
    ) in r.fans.items():  # one rank per host, at the scheduler's mercy: twice the bar
        found += verdicts.host_verdicts(per_host, "bandwidth", 2 * thr, name)
    hosts = list(dict.fromkeys(r.hosts))
    r.made.append(
        records.Measurement(
            benchmark="Verdicts",
            family=F,
            kind=KIND,
            np=r.p,
            mode="",
            bytes=None,
            repetitions=0,
            world_size=r.p,
            values={},
            extra={
                "verdicts": found,
                "threshold": thr,
                "latency_threshold": r.s.latency_threshold,
                "confidence": 0.95,
                "hosts": hosts,
                "judged": sorted(set(r.pairs) | {f"{k} bandwidth" for k in r.fans}),
            },
        )
    )
    for sink in r.session.sinks:  # the results file (views.results_file.JsonResults)
        if hasattr(sink, "add_section"):
            sink.add_section("verdicts", found)
