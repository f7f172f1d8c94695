"""Rank 0's records of Rings, Bisection, FanIn/FanOut and the verdicts, from gathered samples;
no MPI (driver.py measures and gathers; benchmarks/scale_model_net.py builds the same records
from synthetic samples).
"""

from __future__ import annotations

import statistics

from commbench import records
from commbench.suites.net import verdicts
from commbench.suites.net.allpairs import KIND, F, build


def median(xs: list) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ring(p: int, mode: str, n: int, every: list, order: list[int], seed: int):
    """One ring's record: every[rank] = that rank's step times (seconds)."""
    metric, label = mode.split(" ", 1)
    return build(
        p,
        benchmark="Rings",
        mode=mode,
        x=n,
        repetitions=len(every[0]),
        rank_times={"t": [median(ts) for ts in every]},
        turnover=2.0,
        extra={
            "metric": metric,
            "ring": label,
            "order": order,
            "seed": seed,
            "samples": len(every[0]),
        },
    )


def bisection_round(p: int, mode: str, n: int, every: list, partner: list, seed: int) -> tuple:
    """(the round's record, its per-pair bandwidths): a pair's time is its slower rank's."""
    med = [median(ts) for ts in every]
    pairs = [
        [a, c, n / max(med[a], med[c])]
        for a, c in enumerate(partner)
        if c is not None and a < c and med[a] and med[c]
    ]
    rec = build(
        p,
        benchmark="Bisection",
        mode=mode,
        x=n,
        repetitions=len(every[0]),
        rank_times={"t": med},
        extra={
            "pairs": pairs,
            "partner": partner,
            "seed": seed,
            "sum_bytes_per_sec": sum(bw for _, _, bw in pairs),
        },
    )
    return rec, [bw for _, _, bw in pairs]


def bisection_distribution(p: int, n: int, bws: list, rounds: int) -> records.Measurement:
    st = verdicts.stats(bws)
    return records.Measurement(
        benchmark="Bisection",
        family=F,
        kind=KIND,
        np=p,
        mode="bandwidth distribution",
        bytes=n,
        repetitions=rounds,
        world_size=p,
        values={"bytes_per_sec": st.get("median", 0.0)},
        extra={"stats": st, "unit": "B/s", "rounds": rounds},
    )


def fan(p: int, name: str, host: str, target: int, m: int, times: list) -> tuple:
    """(the record of one fan target, its bandwidths): times = the target's samples."""
    bw = [(p - 1) * m / x for x in times if x]
    rank_times: list = [None] * p
    rank_times[target] = median(times)
    rec = build(
        p,
        benchmark=name,
        mode=f"bandwidth {host}",
        x=m,
        repetitions=len(times),
        rank_times={"t": rank_times},
        turnover=float(p - 1),
        extra={
            "target": target,
            "host": host,
            "peers": p - 1,
            "stats": verdicts.stats(bw),
            "unit": "B/s",
        },
    )
    return rec, bw


def fan_verdicts(fans: dict, threshold: float) -> list[dict]:
    """FanIn/FanOut: {name: {host: bandwidths}}; one rank per host, at the scheduler's
    mercy: twice the excess."""
    found = []
    for name, per_host in fans.items():
        found += verdicts.host_verdicts(per_host, "bandwidth", 2 * threshold, name)
    return found


def verdicts_record(p: int, found: list, s, hosts: list[str], judged: list[str]):
    """The last record: every verdict (with its evidence) and what was judged."""
    return records.Measurement(
        benchmark="Verdicts",
        family=F,
        kind=KIND,
        np=p,
        mode="",
        bytes=None,
        repetitions=0,
        world_size=p,
        values={},
        extra={
            "verdicts": found,
            "threshold": s.threshold,
            "latency_threshold": s.latency_threshold,
            "confidence": 0.95,
            "hosts": hosts,
            "judged": judged,
        },
    )
