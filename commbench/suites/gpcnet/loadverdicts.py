"""Congestion's judgement, on world rank 0 (no MPI): impact factors with intervals, each
victim host's factors, and the hosts and links whose bandwidth degrades under load.

Impact factors (GPCNeT): loaded / isolated for latency, isolated / loaded for bandwidth,
of Avg and of 99 %; GPCNeT divides its one-decimal figures ("gpcnet"), commbench the
unrounded ones, with a 95 % interval from the two 95 % intervals (each end the ratio of
opposite ends: a joint coverage of at least 90 %).

Links: every ordered victim host pair's transfer times alone and under load. Each loaded
sample over its pair's median alone is a *slowdown*; the net family's rule
(net.verdicts.pair_verdicts) names a host whose pairs' slowdowns stand out from those of
the pairs without it (by more than --gpcnet-threshold, 95 % intervals of the medians
apart), and a link likewise. It needs three victim hosts: with two, every pair involves
both and there is nothing to compare with (said in the record).
"""

from __future__ import annotations

import statistics

from commbench.suites.gpcnet.settings import BY_NAME, LINKS, VICTIMS
from commbench.suites.net.aggregate import Agg, stats
from commbench.suites.net.verdicts import pair_verdicts


def links(got: list) -> dict:
    """{"src->dst": [seconds]} from the victims' (host, links() result) of one phase."""
    out: dict[str, list[float]] = {}
    for g in got:
        if not g:
            continue
        _, part = g
        for step in part["steps"].values():
            key = f"{part['names'][part['me']]}->{part['names'][step['to']]}"
            out.setdefault(key, []).extend(step["times"])
    return out


def factor(iso: float | None, loaded: float | None, lat: bool) -> float | None:
    if not iso or not loaded:
        return None
    return loaded / iso if lat else iso / loaded


def factor_ci(iso_ci, loaded_ci, lat: bool) -> list[float] | None:
    if not iso_ci or not loaded_ci or min(*iso_ci, *loaded_ci) <= 0:
        return None
    if lat:
        return [loaded_ci[0] / iso_ci[1], loaded_ci[1] / iso_ci[0]]
    return [iso_ci[0] / loaded_ci[1], iso_ci[1] / loaded_ci[0]]


def test_factors(iso: dict, loaded: dict, lat: bool) -> dict:
    """A GPCNeT test's factors: GPCNeT's (one-decimal figures), commbench's, per host."""
    out: dict = {"gpcnet": {}, "avg": None, "p99": None}
    for k in ("avg", "p99"):
        a, b = iso.get(k), loaded.get(k)
        out[k] = factor(a, b, lat)
        out[f"{k}_ci"] = factor_ci(iso.get(f"{k}_ci"), loaded.get(f"{k}_ci"), lat)
        ra, rb = (round(v, 1) if v is not None else None for v in (a, b))
        out["gpcnet"][k] = factor(ra, rb, lat)
    hosts = sorted(set(iso.get("per_host", {})) & set(loaded.get("per_host", {})))
    out["per_host"] = {h: factor(iso["per_host"][h], loaded["per_host"][h], lat) for h in hosts}
    return out


def link_factors(iso: dict, loaded: dict) -> tuple[dict, dict]:
    """({pair: slowdown Agg}, {pair: its factor, interval, samples}) of the pairs measured
    in both phases (time ratios: the bandwidth factor isolated / loaded)."""
    aggs, table = {}, {}
    for key in sorted(set(iso) & set(loaded)):
        a, b = [t for t in iso[key] if t > 0], [t for t in loaded[key] if t > 0]
        if not a or not b:
            continue
        base = statistics.median(a)
        aggs[tuple(key.split("->"))] = Agg([t / base for t in b])
        sa, sb = stats(a), stats(b)
        table[key] = {
            "factor": sb["median"] / sa["median"],
            "ci95": factor_ci(sa["ci95"], sb["ci95"], True),
            "isolated_s": sa["median"],
            "loaded_s": sb["median"],
            "samples": [sa["n"], sb["n"]],
        }
    return aggs, table


def host_link_factor(table: dict, host: str) -> float | None:
    fs = [v["factor"] for k, v in table.items() if host in k.split("->")]
    return statistics.median(fs) if fs else None


def impact(got: dict, threshold: float, victims: list[str]) -> dict:
    """got: (phase, test) -> statistics; the impact record's content."""
    tests = {}
    for t in VICTIMS:
        iso, lod = got.get(("isolated", t)), got.get(("loaded", t))
        if iso and lod:
            tests[t] = test_factors(iso, lod, BY_NAME[t].lat) | {"name": BY_NAME[t].label}
    iso_l = got.get(("isolated", LINKS), {}).get("links", {})
    lod_l = got.get(("loaded", LINKS), {}).get("links", {})
    aggs, table = link_factors(iso_l, lod_l)
    found = pair_verdicts(aggs, "slowdown", threshold, pattern="Links under load")
    note = None
    if len(victims) < 3:
        note = (
            f"{len(victims)} victim hosts: a host is judged against the pairs without it, "
            "so naming one needs at least 3 (--gpcnet-victims)"
        )
    per_host = {h: {"Links": host_link_factor(table, h)} for h in victims}
    for t, f in tests.items():
        for h, v in f["per_host"].items():
            per_host.setdefault(h, {})[t] = v
    return {
        "tests": tests,
        "links": table,
        "per_host": per_host,
        "verdicts": found,
        "threshold": threshold,
        "note": note,
    }
