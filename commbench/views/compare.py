"""Comparison of two results files: a view over their records (no MPI).

Rows are matched on (family, benchmark, NP, mode, bytes, groups, and the extras
that tell a table's rows apart). For each match: the ratio new/old of the
reported time (t_max, or t_ovrl for overlap tables) and a verdict.

Rows with --samples K in both runs are tested (commbench.models.twosample): a
one-sided Mann-Whitney U test of "slower by more than the threshold" (and its
mirror, "faster"), Benjamini-Hochberg over the tested rows, the ratio of the
medians with a bootstrap interval. Such a row is "slower" when its adjusted
p-value (q) is at most alpha and the ratio of medians exceeds 1 + threshold:
that is a regression, what `commbench compare` exits 1 for. Rows without samples
on both sides are "untested": their verdict compares the ratio with the
threshold and the runs' rank-to-rank spread only, and does not gate the exit
status unless asked (--gate-unsampled). docs/statistics.md gives the method.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from commbench import records
from commbench.models import twosample

TIME_KEY = records.COMPARED
ROW_EXTRAS = records.ROW_EXTRAS


@dataclass
class Row:
    key: tuple  # (benchmark, np, mode, bytes, groups)
    old: float  # µs: the median of the samples for a tested row, else the reported time
    new: float
    ratio: float
    noise: float  # relative spread (t_max - t_min) / t_max, larger of the two runs
    verdict: str  # same | slower | faster
    family: str = ""
    extras: dict = field(default_factory=dict)  # of ROW_EXTRAS, those the row has
    tested: bool = False
    why_untested: str = ""
    ci: tuple[float, float] | None = None  # of the ratio
    k_old: int = 0
    k_new: int = 0
    p_slower: float | None = None
    p_faster: float | None = None
    q_slower: float | None = None  # Benjamini-Hochberg over the tested rows
    q_faster: float | None = None
    regression: bool = False  # tested, slower beyond the threshold, significant after BH

    def label(self, with_engine: bool = False) -> str:
        name, np_, mode, x, groups = self.key
        parts = [name if groups <= 1 else f"Multi-{name}", f"np={np_}"]
        parts += [f"mode={mode}"] if mode else []
        parts += [] if x is None else [f"bytes={x}"]
        parts += [f"{k}={v}" for k, v in self.extras.items() if k != "engine" or with_engine]
        return " ".join(parts)


def _key(r: records.Measurement) -> tuple:
    return (r.benchmark, r.np, r.mode, r.bytes, len(r.groups))


_full_key = (
    records.identity
)  # the family too (Accumulate of IMB-EXT is not IMB-RMA's), and the extras


_time = records.compared_time


def _loose_key(r: records.Measurement) -> tuple:
    return (r.family, *_key(r), *(str(r.extra.get(k)) for k in ROW_EXTRAS if k != "engine"))


def _engineless(loose: dict, r: records.Measurement) -> records.Measurement | None:
    """A row that names no engine (an imported log's, a file from before the engines)
    matches the one row of the other file that differs from it only in the engine."""
    found = [
        o
        for o in loose.get(_loose_key(r), [])
        if "engine" not in o.extra or "engine" not in r.extra
    ]
    return found[0] if len(found) == 1 else None


def match(old: list[records.Measurement], new: list[records.Measurement]) -> list[tuple]:
    """(old row, new row) for every row of new that has a timed counterpart in old."""
    by_key = {_full_key(r): r for r in old if r.ok}
    loose: dict[tuple, list] = {}
    for r in old:
        if r.ok:
            loose.setdefault(_loose_key(r), []).append(r)
    pairs = []
    for r in new:
        o = by_key.get(_full_key(r)) or _engineless(loose, r)
        if o is not None and r.ok and _time(o) is not None and _time(r) is not None:
            pairs.append((o, r))
    return pairs


def unmatched(old: list[records.Measurement], new: list[records.Measurement]) -> tuple[int, int]:
    """Timed rows of old, and of new, that the other file has no counterpart for."""
    pairs = match(old, new)
    seen_old, seen_new = {id(o) for o, _ in pairs}, {id(n) for _, n in pairs}
    return (
        sum(1 for r in old if r.ok and _time(r) and id(r) not in seen_old),
        sum(1 for r in new if r.ok and _time(r) and id(r) not in seen_new),
    )


def _spread(r: records.Measurement) -> float:
    tmax, tmin = r.values.get("t_max"), r.values.get("t_min")
    if not tmax or tmin is None:
        return 0.0
    return (tmax - tmin) / tmax


def _samples(r: records.Measurement) -> tuple[object, str]:
    """The per-sample times of the compared quantity, or None and why not."""
    few = r.extra.get("few_repetitions")
    if isinstance(few, dict):
        return None, "it rests on too few valid repetitions (!few in its run)"
    st = records.samples_of(r)
    if (
        r.kind in TIME_KEY
        and (r.components or ["t"])[0] != "t_ovrl"
        and st.get("quantity") != TIME_KEY[r.kind]
    ):
        return None, "its samples time another quantity than the one compared"
    values = st.get("t_max_samples")
    if not isinstance(values, list) or not values:
        return None, "no --samples"
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return None, "its samples are not numbers"
    a = twosample.usable(values)
    return a, "" if a is not None else f"fewer than {twosample.MIN_SAMPLES} usable samples"


def _row(
    o: records.Measurement, r: records.Measurement, threshold: float, confidence: float
) -> Row:
    to, tn = _time(o), _time(r)
    noise = max(_spread(o), _spread(r))
    extras = {k: r.extra[k] for k in ROW_EXTRAS if k in r.extra}
    (so, why_o), (sn, why_n) = _samples(o), _samples(r)
    if so is None or sn is None:
        why = f"old row: {why_o}" if so is None else f"new row: {why_n}"
        log_ratio = math.log(tn) - math.log(to)  # 1e-300 / 1e300 does not underflow to 0 here
        ratio = tn / to  # 0 or inf beyond a float's range: the JSON says null, the verdict stands
        if abs(log_ratio) <= math.log1p(max(threshold, noise)):
            verdict = "same"
        else:
            verdict = "slower" if ratio > 1 else "faster"
        return Row(_key(r), to, tn, ratio, noise, verdict, r.family, extras, why_untested=why)
    t = twosample.compare(so, sn, threshold, confidence)
    return Row(
        _key(r),
        t.old_median,
        t.new_median,
        t.ratio,
        noise,
        "same",
        r.family,
        extras,
        tested=True,
        ci=t.ci,
        k_old=t.k_old,
        k_new=t.k_new,
        p_slower=t.p_slower,
        p_faster=t.p_faster,
    )


def compare(
    old: list[records.Measurement],
    new: list[records.Measurement],
    threshold: float = 0.05,
    alpha: float = 0.05,
    confidence: float = 0.95,
) -> list[Row]:
    """Matched rows with verdicts (module docstring): tested rows by Mann-Whitney U
    and Benjamini-Hochberg at alpha, untested ones by threshold and rank spread."""
    rows = [_row(o, r, threshold, confidence) for o, r in match(old, new)]
    tested = [r for r in rows if r.tested]
    for r, qs, qf in zip(
        tested,
        twosample.adjust([r.p_slower for r in tested]),
        twosample.adjust([r.p_faster for r in tested]),
    ):
        r.q_slower, r.q_faster = qs, qf
        if qs <= alpha and r.ratio > 1 + threshold:
            r.verdict, r.regression = "slower", True
        elif qf <= alpha and r.ratio < 1 / (1 + threshold):
            r.verdict = "faster"
    return rows


def regressions(rows: list[Row], gate_unsampled: bool = False) -> list[Row]:
    """The rows that make the exit status 1."""
    return [
        r
        for r in rows
        if r.regression or (gate_unsampled and not r.tested and r.verdict == "slower")
    ]


def geometric_mean(values: list[float]) -> float:
    """Of positive ratios; 0 and inf (ratios beyond a float's range) count as such, both: NaN."""
    if not values:
        return float("nan")
    logs = [
        math.log(v) if 0 < v < math.inf else (-math.inf if v <= 0 else math.inf) for v in values
    ]
    total = sum(logs)
    return (
        float("nan")
        if math.isnan(total)
        else math.exp(total / len(logs))
        if math.isfinite(total)
        else (0.0 if total < 0 else math.inf)
    )


def summary(rows: list[Row]) -> str:
    """The comparison in one sentence (the text's last line, the HTML report's verdict)."""
    if not rows:
        return "no matching rows (different families, benchmarks, sizes, process counts or engines)"
    gm = geometric_mean([r.ratio for r in rows])
    counts = {v: sum(1 for r in rows if r.verdict == v) for v in ("faster", "slower", "same")}
    tested = sum(1 for r in rows if r.tested)
    return (
        f"{len(rows)} matched rows ({tested} tested); geometric mean new/old = {gm:.3f}; "
        f"{counts['faster']} faster, {counts['slower']} slower, {counts['same']} within noise"
    )


# ---------------------------------------------------------------- the runs around the rows

ABSENT = type(
    "NotRecorded", (), {"__repr__": lambda self: "not recorded"}
)()  # held against no file


def _meta(key: str):
    return lambda d: _recorded((d.get("metadata") or {}).get(key))


def _recorded(v: object) -> object:
    return ABSENT if v is None else v


def _conf(key: str):
    """A run's option: None is a value (off, unset); a key the file lacks, or an import's
    config (what its logs say, not a run's options), is not recorded."""
    return lambda d: (d.get("config") or {}).get(key, ABSENT) if _ran(d) else ABSENT


def _ran(d: dict) -> bool:
    """A file of commbench run (an import records only what its logs say)."""
    return "source" not in (d.get("metadata") or {})


def _placement(d: dict):
    per_host = (d.get("metadata") or {}).get("ranks_per_host")
    return (
        sorted(per_host.values(), reverse=True)
        if isinstance(per_host, dict) and per_host
        else ABSENT
    )


def _library(d: dict):
    v = (d.get("metadata") or {}).get("mpi_library_version")
    return " ".join(v.split()) if isinstance(v, str) else ABSENT


def _measuring(key: str):
    return lambda d: (
        ((d.get("config") or {}).get("measuring") or {}).get(key, ABSENT) if _ran(d) else ABSENT
    )


# (what, how to read it from a document, incomparable?): an incomparable difference
# changes what the numbers are (another library, another way of timing, other buffers)
# and makes `commbench compare` refuse (exit 2, --allow-different compares anyway); the
# others are said before the rows.
DIFFERENCES = (
    ("world size", _meta("world_size"), True),
    ("rank placement (ranks per host)", _placement, True),
    ("buffer allocation (--alloc)", _conf("alloc"), True),
    ("huge pages (--hugepages)", _conf("hugepages"), True),
    ("MPI library", _library, True),
    ("MPI standard version", _meta("mpi_version"), True),
    ("MPI thread level (-thread_level)", _meta("thread_level"), True),
    ("methodology (--methodology)", _conf("methodology"), True),
    ("per-repetition timing (--per-iteration)", _measuring("per_iteration"), True),
    ("synchronized starts (--sync-start)", _measuring("sync_start"), True),
    ("cache policy (-off_cache)", _conf("off_cache"), True),
    ("concurrent groups (-multi)", _conf("multi"), True),
    ("process mapping (-map)", _conf("map"), True),
    ("engine (--engine)", _meta("engine"), True),
    ("MPI environment variables", _meta("mpi_env"), True),
    ("family", lambda d: _recorded((d.get("family") or {}).get("name")), False),
    ("family options", _conf("params"), False),
    ("check mode (-check)", _conf("check"), False),
    ("repeated samples (--samples)", _conf("samples"), False),
)


def _differences(
    old_doc: dict, new_doc: dict, hard: bool | None
) -> list[tuple[str, object, object]]:
    out = []
    for label, get, is_hard in DIFFERENCES:
        if hard is not None and is_hard != hard:
            continue
        a, b = get(old_doc), get(new_doc)
        if a is not ABSENT and b is not ABSENT and a != b:
            if isinstance(a, dict) and isinstance(b, dict):
                keys = sorted(k for k in {*a, *b} if a.get(k) != b.get(k))
                a, b = ({k: d.get(k, "(unset)") for k in keys} for d in (a, b))
            out.append((label, a, b))
    return out


def incomparable(old_doc: dict, new_doc: dict) -> list[str]:
    """Why the two runs cannot be compared row by row (empty: they can). A value that
    one file does not record (an imported log's) is not held against it."""
    return [
        f"{label} differs: old {_short(a)}, new {_short(b)}"
        for label, a, b in _differences(old_doc, new_doc, True)
    ]


def context_notes(old_doc: dict, new_doc: dict, hard: bool | None = None) -> list[str]:
    """What differs between the two runs beyond the rows: said before the ratios
    (every difference by default, the incomparable ones too; hard=False: only the others)."""
    return [
        f"# note: {label} differs: old {_short(a)}, new {_short(b)}; ratios include that difference"
        for label, a, b in _differences(old_doc, new_doc, hard)
    ]


def _short(v: object) -> str:
    s = "none" if v is None else str(v)
    return s if len(s) <= 120 else s[:117] + "..."


# ---------------------------------------------------------------- text and JSON

METHOD = {
    "test": (
        "Mann-Whitney U, one-sided, of new against old scaled by (1 + threshold) (and the "
        "mirror for faster), on the per-sample t_max of --samples K"
    ),
    "multiplicity": "Benjamini-Hochberg adjusted p-values (q) over the tested rows",
    "effect": "ratio of the medians new/old with a percentile bootstrap interval",
    "regression": "a tested row with q_slower <= alpha and a ratio of medians above 1 + threshold",
    "untested": (
        "rows without samples in both runs: ratio against the threshold and the rank spread only"
    ),
}


def warnings(rows: list[Row], alpha: float, gate_unsampled: bool = False) -> list[str]:
    """What the comparison cannot conclude:
    untested rows, tests without the power to call anything."""
    out = []
    untested = [r for r in rows if not r.tested]
    if untested and (
        gate_unsampled or len(untested) < len(rows)
    ):  # none tested: compare_trust refuses
        reasons: dict[str, int] = {}
        for r in untested:
            reasons[r.why_untested] = reasons.get(r.why_untested, 0) + 1
        why = "; ".join(f"{w}: {n}" for w, n in reasons.items())
        head = (
            "no row can be tested"
            if len(untested) == len(rows)
            else f"{len(untested)} of {len(rows)} rows untested"
        )
        out.append(
            (
                f"{head} ({why}): their verdicts compare one ratio with the threshold and the rank "
                "spread, so nothing says whether a change there is more than run-to-run noise, nor "
                "that an unchanged row hides no regression; run both with --samples K (K >= 10) to "
                "test them. "
            )
            + (
                "--gate-unsampled: their 'slower' verdicts count as regressions."
                if gate_unsampled
                else "They do not decide the exit status (--gate-unsampled makes them)."
            )
        )
    weak = {
        (r.k_old, r.k_new)
        for r in rows
        if r.tested and twosample.smallest_p(r.k_old, r.k_new) > alpha
    }
    if weak:
        ks = ", ".join(f"{a} and {b}" for a, b in sorted(weak))
        out.append(
            f"rows with {ks} samples cannot reach alpha {alpha:g} whatever the times: they are "
            "never called slower or faster; run with more --samples"
        )
    shift = _whole_run_shift(rows)
    return [*out, shift] if shift else out


def _whole_run_shift(rows: list[Row]) -> str | None:
    """Most tested rows slower by about one factor: what a run-level difference (another job,
    another placement of the processes) looks like; said, not judged (the samples of one run
    cannot tell it from a regression)."""
    tested = [r for r in rows if r.tested]
    slow = [r.ratio for r in tested if r.verdict == "slower"]
    if len(tested) < 5 or len(slow) < 0.75 * len(tested) or max(slow) > 1.5 * min(slow):
        return None
    return (
        f"{len(slow)} of {len(tested)} tested rows are slower by one factor ({min(slow):.2f} to "
        f"{max(slow):.2f}): a whole run shifted, as another job on the machine or another "
        "placement of the processes makes, looks the same; run both again to tell it from a "
        "regression"
    )


def _q(r: Row) -> str:
    q = r.q_slower if r.ratio >= 1 else r.q_faster
    return "-" if q is None else (f"{q:.4f}" if q >= 1e-4 else f"{q:.0e}")


def _verdict(r: Row) -> str:
    return r.verdict + ("" if r.tested else " (untested)")


def render(
    rows: list[Row],
    old_name: str,
    new_name: str,
    threshold: float = 0.05,
    alpha: float = 0.05,
    notes: list[str] = (),
    warns: list[str] = (),
    gate_unsampled: bool = False,
    gate: str | None = None,
) -> str:
    """The comparison as text; gate: the gate line when something else than the rows decides it."""
    tested = sum(1 for r in rows if r.tested)
    lines = [f"# old: {old_name}", f"# new: {new_name}"]
    if tested:
        lines.append(
            f"# test: Mann-Whitney U of a change beyond {threshold:.0%} on the samples, "
            f"Benjamini-Hochberg q over {tested} tested rows at alpha {alpha:g}; "
            "95% bootstrap interval of the ratio of medians"
        )
    lines += [*notes, *(f"# warning: {w}" for w in warns), ""]
    lines.append(
        f"{'benchmark':<24}{'np':>4} {'mode':<14}{'bytes':>10}{'old[usec]':>13}{'new[usec]':>13}"
        f"{'new/old':>9}" + (f"  {'95% CI':<15}{'q':>8}" if tested else "") + "  verdict"
    )
    engines = _engines(rows)
    for r in rows:
        name, np_, mode, x, groups = r.key
        label = (name if groups <= 1 else f"Multi-{name}") + (
            f" ({r.extras.get('engine')})" if engines else ""
        )
        ci = f"{r.ci[0]:.3f}-{r.ci[1]:.3f}" if r.ci else "-"
        lines.append(
            f"{label:<24}{np_:>4} {mode or '-':<14}{'' if x is None else x:>10}"
            f"{r.old:13.2f}{r.new:13.2f}{r.ratio:9.3f}"
            + (f"  {ci:<15}{_q(r):>8}" if tested else "")
            + f"  {_verdict(r)}"
        )
    lines.append("")
    lines += (
        [gate, *_gate_lines(rows, threshold, alpha, gate_unsampled)[1:]]
        if gate
        else _gate_lines(rows, threshold, alpha, gate_unsampled)
    )
    return "\n".join([*lines, f"# {summary(rows)}"])


def _engines(rows: list[Row]) -> bool:
    return len({r.extras.get("engine") for r in rows}) > 1


def _gate_lines(rows: list[Row], threshold: float, alpha: float, gate_unsampled: bool) -> list[str]:
    bad = regressions(rows, gate_unsampled)
    if not rows:
        return []
    if not bad:
        plain = 0 if gate_unsampled else sum(1 for r in rows if not r.tested)
        if plain:
            return [
                (
                    f"# gate: no regression in the {len(rows) - plain} tested rows (none slower "
                    f"by more than {threshold:.0%} with q <= {alpha:g}); {plain} untested rows "
                    "not judged"
                )
            ]
        return [
            (
                "# gate: no regression (no row slower by more "
                f"than {threshold:.0%} with q <= {alpha:g})"
            )
        ]
    out = [
        f"# gate: REGRESSION in {len(bad)} row{'s' if len(bad) > 1 else ''} (slower by more than "
        f"{threshold:.0%}" + (f", q <= {alpha:g}" if any(r.tested for r in bad) else "") + ")"
    ]
    for r in bad:
        detail = (
            f"new/old {r.ratio:.3f} (95% CI {r.ci[0]:.3f}-{r.ci[1]:.3f}), q {_q(r)}"
            if r.tested
            else f"new/old {r.ratio:.3f}, untested"
        )
        out.append(f"# regression: {r.label(_engines(rows))}: {detail}")
    return out


def _num(v: float | None) -> float | None:
    return v if v is None or math.isfinite(v) else None


def row_json(r: Row, with_engine: bool = False) -> dict:
    name, np_, mode, x, groups = r.key
    return {
        "family": r.family,
        "benchmark": name,
        "np": np_,
        "mode": mode,
        "bytes": x,
        "groups": groups,
        "extras": r.extras,
        "label": r.label(with_engine),
        "old_us": r.old,
        "new_us": r.new,
        "ratio": _num(r.ratio),
        "ci": list(r.ci) if r.ci else None,
        "k_old": r.k_old or None,
        "k_new": r.k_new or None,
        "p_slower": _num(r.p_slower),
        "q_slower": _num(r.q_slower),
        "p_faster": _num(r.p_faster),
        "q_faster": _num(r.q_faster),
        "spread": r.noise,
        "tested": r.tested,
        "untested_reason": r.why_untested or None,
        "verdict": r.verdict,
        "regression": r.regression,
    }


def to_json(
    rows: list[Row],
    *,
    old: str,
    new: str,
    threshold: float,
    alpha: float,
    gate_unsampled: bool,
    status: int,
    notes: list[str] = (),
    warns: list[str] = (),
    errors: list[str] = (),
    unmatched_rows: tuple[int, int] = (0, 0),
    findings: list[dict] = (),
) -> dict:
    """The machine-readable verdict of `commbench compare --json` (docs/statistics.md): verdict
    pass, regression, refused (a finding the gate cannot vouch past) or error (bad input)."""
    refused = any(f["effect"] == "refused" for f in findings)
    bad = regressions(rows, gate_unsampled)
    counts = {v: sum(1 for r in rows if r.verdict == v) for v in ("slower", "faster", "same")}
    engines = _engines(rows)
    return {
        "format": "commbench-compare",
        "format_version": 1,
        "old": old,
        "new": new,
        "threshold": threshold,
        "alpha": alpha,
        "confidence": 0.95,
        "gate_unsampled": gate_unsampled,
        "method": METHOD,
        "exit_status": status,
        "verdict": {0: "pass", 1: "regression"}.get(status, "refused" if refused else "error"),
        "regressions": [r.label(engines) for r in bad],
        "summary": {
            "matched": len(rows),
            "tested": sum(1 for r in rows if r.tested),
            "untested": sum(1 for r in rows if not r.tested),
            **counts,
            "geometric_mean": _num(geometric_mean([r.ratio for r in rows])) if rows else None,
            "unmatched_old": unmatched_rows[0],
            "unmatched_new": unmatched_rows[1],
            "text": summary(rows),
        },
        "notes": [n.removeprefix("# note: ") for n in notes],
        "warnings": list(warns),
        "errors": list(errors),
        "findings": list(findings),
        "rows": [row_json(r, engines) for r in rows],
    }
