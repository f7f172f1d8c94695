"""The net procedure: every pattern as steps of samples, records on rank 0, verdicts at the end.

A step (one shift, one ring, one matching, one fan target) runs up to
--net-samples samples and stops early when it has taken -time seconds
(patterns.go: every rank agrees at every sample); each step names itself to
the watchdog (Session.progress), so --timeout bounds it too. Rank 0 gathers
the samples one step at a time and emits its record as it goes; AllPairs runs
the shifts of its plan (plan.py: all P-1, or those that cover every host pair,
sampled when too many for --net-shifts) and folds each step into host-pair
aggregates at once (allpairs.Fold: rank 0 holds O(hosts^2), not every sample),
then adds one record per ordered host pair and a matrix record per metric; the
run ends with a "Verdicts" record whose list also goes to the results file's
top-level "verdicts" key (through the results sink's add_section, as fits do).
What rank 0 builds from the gathered samples is in allpairs.py and steps.py (no MPI).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
from mpi4py import MPI

from commbench.session import Session
from commbench.suites.net import many_hosts, patterns, plan, steps
from commbench.suites.net.settings import NetSettings, fan_size
from commbench.suites.procedure import Procedure, Row, Unit

KIND = "net"


@dataclass
class Run:
    session: Session
    s: NetSettings
    hosts: list[str]  # rank_hosts
    b: patterns.NetBuffers
    plan: plan.Plan
    found: dict = field(default_factory=dict)  # AllPairs metric -> its verdicts (rank 0)
    fans: dict = field(default_factory=dict)  # FanIn/FanOut -> {host: B/s samples} (rank 0)
    bws: list = field(default_factory=list)  # Bisection: every round's per-pair bandwidths (rank 0)
    made: list = field(default_factory=list)  # the records of the measurement being made (rank 0)
    fan_targets: dict = field(default_factory=dict)  # FanIn/FanOut -> plan.fan_targets' statement

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

    @functools.cached_property
    def coverage(self) -> dict:
        """Rank 0: the plan and what it covers (plan.statement), for the matrix records."""
        return plan.statement(self.plan, self.hosts)

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
        return next(self.interleaved({0: (sample, where)}, shuffle=False))[1]

    def interleaved(self, steps: dict, shuffle: bool = True, numeric: bool = False) -> Iterator:
        """{key: (sample, where)} -> (key, every rank's samples (rank 0; None elsewhere)) for
        each step in turn, gathered one step at a time (rank 0 folds and drops each).

        Round-robin: one sample of every step per round, --net-samples rounds, the
        steps in a random order each round (seeded), so a burst of load elsewhere on
        the machine or the network hits every step's samples alike instead of all of
        one step's (which would make the pairs of that step look slow). A step stops
        when it has taken -time seconds; every rank agrees at every sample (patterns.go),
        so every rank has as many samples of a step: numeric gathers them as one array
        (P x samples, float64) instead of P pickled lists."""
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
        for k in keys:
            mine = got.pop(k)
            if numeric:
                a = np.asarray(mine, dtype=float)
                out = np.empty((self.p, a.size)) if self.root else None
                self.comm.Gather(a, out, root=0)
                yield k, out
            else:
                yield k, self.comm.gather(mine, root=0)

    def emit(self, rec) -> None:
        self.made.append(rec)


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
        s, session = NetSettings.of(self.session.cfg.params), self.session
        hosts = session.comm.allgather(MPI.Get_processor_name())
        chosen = None  # AllPairs' shifts: decided on rank 0, the same for every rank
        if session.rank == 0 and "AllPairs" in session.cfg.benchmarks:
            chosen = plan.make(hosts, s.shifts, s.seed)
        self.r = Run(
            session,
            s,
            hosts,
            patterns.NetBuffers(
                s.large, fan_size(s.large, session.size) * max(session.size - 1, 1)
            ),
            session.comm.bcast(chosen, root=0),
        )

    def units(self) -> Iterator[Unit]:
        p, s = self.session.size, NetSettings.of(self.session.cfg.params)
        rows = {
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
            yield NetPattern(
                name, p, [Row(name, p, n, mode) for mode, n in rows[name]], kind=KIND, proc=self
            )
        yield NetPattern("Verdicts", p, [Row("Verdicts", p)], kind=KIND, proc=self)


class NetPattern(Unit):
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
    """One metric's shift steps (the plan's: all P-1, or a host cover), folded on rank 0 into
    host-pair aggregates as each step's samples arrive; its verdicts at the end."""
    metric, n = row.mode, row.bytes
    ack = n if metric == "latency" else 0
    steps_ = {}
    for k in r.plan.shifts:
        colours = patterns.colours(r.p, k, r.session.rank)
        steps_[k] = (
            lambda k=k, c=colours: patterns.shift(r.comm, r.b, k, n, ack, c),
            {"benchmark": "AllPairs", "mode": f"{metric} shift {k}", "bytes": n},
        )
    fold = many_hosts.fold(metric, n, r.hosts, r.coverage, r.s.host_pairs) if r.root else None
    for k, every in r.interleaved(steps_, numeric=True):
        if fold is not None:
            r.emit(fold.add(k, every))
    if fold is not None:
        thr = r.s.latency_threshold if metric == "latency" else r.s.threshold
        r.found[metric] = fold.verdicts(thr)
        r.made += fold.records()  # the aggregates go as their records are made


def rings(r: Run, row: Row) -> None:
    """One ring, one metric: each rank exchanges with both neighbours in the ring's order."""
    label = row.mode.split(" ", 1)[1]
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
        r.emit(steps.ring(r.p, row.mode, n, every, order, r.s.seed))


def bisection(r: Run, row: Row) -> None:
    """A round: pairs of a matching exchange --net-large both ways at once; the distribution
    of every round's per-pair bandwidth is the last row."""
    n = row.bytes
    if row.mode == "bandwidth distribution":
        if r.root:
            r.emit(steps.bisection_distribution(r.p, n, r.bws, r.s.rounds))
        return
    partner = r.matchings[int(row.mode.split()[-1]) - 1]
    every = r.step(
        lambda: patterns.pair(r.comm, r.b, partner[r.session.rank], n),
        benchmark="Bisection",
        mode=row.mode,
        bytes=n,
    )
    if r.root:
        rec, bws = steps.bisection_round(r.p, row.mode, n, every, partner, r.s.seed + 1000)
        r.bws += bws
        r.emit(rec)


def fan(r: Run, row: Row) -> None:
    """The first rank of each host as the target of N-1 senders (FanIn) or receivers (FanOut)."""
    name, m, inward = row.benchmark, row.bytes, row.benchmark == "FanIn"
    targets, chosen = plan.fan_targets(r.hosts, r.s.fans, r.s.seed)
    per_host = {}
    steps_ = {
        h: (
            lambda t=t: patterns.fan(r.comm, r.b, t, m, inward),
            {"benchmark": name, "mode": f"bandwidth {h}", "bytes": m},
        )
        for h, t in targets.items()
    }
    for h, every in r.interleaved(steps_):
        if r.root:
            rec, per_host[h] = steps.fan(r.p, name, h, targets[h], m, every[targets[h]])
            rec.extra["targets"] = chosen
            r.emit(rec)
    if r.root:
        r.fans[name] = per_host
        r.fan_targets[name] = chosen


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
    found = [v for vs in r.found.values() for v in vs] + steps.fan_verdicts(r.fans, r.s.threshold)
    judged = sorted(
        set(r.found)
        | {
            f"{k} bandwidth"
            + (f" ({t['hosts']} of {t['of']} hosts, sampled)" if t["rule"] == "sampled" else "")
            for k, t in r.fan_targets.items()
        }
    )
    r.emit(steps.verdicts_record(r.p, found, r.s, list(dict.fromkeys(r.hosts)), judged))
    for sink in r.session.sinks:  # the results file (views.results_file.JsonResults)
        if hasattr(sink, "add_section"):
            sink.add_section("verdicts", found)
