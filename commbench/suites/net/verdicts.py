"""Aggregation by host and link, and the verdicts (no MPI: rank 0 and the views use it).

Samples are per ordered rank pair (src, dst); ranks map to hosts by the
run's rank_hosts. Pairs on one host (intra-host) are kept apart from those
between hosts and never enter a population or a verdict.

A host H is named when the samples of the inter-host pairs that involve H
are worse than those of the inter-host pairs that do not involve H: the
median worse by more than the threshold (bandwidth: population / H's > 1 +
threshold; latency: H's / population > 1 + threshold) *and* the 95 %
confidence intervals of the two medians (records.median_ci) apart. Comparing
against the pairs without H, not against all pairs, keeps a slow host out of
its own yardstick (with 4 hosts half the host pairs involve it). A link (an
unordered host pair) is named by the same rule against all other inter-host
links when an endpoint is a named host (it carries `explained_by`), and with
twice the excess otherwise: on an oversubscribed machine two ranks sharing a
core made a pair 1.6-3x slow for a whole run (docs/diagnose.md). Fan-in
and fan-out compare each host's samples with the other hosts' (the driver
asks twice the excess of them: one rank per host, at the scheduler's mercy).
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from commbench.records import median_ci

HIGHER_IS_BETTER = {"bandwidth": True, "latency": False}
UNITS = {"bandwidth": "MB/s", "latency": "us"}
SCALE = {"bandwidth": 1e-6, "latency": 1.0}  # stored B/s and us; shown MB/s and us


def stats(values: list[float]) -> dict:
    xs = sorted(values)
    if not xs:
        return {"n": 0}
    qs = statistics.quantiles(xs, n=10, method="inclusive") if len(xs) > 1 else [xs[0]] * 9
    ci = median_ci(xs)
    return {
        "n": len(xs),
        "median": statistics.median(xs),
        "ci95": list(ci) if ci else None,
        "min": xs[0],
        "p10": qs[0],
        "p90": qs[-1],
        "max": xs[-1],
    }


def by_host_pair(samples: list, rank_hosts: list[str]) -> dict[tuple[str, str], list[float]]:
    """{(src host, dst host): every sample of every rank pair between them}; samples:
    (src, dst, values)."""
    out: dict[tuple[str, str], list[float]] = defaultdict(list)
    for src, dst, vals in samples:
        out[(rank_hosts[src], rank_hosts[dst])].extend(vals)
    return dict(out)


def _badness(metric: str, x: dict, pop: dict) -> float | None:
    """How many times worse x's median is than pop's (>1: worse), None without data."""
    if not x.get("n") or not pop.get("n") or x["median"] <= 0 or pop["median"] <= 0:
        return None
    return pop["median"] / x["median"] if HIGHER_IS_BETTER[metric] else x["median"] / pop["median"]


def _separated(metric: str, x: dict, pop: dict) -> bool:
    if not x.get("ci95") or not pop.get("ci95"):
        return False  # too few samples to be sure of anything
    if HIGHER_IS_BETTER[metric]:
        return x["ci95"][1] < pop["ci95"][0]
    return x["ci95"][0] > pop["ci95"][1]


def judge(metric: str, x: dict, pop: dict, threshold: float) -> float | None:
    """The badness ratio when x stands out from pop (beyond threshold and the CIs), else None."""
    r = _badness(metric, x, pop)
    return r if r is not None and r > 1 + threshold and _separated(metric, x, pop) else None


def _fmt(metric: str, v: float) -> str:
    return f"{v * SCALE[metric]:.4g}"


def verdict(
    kind: str,
    who: list[str],
    metric: str,
    pattern: str,
    x: dict,
    pop: dict,
    ratio: float,
    against: str,
) -> dict:
    f = lambda v: _fmt(metric, v)  # noqa: E731
    unit = UNITS[metric]
    ci = x["ci95"]
    pci = pop["ci95"]
    text = (
        f"{'host' if kind == 'host' else 'link'} {'-'.join(who)}: {pattern} {metric} "
        f"{f(x['median'])} {unit} (95% CI {f(ci[0])}..{f(ci[1])}, {x['n']} samples) vs "
        f"{f(pop['median'])} {unit} for {against} (CI {f(pci[0])}..{f(pci[1])}, p10..p90 "
        f"{f(pop['p10'])}..{f(pop['p90'])}, {pop['n']} samples): {ratio:.2f}x "
        f"{'lower' if HIGHER_IS_BETTER[metric] else 'higher'}"
    )
    return {
        "kind": kind,
        "hosts": who,
        "metric": metric,
        "pattern": pattern,
        "unit": unit,
        "value": x,
        "population": pop,
        "against": against,
        "ratio": ratio,
        "text": text,
    }


def pair_verdicts(
    samples: list, rank_hosts: list[str], metric: str, threshold: float, pattern: str = "AllPairs"
) -> list[dict]:
    """Hosts, then links, named by the inter-host samples of one metric of AllPairs."""
    pairs = by_host_pair(samples, rank_hosts)
    inter = {k: v for k, v in pairs.items() if k[0] != k[1]}
    hosts = sorted({h for k in inter for h in k})
    out = []
    for h in hosts:
        mine = [v for k, vs in inter.items() if h in k for v in vs]
        rest = [v for k, vs in inter.items() if h not in k for v in vs]
        x, pop = stats(mine), stats(rest)
        r = judge(metric, x, pop, threshold)
        if r is not None:
            out.append(verdict("host", [h], metric, pattern, x, pop, r, f"the pairs without {h}"))
    named = {v["hosts"][0] for v in out}
    links: dict[tuple[str, str], list[float]] = defaultdict(list)
    for (a, c), vs in inter.items():
        links[tuple(sorted((a, c)))].extend(vs)  # type: ignore[index]
    for link, vs in sorted(links.items()):
        rest = [v for k, ws in links.items() if k != link for v in ws]
        x, pop = stats(vs), stats(rest)
        r = judge(metric, x, pop, threshold)
        why = sorted(named & set(link))
        if r is not None and (why or r > 1 + 2 * threshold):  # a link alone: twice the excess
            v = verdict("link", list(link), metric, pattern, x, pop, r, "the other links")
            v["explained_by"] = why
            out.append(v)
    return out


def host_verdicts(
    per_host: dict[str, list[float]], metric: str, threshold: float, pattern: str
) -> list[dict]:
    """Fan-in/out: each host's samples against every other host's."""
    out = []
    for h, vs in sorted(per_host.items()):
        rest = [v for k, ws in per_host.items() if k != h for v in ws]
        x, pop = stats(vs), stats(rest)
        r = judge(metric, x, pop, threshold)
        if r is not None:
            out.append(verdict("host", [h], metric, pattern, x, pop, r, "the other hosts"))
    return out


def named(verdicts: list[dict]) -> tuple[set[str], set[tuple[str, ...]]]:
    """(hosts named, links named) of a verdict list."""
    hosts = {v["hosts"][0] for v in verdicts if v["kind"] == "host"}
    links = {tuple(v["hosts"]) for v in verdicts if v["kind"] == "link"}
    return hosts, links
