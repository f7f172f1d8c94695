"""One record type for every measurement, and the reduction of per-rank times.

A Measurement holds what was measured (benchmark, group, mode, size,
repetitions, every rank's raw times) and what follows from it (t_min / t_max /
t_avg / median, throughput, overlap). Every output is a view of these records.
No MPI here.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import Any, Protocol

from commbench import policy
from commbench.policy import TOL


class Kind(str, Enum):
    """Classification that decides process counts and output columns (spec §14.3)."""

    SINGLE = "single"  # two processes, t = t_max, throughput
    PARALLEL = "parallel"  # NP sequence, t_min/t_max/t_avg, throughput
    COLLECTIVE = "collective"  # NP sequence, t_min/t_max/t_avg
    SYNC = "sync"  # one row without size
    MULTIPLE = "multiple"  # RMA one-to-all: t, throughput ×(NP−1)
    OVERLAP = "overlap"  # t_ovrl, t_pure, t_CPU, overlap
    OVERLAP_SYNC = "overlap_sync"  # Ibarrier: overlap columns without size
    PASSIVE = "passive"  # Truly_passive_put: t_pure, t_ovrl
    SINGLE_ONE = "single_one"  # S_ IO: one process
    # Uniband/Biband: NP sequence, Mbytes/sec and Msg/sec (turnover = messages per repetition)
    RATE = "rate"


# Status of a row; anything but OK prints a message instead of numbers (spec §14.4).
OK = "ok"
TIMEOUT = "time-out"
OUT_OF_MEM = "out-of-mem"
INT_OVERFLOW = "int-overflow"
INVALID = "invalid"  # a two-process benchmark at NP <= 1 (spec §3.5)
STUCK = "stuck"  # the watchdog ended the measurement
LIBRARY_DEFECT = "library-defect"  # not run: a known defect of the MPI library hangs it here
# a --samples row stopped by a signal: its completed samples (harness.live)
INTERRUPTED = "interrupted"


# Check-mode verdict of a row (spec §15), kept in Measurement.extra["check"].
SUCCESSFUL, FAILED, NOT_CHECKED = "successful", "failed", "not checked"


def check_verdict(defects: float | None) -> str:
    """A row's check verdict from its largest deviation: None means no verifier looked."""
    if defects is None:
        return NOT_CHECKED
    return FAILED if defects > TOL else SUCCESSFUL


@dataclass
class Measurement:
    benchmark: str
    family: str
    kind: str
    np: int
    mode: str
    bytes: int | None
    repetitions: int
    status: str = OK
    message: str = ""
    groups: list[list[int]] = field(default_factory=list)  # world ranks per group, group-rank order
    world_size: int = 0
    components: list[str] = field(default_factory=lambda: ["t"])
    # component -> one entry per world rank: seconds per repetition, the
    # benchmark's time factor applied; None for idle or non-timing ranks.
    rank_times: dict[str, list[float | None]] = field(default_factory=dict)
    # Instead of rank_times beyond --rank-detail ranks: their distribution and the slowest
    # ranks with their hosts (summarise).
    rank_summary: dict[str, Any] = field(default_factory=dict)
    turnover: float = 1.0
    values: dict[str, float] = field(default_factory=dict)  # the row, µs and bytes/s
    group_values: list[dict[str, float]] = field(default_factory=list)
    defects: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The record as a results file holds it: a copy, except `groups`, which is shared
        (never changed once built): a record of the whole world holds P rank numbers, and
        thousands of such records (the net family at 10,000 ranks) kept by Session and by the
        results file's sink would otherwise hold them twice each (docs/scale.md)."""
        d = {
            f.name: self.groups if f.name == "groups" else copy.deepcopy(getattr(self, f.name))
            for f in fields(self)
        }
        if not d["rank_summary"]:  # every rank's times are in rank_times: files as before
            del d["rank_summary"]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Measurement:
        """A record of a results file; ValueError naming the field when it is not one."""
        if not isinstance(d, dict):
            raise ValueError(f"a record is an object, not {type(d).__name__}")
        for name, (types, required) in SHAPE.items():
            if name not in d:
                if required:
                    raise ValueError(f"field {name!r} is missing")
                continue
            v = d[name]
            if not isinstance(v, types) or (isinstance(v, bool) and bool not in types):
                want = " or ".join("null" if t is type(None) else t.__name__ for t in types)
                raise ValueError(f"field {name!r} should be {want}, is {v!r:.40}")
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        # optional in the format (files of early releases lack them), positional in the class
        return cls(**{"family": "", "mode": "", **known})

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def table_key(self) -> tuple:
        return (self.benchmark, self.np, self.mode, len(self.groups))


# Record extras that tell rows of one table apart: the engine (--engine both), the
# overhead family's Q variant and trial, a msgrate pattern.
ROW_EXTRAS = ("engine", "q", "trial", "pattern")


def identity(r: Measurement) -> tuple:
    """What makes two rows one measurement: family, benchmark, NP, mode, size, groups and
    the extras that tell a table's rows apart (compare matches rows on it)."""
    return (
        r.family,
        r.benchmark,
        r.np,
        r.mode,
        r.bytes,
        len(r.groups),
        *(str(r.extra.get(k)) for k in ROW_EXTRAS),
    )


def repeated_rows(recs: list[Measurement]) -> list[str]:
    """Measured rows of one file whose identity another measured row has already (which
    one holds the measurement would be a guess), as 'benchmark np=N bytes=X' labels."""
    seen: set[tuple] = set()
    out = []
    for r in recs:
        if not r.ok:
            continue
        key = identity(r)
        if key in seen:
            out.append(
                f"{r.benchmark} np={r.np}" + ("" if r.bytes is None else f" bytes={r.bytes}")
            )
        seen.add(key)
    return out


# What a record in a results file must look like: field -> (accepted types, required).
_NUM = (int, float)
SHAPE: dict[str, tuple[tuple[type, ...], bool]] = {
    "benchmark": ((str,), True),
    "family": ((str,), False),
    "kind": ((str,), True),
    "np": ((int,), True),
    "mode": ((str,), False),
    "bytes": ((int, type(None)), True),
    "repetitions": ((int,), True),
    "status": ((str,), False),
    "message": ((str,), False),
    "groups": ((list,), False),
    "world_size": ((int,), False),
    "components": ((list,), False),
    "rank_times": ((dict,), False),
    "rank_summary": ((dict,), False),
    "turnover": (_NUM, False),
    "values": ((dict,), True),
    "group_values": ((list,), False),
    "defects": ((int, float, type(None)), False),
    "extra": ((dict,), False),
}


def _summary(values: Sequence[float]) -> dict[str, float]:
    import statistics  # here, not at import: start-up (issue 50)

    return {
        "t_min": min(values) * 1e6,
        "t_max": max(values) * 1e6,
        "t_avg": sum(values) / len(values) * 1e6,
        "t_median": statistics.median(values) * 1e6,
    }


def overlap_percent(t_ovrl: float, t_pure: float, t_cpu: float) -> float:
    """Spec §7.7 (A5): 100·clamp((t_pure + t_CPU − t_ovrl) / min(t_pure, t_CPU), 0, 1)."""
    denom = min(t_pure, t_cpu)
    if denom <= 0:
        return 0.0
    return 100.0 * max(0.0, min(1.0, (t_pure + t_cpu - t_ovrl) / denom))


def reduce_times(
    kind: str,
    components: list[str],
    rank_times: dict[str, list[float | None]],
    members: Sequence[int],
    x: int | None,
    turnover: float,
) -> dict[str, float]:
    """The row's numbers over the given world ranks (spec §7.4, §7.5, §11).

    Ranks whose first component is None or negative (idle ranks, RMA targets)
    are left out of min, max and average.
    """
    first = components[0]
    timed = [r for r in members if (v := rank_times[first][r]) is not None and v >= 0]
    if not timed:
        return {}
    if kind in (Kind.OVERLAP, Kind.OVERLAP_SYNC):
        worst = max(timed, key=lambda r: rank_times["t_ovrl"][r])
        t_ovrl, t_pure, t_cpu = (rank_times[c][worst] for c in ("t_ovrl", "t_pure", "t_cpu"))
        out = {
            "t_ovrl": t_ovrl * 1e6,
            "t_pure": t_pure * 1e6,
            "t_cpu": t_cpu * 1e6,
            "overlap": overlap_percent(t_ovrl, t_pure, t_cpu),
            "rank": worst,
        }
        out.update(
            {f"{k}_all": v for k, v in _summary([rank_times["t_ovrl"][r] for r in timed]).items()}
        )
        return out
    if kind == Kind.PASSIVE:
        return {c: max(rank_times[c][r] for r in timed) * 1e6 for c in components}
    out = _summary([rank_times[first][r] for r in timed])
    out["t"] = out["t_max"]
    if x and out["t_max"] > 0:
        out["bytes_per_sec"] = turnover * x / (out["t_max"] * 1e-6)
    elif x is not None:
        out["bytes_per_sec"] = 0.0
    # IMB 2021's Msg/sec: messages per repetition over the slowest rank's time
    if kind == Kind.RATE:
        out["msgs_per_sec"] = turnover / (out["t_max"] * 1e-6) if out["t_max"] > 0 else 0.0
    return out


def median_ci(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """Distribution-free confidence interval of the median from order statistics.

    [x_(l), x_(K+1-l)] with the largest l such that P(Binomial(K, 1/2) < l) <=
    alpha/2; None when K is too small for the confidence asked (K < 6 at 95 %).
    """
    k = len(values)
    rank = ci_rank(k, confidence)
    if rank is None:
        return None
    xs = sorted(values)
    return xs[rank - 1], xs[k - rank]


@functools.lru_cache(maxsize=4096)
def ci_rank(k: int, confidence: float = 0.95) -> int | None:
    """l of median_ci for K values: the largest l with P(Binomial(K, 1/2) < l) <= alpha/2
    (None when l < 1, as for K < 6 at 95 %). Exact integer sums up to K = 1000; beyond, the
    same sum of terms in floating point (from lgamma), starting 8 standard deviations below
    the mean where the terms left out add up to less than 1e-15. No scipy: a rank computes
    this (the net family's verdicts, --precision) and ranks do not load scipy (docs/scale.md).
    Cached: --precision asks it after every sample."""
    if k < 1:
        return None
    half = (1 - confidence) / 2
    if k <= 1000:
        total, whole, rank = 0, 2**k, 0
        terms = (math.comb(k, j) for j in range(k + 1))
    else:
        lead = math.lgamma(k + 1) - k * math.log(2)
        j0 = max(0, int(k / 2 - 8 * math.sqrt(k) / 2))
        total, whole, rank = 0.0, 1.0, j0
        terms = (
            math.exp(lead - math.lgamma(j + 1) - math.lgamma(k - j + 1)) for j in range(j0, k + 1)
        )
    for term in terms:  # rank: l such that P(B < l) = the sum of the terms below l
        if (total + term) / whole > half:
            break
        total += term
        rank += 1
    if rank < 1 or rank > k + 1 - rank:
        return None
    return rank


def relative_precision(values: Sequence[float], confidence: float = 0.95) -> float | None:
    """How far the 95% CI of the median reaches from the median, relative to it: the larger
    side, max(median - lo, hi - median) / median (--precision's criterion); None when K is
    too small for a CI or the median is not positive."""
    import statistics  # here, not at import: start-up (issue 50)

    ci = median_ci(values, confidence)
    if ci is None:
        return None
    med = statistics.median(values)
    return max(med - ci[0], ci[1] - med) / med if med > 0 else None


# The time `commbench compare` judges a row by, in its values: t_ovrl for the overlap kinds
# (the time with computation overlapped), else t_max (µs). A procedure family's samples
# (commbench.harness.rows) time this quantity, and say so under samples["quantity"].
COMPARED = {"overlap": "t_ovrl", "overlap_sync": "t_ovrl", "passive": "t_ovrl"}


def compared_time(rec: Measurement) -> float | None:
    """The row's compared time (µs), None when it has none; imported rows with one time
    only (OSU's latency, nccl-tests' time) have their "t"."""
    v = rec.values.get(COMPARED.get(rec.kind, "t_max"))
    if v is None:
        v = rec.values.get("t")
    return v if isinstance(v, int | float) and v > 0 else None


def sample_stats(
    samples: list[list[float] | None], factor: float = 1.0
) -> dict[str, float | list | None]:
    """Statistics over K repeated samples of one row: samples[rank] = K seconds or None.

    Each sample's t_max is the slowest rank in that sample; the row's spread and
    the confidence interval of its median come from those K values (µs).
    """
    import statistics  # here, not at import: start-up (issue 50)

    per_rank = [s for s in samples if s and s[0] >= 0]  # idle ranks and RMA targets: none
    if not per_rank:
        return {}
    k = min(len(s) for s in per_rank)
    t_max = [max(s[j] for s in per_rank) * factor * 1e6 for j in range(k)]
    qs = statistics.quantiles(t_max, n=10, method="inclusive") if k > 1 else [t_max[0]] * 9
    return {
        "k": k,
        "t_max_samples": t_max,
        "t_max_median": statistics.median(t_max),
        "t_max_p10": qs[0],
        "t_max_p90": qs[-1],
        "t_max_median_ci95": median_ci(t_max),
    }


def samples_of(rec: Measurement) -> dict:
    """The --samples statistics of a record ({} without; files of the overhead family
    of earlier versions kept a plain count under the same key)."""
    st = rec.extra.get("samples")
    return st if isinstance(st, dict) else {}


def build(
    *,
    benchmark: str,
    family: str,
    kind: str,
    np_: int,
    mode: str,
    x: int | None,
    repetitions: int,
    groups: list[list[int]],
    world_size: int,
    components: list[str],
    rank_times: dict[str, list[float | None]],
    turnover: float,
    defects: float | None = None,
    extra: dict | None = None,
    values: dict | None = None,
    status: str = OK,
    message: str = "",
) -> Measurement:
    """The row's record, its values reduced from the ranks' times; `values` replaces them
    where a family's procedure computes its own (IMB-P2P's t, IMB-MT's over threads), so a
    record is whole when built and not changed after."""
    members = [r for g in groups for r in g]
    reduced = reduce_times(kind, components, rank_times, members, x, turnover)
    return Measurement(
        benchmark=benchmark,
        family=family,
        kind=str(kind.value if isinstance(kind, Kind) else kind),
        np=np_,
        mode=mode,
        bytes=x,
        repetitions=repetitions,
        groups=groups,
        status=status,
        message=message,
        world_size=world_size,
        components=components,
        rank_times=rank_times,
        turnover=turnover,
        values=reduced if values is None else values,
        group_values=[reduce_times(kind, components, rank_times, g, x, turnover) for g in groups]
        if len(groups) > 1
        else [],
        defects=defects,
        extra=extra or {},
    )


# --rank-detail: records keep every rank's times up to this many ranks (the default); beyond,
# summarise keeps their distribution and the SLOWEST ranks, so a row is O(1), not O(P).
RANK_DETAIL = 256
SLOWEST = 8
QUANTILES = {"p1": 1, "p10": 10, "p25": 25, "p50": 50, "p75": 75, "p90": 90, "p99": 99}
# Record extras holding one entry per rank: left out of a summarised record.
PER_RANK_EXTRAS = ("rank_samples", "rank_samples_s")


def summarise(rec: Measurement, up_to: int | None, hosts: Sequence[str] = ()) -> Measurement:
    """The record as kept: itself up to `up_to` ranks (None: always), else with rank_times
    replaced by rank_summary: per component the timed ranks' count, min, P1 … P99, max and
    mean (seconds, as rank_times), and the SLOWEST ranks by the first component with their
    hosts and every component's time; per-rank extras go, and the summary names them."""
    width = max((len(v) for v in rec.rank_times.values()), default=0)
    if not policy.summarised(width, up_to):
        return rec
    first = rec.components[0] if rec.components else next(iter(rec.rank_times))
    comps = {c: _distribution(v) for c, v in rec.rank_times.items()}
    times = rec.rank_times.get(first, [])
    timed = sorted((t, r) for r, t in enumerate(times) if t is not None and t >= 0)
    slowest = [
        {"rank": r, "host": hosts[r] if r < len(hosts) else None}
        | {c: v[r] for c, v in rec.rank_times.items()}
        for _, r in reversed(timed[-SLOWEST:])
    ]
    dropped = [k for k in PER_RANK_EXTRAS if k in rec.extra]
    summary = {"ranks": width, "kept_up_to": up_to, "components": comps, "slowest": slowest}
    if dropped:
        summary["left_out"] = [f"extra.{k}" for k in dropped]
    extra = {k: v for k, v in rec.extra.items() if k not in dropped}
    return replace(rec, rank_times={}, rank_summary=summary, extra=extra)


def _distribution(values: Sequence[float | None]) -> dict[str, float | int]:
    import statistics  # here, not at import: start-up (issue 50)

    xs = sorted(v for v in values if v is not None and v >= 0)
    if not xs:
        return {"n": 0}
    cuts = statistics.quantiles(xs, n=100, method="inclusive") if len(xs) > 1 else [xs[0]] * 99
    return (
        {"n": len(xs), "min": xs[0]}
        | {k: cuts[q - 1] for k, q in QUANTILES.items()}
        | {"max": xs[-1], "mean": math.fsum(xs) / len(xs)}
    )


class Sink(Protocol):
    """Where records go (world rank 0): every view implements these three calls. A view
    that follows where the run is (the progress line) also has position(where), called
    with Session.progress's where whenever the run names a new row, never in a timed loop."""

    def start(self, header: dict) -> None: ...
    def record(self, rec: Measurement) -> None: ...
    def finish(self, summary: dict) -> None: ...


def run_hosts(doc: dict) -> list[str]:
    """The hosts a results file says its run ran on, sorted: its metadata's hosts, else the
    node its uname names (a file from before the hosts were recorded, an imported log)."""
    meta = doc.get("metadata") or {}
    found = meta.get("hosts")
    if isinstance(found, list) and found:
        return sorted({str(h) for h in found})
    node = (meta.get("uname") or {}).get("node")
    return [str(node)] if node else []
