"""`commbench health`'s verdict per host (docs/health.md): good, slow (with the evidence) or
failed to run, from one results file of the net family with its limits (no MPI).

A host is slow when it can be shown to be, and only then:
- the net family named it (its inter-host pairs worse than the pairs without it, by more
  than the threshold with the confidence intervals apart: commbench.suites.net.verdicts);
- its one-copy memory bandwidth (metadata limits, commbench.harness.limits) is below the
  median of the other hosts' by more than the threshold, with at least two other hosts to
  hold it against (with one other, which of the two is slow cannot be told);
- a row whose ranks all ran on it fails the site's expectations (commbench.models
  .expectations; a row across hosts names no single host and accuses none).
A run that did not complete says "failed to run" of every host: nothing is proven slow.
"""

from __future__ import annotations

import statistics

from commbench import records
from commbench.models import expectations as ex
from commbench.models import limits

GOOD, SLOW, FAILED = "good", "slow", "failed to run"


def _memory(doc: dict, threshold: float, notes: list[str]) -> dict[str, list[str]]:
    mem = ((doc.get("metadata") or {}).get("limits") or {}).get("memory") or {}
    tables = {h: m["copy"] for h, m in mem.items() if isinstance(m, dict) and m.get("copy")}
    if len(tables) < 3:
        notes.append("memory not compared: fewer than 3 hosts measured it")
        return {}
    if not _distinct(doc):
        notes.append(
            "memory not compared: hosts share a machine (one boot id), their copies ran on "
            "the same memory at once"
        )
        return {}
    size = min(t[-1][0] for t in tables.values())  # the largest size every host measured
    rate = {h: limits.copy_rate(t, size) for h, t in tables.items()}
    out: dict[str, list[str]] = {}
    for h, r in rate.items():
        others = statistics.median(v for k, v in rate.items() if k != h)
        if r < others * (1 - threshold):
            out.setdefault(h, []).append(
                f"memory: one copy of {size} bytes at {r / 1e9:.3g} GB/s vs {others / 1e9:.3g} "
                f"GB/s, the other hosts' median ({r / others:.2f}x)"
            )
    return out


def _intra(recs) -> dict[str, dict[str, tuple[records.Measurement, dict]]]:
    """{host: {"latency"|"bandwidth": (record, stats)}} of the net family's AllPairs pairs
    within one host (with two or more ranks a host: shared-memory communication)."""
    out: dict[str, dict] = {}
    for r in recs:
        st, metric = r.extra.get("stats"), r.extra.get("metric")
        if r.benchmark == "AllPairs" and r.extra.get("intra") and isinstance(st, dict):
            if st.get("n") and metric in ("latency", "bandwidth"):
                out.setdefault(str(r.extra.get("src_host")), {})[metric] = (r, st)
    return out


def _figures(doc: dict, intra: dict) -> dict[str, list[str]]:
    """Each host's shared-memory latency and bandwidth against its limits (what it is)."""
    mem = ((doc.get("metadata") or {}).get("limits") or {}).get("memory") or {}
    out: dict[str, list[str]] = {}
    for h, got in intra.items():
        m = mem.get(h) or {}
        said = []
        if "latency" in got:
            t = got["latency"][1]["median"]
            floor = m.get("floor_us")
            said.append(
                f"{t:.3g} us between two ranks"
                + (f" ({t / floor:.1f}x its {floor:.3g} us floor)" if floor else "")
            )
        if "bandwidth" in got:
            r, st = got["bandwidth"]
            copy = limits.copy_rate(m.get("copy") or [], r.bytes or 0)
            said.append(
                f"{st['median'] / 1e9:.3g} GB/s at {r.bytes} bytes"
                + (f" ({st['median'] / copy:.2f} of one copy)" if copy else "")
            )
        out[h] = [f"shared memory: {'; '.join(said)}"] if said else []
    return out


def _shared_memory(intra: dict, threshold: float) -> dict[str, list[str]]:
    """A host whose shared-memory pairs are worse than the other hosts' median by more than
    the threshold, its 95 % interval clear of that line; at least two other hosts."""
    out: dict[str, list[str]] = {}
    for metric, worse in (("bandwidth", -1), ("latency", 1)):
        got = {h: m[metric][1] for h, m in intra.items() if metric in m}
        if len(got) < 3:
            continue
        for h, st in got.items():
            others = statistics.median(s["median"] for k, s in got.items() if k != h)
            line = others * (1 + worse * threshold)
            ci = st.get("ci95") or [st["median"]] * 2
            if (worse < 0 and ci[1] < line) or (worse > 0 and ci[0] > line):
                out.setdefault(h, []).append(
                    f"shared memory: {metric} {st['median']:.4g} {'us' if worse > 0 else 'B/s'} "
                    f"(95% CI {ci[0]:.4g}..{ci[1]:.4g}) vs {others:.4g}, the other hosts' median"
                )
    return out


def _network(doc: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for v in doc.get("verdicts") or []:
        if isinstance(v, dict) and v.get("kind") == "host" and v.get("hosts"):
            out.setdefault(str(v["hosts"][0]), []).append(f"network: {v.get('text', '')}")
    return out


def _expected(verdicts: list[ex.Verdict], recs, rank_hosts: list[str]) -> dict[str, list[str]]:
    by_row = {ex.label(r): r for r in recs}
    out: dict[str, list[str]] = {}
    for v in verdicts:
        rec = by_row.get(v.row)
        hosts = limits.row_hosts(rec, rank_hosts) if rec is not None else set()
        if v.verdict == ex.FAIL and len(hosts) == 1:
            (h,) = hosts
            measured = ex.shown(v.value, v.rule.metric, v.rule.bound.of_limit)
            out.setdefault(h, []).append(
                f"expectations: {v.row} {v.rule.metric} {measured}, expected "
                f"{v.rule.bound.text} ({v.rule.where})"
            )
    return out


def judge(
    doc: dict | None,
    recs: list[records.Measurement],
    threshold: float,
    expected: list[ex.Verdict] = (),
    why_failed: str = "",
    notes: list[str] | None = None,
) -> dict[str, dict]:
    """{host: {"verdict": GOOD|SLOW|FAILED, "evidence": [...]}} for every host of the run;
    what could not be judged, and why, appended to notes."""
    notes = [] if notes is None else notes
    meta = (doc or {}).get("metadata") or {}
    hosts = [str(h) for h in meta.get("hosts") or []]
    if doc is None or not doc.get("complete", False) or why_failed:
        why = why_failed or (doc or {}).get("summary", {}).get("interrupted") or "no results"
        return {h: {"verdict": FAILED, "evidence": [why]} for h in hosts or ["?"]}
    found: dict[str, list[str]] = {}
    intra = _intra(recs)
    if not intra:
        notes.append("shared memory not measured: one rank a host (run two or more a host)")
    parts = (
        _network(doc),
        _memory(doc, threshold, notes),
        _shared_memory(intra, threshold) if _distinct(doc) else {},
        _expected(list(expected), recs, meta.get("rank_hosts") or []),
    )
    for part in parts:
        for h, said in part.items():
            found.setdefault(h, []).extend(said)
    figures = _figures(doc, intra)
    return {
        h: {
            "verdict": SLOW if h in found else GOOD,
            "evidence": found.get(h, []),
            "figures": figures.get(h, []),
        }
        for h in hosts
    }


def _distinct(doc: dict) -> bool:
    """Whether every host measured is a machine of its own (distinct boot ids)."""
    mem = ((doc.get("metadata") or {}).get("limits") or {}).get("memory") or {}
    machines = [m.get("machine") for m in mem.values() if isinstance(m, dict)]
    return None not in machines and len(set(machines)) == len(machines)


def exit_status(verdicts: dict[str, dict]) -> int:
    """2 when a host failed to run, else 1 when one is slow, else 0."""
    got = {v["verdict"] for v in verdicts.values()}
    return 2 if FAILED in got else 1 if SLOW in got else 0


def reason(evidence: list[str], width: int = 120) -> str:
    """The reason a drained node carries in Slurm: commbench's, the first evidence, short."""
    text = "commbench: slow: " + (evidence[0] if evidence else "")
    return text if len(text) <= width else text[: width - 3] + "..."
