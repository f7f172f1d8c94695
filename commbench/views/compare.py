"""Comparison of two results files: a view over their records (no MPI).

Rows are matched on (benchmark, NP, mode, bytes, groups). For each match the
ratio new/old of the reported time (t_max, or t_ovrl for overlap tables) is
printed, with a verdict that accounts for the spread between ranks: a change
smaller than the run's own rank-to-rank spread is not called a change, nor one
whose medians' 95% intervals overlap when both runs used --samples K.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from commbench import records

TIME_KEY = {"overlap": "t_ovrl", "overlap_sync": "t_ovrl", "passive": "t_ovrl"}


@dataclass
class Row:
    key: tuple
    old: float
    new: float
    ratio: float
    noise: float  # relative spread (t_max - t_min) / t_max, larger of the two runs
    verdict: str


def _key(r: records.Measurement) -> tuple:
    return (r.benchmark, r.np, r.mode, r.bytes, len(r.groups))


# Record extras that tell rows of one table apart: the engine (--engine both), the
# overhead family's Q variant and trial, a msgrate pattern.
ROW_EXTRAS = ("engine", "q", "trial", "pattern")


def _full_key(r: records.Measurement) -> tuple:
    """What makes two rows the same measurement: the family too (Accumulate of IMB-EXT
    is not IMB-RMA's) and the extras that tell a table's rows apart."""
    return (r.family, *_key(r), *(str(r.extra.get(k)) for k in ROW_EXTRAS))


def duplicates(recs: list[records.Measurement]) -> int:
    """Rows of one file that share a key (which one to compare would be a guess)."""
    keys = [_full_key(r) for r in recs if r.ok]
    return len(keys) - len(set(keys))


def context_notes(old_doc: dict, new_doc: dict) -> list[str]:
    """What differs between the two runs beyond the rows: said before the ratios."""
    notes = []
    for label, get in (("world size", lambda d: d.get("metadata", {}).get("world_size")),
                       ("buffer allocation (--alloc)", lambda d: d.get("config", {}).get("alloc")),
                       ("huge pages (--hugepages)", lambda d: d.get("config", {}).get("hugepages")),
                       ("family", lambda d: d.get("family", {}).get("name"))):
        a, b = get(old_doc), get(new_doc)
        if a is not None and b is not None and a != b:
            notes.append(f"# note: {label} differs: old {a}, new {b}; ratios include that difference")
    return notes


def _time(r: records.Measurement) -> float | None:
    v = r.values.get(TIME_KEY.get(r.kind, "t_max"))
    if v is None:  # imported rows with one time only (OSU's latency, nccl-tests' time): their "t"
        v = r.values.get("t")
    return v if v and v > 0 else None


def _loose_key(r: records.Measurement) -> tuple:
    return (r.family, *_key(r), *(str(r.extra.get(k)) for k in ROW_EXTRAS if k != "engine"))


def _engineless(loose: dict, r: records.Measurement) -> records.Measurement | None:
    """A row that names no engine (an imported log's, a file from before the engines)
    matches the one row of the other file that differs from it only in the engine."""
    found = [o for o in loose.get(_loose_key(r), []) if "engine" not in o.extra or "engine" not in r.extra]
    return found[0] if len(found) == 1 else None


def _ci(r: records.Measurement) -> tuple[float, float] | None:
    """95% interval of the median t_max over repeated samples (runs with --samples K)."""
    ci = records.samples_of(r).get("t_max_median_ci95")
    return tuple(ci) if ci else None


def _spread(r: records.Measurement) -> float:
    tmax, tmin = r.values.get("t_max"), r.values.get("t_min")
    if not tmax or tmin is None:
        return 0.0
    return (tmax - tmin) / tmax


def compare(old: list[records.Measurement], new: list[records.Measurement], threshold: float = 0.05) -> list[Row]:
    """Matched rows; a change counts when |ratio-1| exceeds threshold and the rank spread."""
    by_key = {_full_key(r): r for r in old if r.ok}
    loose: dict[tuple, list] = {}
    for r in old:
        if r.ok:
            loose.setdefault(_loose_key(r), []).append(r)
    rows = []
    for r in new:
        o = by_key.get(_full_key(r)) or _engineless(loose, r)
        if o is None or not r.ok:
            continue
        to, tn = _time(o), _time(r)
        if to is None or tn is None:
            continue
        ratio = tn / to
        noise = max(_spread(o), _spread(r))
        limit = max(threshold, noise)
        ci_o, ci_n = _ci(o), _ci(r)
        if abs(math.log(ratio)) <= math.log1p(limit):
            verdict = "same"
        elif ci_o and ci_n and ci_o[0] <= ci_n[1] and ci_n[0] <= ci_o[1]:
            verdict = "same"  # --samples: the medians' 95% intervals overlap
        else:
            verdict = "slower" if ratio > 1 else "faster"
        rows.append(Row(_key(r), to, tn, ratio, noise, verdict))
    return rows


def geometric_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def render(rows: list[Row], old_name: str, new_name: str) -> str:
    lines = [f"# old: {old_name}", f"# new: {new_name}", "",
             f"{'benchmark':<24}{'np':>4} {'mode':<14}{'bytes':>10}{'old[usec]':>13}{'new[usec]':>13}{'new/old':>9}  verdict"]
    for r in rows:
        name, np_, mode, x, groups = r.key
        label = name if groups <= 1 else f"Multi-{name}"
        lines.append(f"{label:<24}{np_:>4} {mode or '-':<14}{'' if x is None else x:>10}"
                     f"{r.old:13.2f}{r.new:13.2f}{r.ratio:9.3f}  {r.verdict}")
    return "\n".join([*lines, "", f"# {summary(rows)}"])


def summary(rows: list[Row]) -> str:
    """The comparison in one sentence (the text's last line, the HTML report's verdict)."""
    if not rows:
        return "no matching rows (different families, benchmarks, sizes, process counts or engines)"
    gm = geometric_mean([r.ratio for r in rows])
    counts = {v: sum(1 for r in rows if r.verdict == v) for v in ("faster", "slower", "same")}
    return (f"{len(rows)} matched rows; geometric mean new/old = {gm:.3f}; "
            f"{counts['faster']} faster, {counts['slower']} slower, {counts['same']} within noise")
