"""The verdicts, from aggregates (no MPI: rank 0 and the views use it).

Samples arrive per ordered rank pair (src, dst) and are folded at once into one aggregate
per ordered host pair (aggregate.Agg, by the run's rank_hosts: allpairs.Fold); pairs on one
host (intra-host) are kept apart from those between hosts and never enter a population or
a verdict. Populations combine aggregates (aggregate.Pool): raw values while their union
holds at most aggregate.CAP, else histograms added, so a verdict's numbers are exact at
small scale and within the histogram's resolution (0.5 %) beyond.

A host H is named when the samples of the inter-host pairs that involve H
are worse than those of the inter-host pairs that do not involve H: the
median worse by more than the threshold (bandwidth: population / H's > 1 +
threshold; latency: H's / population > 1 + threshold) *and* the 95 %
confidence intervals of the two medians (order statistics, records.ci_rank) apart.
Comparing against the pairs without H, not against all pairs, keeps a slow host out of
its own yardstick (with 4 hosts half the host pairs involve it). A link (an
unordered host pair) is named by the same rule against all other inter-host
links when an endpoint is a named host (it carries `explained_by`), and with
twice the excess otherwise: on an oversubscribed machine two ranks sharing a
core made a pair 1.6-3x slow for a whole run (docs/diagnose.md). Fan-in
and fan-out compare each host's samples with the other hosts' (the driver
asks twice the excess of them: one rank per host, at the scheduler's mercy).
A verdict carries its evidence: the named host's or link's values while they are at
most aggregate.CAP, else their histogram.
"""

from __future__ import annotations

from commbench.suites.net.aggregate import Agg, Pool, View, stats

__all__ = ["host_verdict", "host_verdicts", "link_verdict", "named", "pair_verdicts", "stats"]

# slowdown: a time under load over the same pair's median time alone (gpcnet's Congestion)
HIGHER_IS_BETTER = {"bandwidth": True, "latency": False, "slowdown": False}
UNITS = {"bandwidth": "MB/s", "latency": "us", "slowdown": "x"}
SCALE = {"bandwidth": 1e-6, "latency": 1.0, "slowdown": 1.0}  # stored B/s, us; shown MB/s, us


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


def judge(metric: str, x: View, pop: View, threshold: float) -> tuple | None:
    """(ratio, x's stats, pop's stats) when x stands out from pop (beyond threshold and the
    CIs), else None. The medians first; the CIs only of what passes the threshold."""
    xs, ps = x.stats(ci=False), pop.stats(ci=False)
    r = _badness(metric, xs, ps)
    if r is None or r <= 1 + threshold:
        return None
    xs["ci95"], ps["ci95"] = x.ci(), pop.ci()
    return (r, xs, ps) if _separated(metric, xs, ps) else None


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


def host_verdict(
    metric: str, host: str, x: View, pop: View, threshold: float, pattern: str = "AllPairs"
) -> dict | None:
    """The verdict on a host of AllPairs (or `pattern`): its inter-host values x against
    those of the pairs without it, with x's values as evidence; None if it does not stand
    out."""
    found = judge(metric, x, pop, threshold)
    if found is None:
        return None
    r, xs, ps = found
    v = verdict("host", [host], metric, pattern, xs, ps, r, f"the pairs without {host}")
    v["evidence"] = x.evidence()
    return v


def link_verdict(
    metric: str,
    link: list[str],
    x: View,
    pop: View,
    threshold: float,
    named: set[str],
    pattern: str = "AllPairs",
) -> dict | None:
    """The verdict on a link (its two host names, sorted) of AllPairs (or `pattern`):
    against every other link, explained by a named endpoint, or alone with twice the
    excess; None otherwise."""
    found = judge(metric, x, pop, threshold)
    why = sorted(named & set(link))
    if found is None or not (why or found[0] > 1 + 2 * threshold):
        return None
    r, xs, ps = found
    v = verdict("link", list(link), metric, pattern, xs, ps, r, "the other links")
    v["explained_by"] = why
    v["evidence"] = x.evidence()
    return v


def pair_verdicts(
    aggs: dict[tuple[str, str], Agg], metric: str, threshold: float, pattern: str = "AllPairs"
) -> list[dict]:
    """Hosts, then links, named by the inter-host aggregates of one metric of AllPairs
    ({(src host, dst host): Agg}; host pairs within a host are left out here)."""
    inter = {k: a for k, a in aggs.items() if k[0] != k[1] and a.n}
    involving: dict[str, list] = {}
    for k in inter:
        involving.setdefault(k[0], []).append(k)
        involving.setdefault(k[1], []).append(k)
    pool = Pool(inter, involving)
    out = [
        v
        for h in sorted(involving)
        if (v := host_verdict(metric, h, pool.group(h), pool.rest(h), threshold, pattern))
        is not None
    ]
    named = {v["hosts"][0] for v in out}
    for link in sorted({tuple(sorted(k)) for k in inter}):
        keys = [k for k in (link, link[::-1]) if k in inter]
        x = pool.group(link, keys)
        v = link_verdict(metric, list(link), x, pool.rest(link, keys), threshold, named, pattern)
        if v is not None:
            out.append(v)
    return out


def host_verdicts(
    per_host: dict[str, list[float]], metric: str, threshold: float, pattern: str
) -> list[dict]:
    """Fan-in/out: each host's samples against every other host's."""
    pool = Pool({h: Agg(vs) for h, vs in per_host.items()})
    out = []
    for h in sorted(per_host):
        x = pool.group(h, [h])
        found = judge(metric, x, pool.rest(h, [h]), threshold)
        if found is not None:
            r, xs, ps = found
            out.append(verdict("host", [h], metric, pattern, xs, ps, r, "the other hosts"))
            out[-1]["evidence"] = x.evidence()
    return out


def named(verdicts: list[dict]) -> tuple[set[str], set[tuple[str, ...]]]:
    """(hosts named, links named) of a verdict list."""
    hosts = {v["hosts"][0] for v in verdicts if v["kind"] == "host"}
    links = {tuple(v["hosts"]) for v in verdicts if v["kind"] == "link"}
    return hosts, links
