"""The comparison of `commbench compare` as text and as JSON (no MPI): the table of the
rows, their warnings (what the comparison cannot conclude), the gate's lines, and the
machine-readable verdict of `--json` (docs/statistics.md). The rows and their verdicts
are commbench.views.compare's.
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter

from commbench import outputs
from commbench.models import twosample
from commbench.views.compare import ComparedRow, geometric_mean, regressions, summary
from commbench.views.compare_detect import detect_lines, detectability

METHOD = {
    "test": (
        "one-sided, of d = median(log new samples) - median(log old samples) beyond "
        "log(1 + threshold) (and the mirror for faster), Student's t with min(k_old, k_new) - 1 "
        "degrees of freedom, on the per-sample t_max of --samples K"
    ),
    "standard_error": (
        "sqrt(SE_old^2 + SE_new^2 + 2 run_spread^2); per run SE = 1.2533 x 1.4826 MAD of the "
        "log-samples / sqrt(n_eff), n_eff = k (1 - rho) / (1 + rho) where the lag-1 "
        "autocorrelation rho exceeds 1.645 / sqrt(k), else k; rho >= 0.8: the row is untested"
    ),
    "run_spread": (
        "the spread of a row's median between runs that a pair of runs cannot show, assumed "
        "(--run-spread)"
    ),
    "detectable": (
        "per row: exp(log(1 + threshold) + (t_{1-alpha} + t_{0.90}) SE), the smallest slowdown "
        "the row's test calls with 90% probability at alpha, before Benjamini-Hochberg"
    ),
    "multiplicity": "Benjamini-Hochberg adjusted p-values (q) over the tested rows",
    "effect": "ratio of the medians new/old with a percentile bootstrap interval",
    "regression": "a tested row with q_slower <= alpha and a ratio of medians above 1 + threshold",
    "untested": (
        "rows without samples in both runs, or with samples correlated at rho >= 0.8: ratio "
        "against the threshold and the rank spread only"
    ),
    "too_noisy": (
        "more than half of the tested rows with a detectable ratio above 1 + 4 x threshold "
        "(the threshold taken as at least 5%): exit 2 unless --allow-noisy"
    ),
}


def test_line(threshold: float, alpha: float, run_spread: float) -> str:
    """The two-file test in one line ({tested}: the count of tested rows)."""
    return (
        f"# test: a change beyond {threshold:.0%} in the median of the log-samples, against "
        f"their spread (autocorrelation counted) and {run_spread:.0%} assumed between runs "
        f"(--run-spread), Student's t; Benjamini-Hochberg q over {{tested}} tested rows at "
        f"alpha {alpha:g}; 95% bootstrap interval of the ratio of medians"
    )


def samples_advice(rows: list[ComparedRow]) -> str:
    """How the untested rows could be tested: --samples K where their family takes it; for a
    family that refuses --samples (overhead, net, gpcnet) the advice would be a dead end."""
    from commbench import run_options, suites
    from commbench.suites import option_use

    if rows and all(r.versus == "base" for r in rows):  # the store's gate: runs, not samples
        return (
            "store more runs that hold them (the between-run test needs 2 baseline runs of a "
            "row, 5 give it its power)"
        )
    opt = next(o for o in run_options.OPTIONS if o.dest == "samples")
    fams = sorted({r.family for r in rows if r.family})
    without = [
        f
        for f in fams
        if suites.family(f) is not None
        and not option_use.takes(opt, suites.family(f), run_options.OPTIONS)
    ]
    advice = (
        "run both with --samples K (K >= 10) to test them"
        if len(without) < len(fams) or not fams
        else ""
    )
    if without:
        said = (
            f"the {'/'.join(without)} famil{'ies take' if len(without) > 1 else 'y takes'} no "
            "--samples, so its rows cannot be tested here, only read side by side"
        )
        advice = f"{advice}; {said}" if advice else said
    return advice


def warnings(rows: list[ComparedRow], alpha: float, gate_unsampled: bool = False) -> list[str]:
    """What the comparison cannot conclude:
    untested rows, tests without the power to call anything."""
    out = []
    untested = [r for r in rows if not r.tested]
    if untested and (
        gate_unsampled or len(untested) < len(rows)
    ):  # none tested: compare_trust refuses
        reasons = Counter(r.why_untested for r in untested)
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
                f"that an unchanged row hides no regression; {samples_advice(untested)}. "
            )
            + (
                "--gate-unsampled: their 'slower' verdicts count as regressions."
                if gate_unsampled
                else "They do not decide the exit status (--gate-unsampled makes them)."
            )
        )
    shift = _whole_run_shift(rows)
    return [*out, shift] if shift else out


def _whole_run_shift(rows: list[ComparedRow]) -> str | None:
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


def q_text(r: ComparedRow) -> str:
    """The row's q in the direction of its ratio, as the table prints it."""
    q = r.q_slower if r.ratio >= 1 else r.q_faster
    return "-" if q is None else (f"{q:.4f}" if q >= 1e-4 else f"{q:.0e}")


def row_head(r: ComparedRow, label: str, widths: tuple[int, int] = (13, 13)) -> str:
    """A row's label, NP, mode, size, the two times and their ratio, in the table's columns."""
    _, np_, mode, x, _ = r.key
    return (
        f"{label:<24}{np_:>4} {mode or '-':<14}{'' if x is None else x:>10}"
        f"{r.old:{widths[0]}.2f}{r.new:{widths[1]}.2f}{r.ratio:9.3f}"
    )


def ci_q(r: ComparedRow) -> str:
    """The row's 95% interval of the ratio and its q, in the table's columns."""
    ci = f"{r.ci[0]:.3f}-{r.ci[1]:.3f}" if r.ci else "-"
    return f"  {ci:<15}{q_text(r):>8}"


def _verdict(r: ComparedRow) -> str:
    return r.verdict + ("" if r.tested else " (untested)")


def render(
    rows: list[ComparedRow],
    old_name: str,
    new_name: str,
    threshold: float = 0.05,
    alpha: float = 0.05,
    notes: list[str] = (),
    warns: list[str] = (),
    gate_unsampled: bool = False,
    gate: str | None = None,
    test_line: str | None = None,
    columns: tuple[str, str, str] | None = None,
) -> str:
    """The comparison as text; gate: the gate line when something else than the rows decides it;
    test_line and columns (old time, interval, ratio): another test's (commbench.store.gate)."""
    tested = sum(1 for r in rows if r.tested)
    old_col, ci_col, ratio_col = columns or ("old[usec]", "95% CI", "new/old")
    lines = [f"# old: {old_name}", f"# new: {new_name}"]
    if tested and test_line:
        lines.append(test_line.format(tested=tested))
    elif tested:
        lines.append(
            test_line(threshold, alpha, twosample.DEFAULT_RUN_SPREAD).format(tested=tested)
        )
    lines += [*notes, *(f"# warning: {w}" for w in warns), ""]
    lines.append(
        f"{'benchmark':<24}{'np':>4} {'mode':<14}{'bytes':>10}{old_col:>13}{'new[usec]':>13}"
        f"{ratio_col:>9}" + (f"  {ci_col:<15}{'q':>8}" if tested else "") + "  verdict"
    )
    engines = _engines(rows)
    for r in rows:
        name, _, _, _, groups = r.key
        label = (name if groups <= 1 else f"Multi-{name}") + (
            f" ({r.extras.get('engine')})" if engines else ""
        )
        lines.append(row_head(r, label) + (ci_q(r) if tested else "") + f"  {_verdict(r)}")
    lines += [*_limit_lines(rows), ""]
    lines += (
        [gate, *_gate_lines(rows, threshold, alpha, gate_unsampled)[1:]]
        if gate
        else _gate_lines(rows, threshold, alpha, gate_unsampled)
    )
    return "\n".join([*lines, f"# {summary(rows)}"])


def _engines(rows: list[ComparedRow]) -> bool:
    return len({r.extras.get("engine") for r in rows}) > 1


def _gate_lines(
    rows: list[ComparedRow], threshold: float, alpha: float, gate_unsampled: bool
) -> list[str]:
    if not rows:
        return []
    return _verdict_lines(rows, threshold, alpha, gate_unsampled) + detect_lines(rows)


def _verdict_lines(
    rows: list[ComparedRow], threshold: float, alpha: float, gate_unsampled: bool
) -> list[str]:
    bad = regressions(rows, gate_unsampled)
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
            f"new/{r.versus} {r.ratio:.3f} ({r.interval} {r.ci[0]:.3f}-{r.ci[1]:.3f}), q "
            + q_text(r)
            if r.tested
            else f"new/{r.versus} {r.ratio:.3f}, untested"
        )
        out.append(f"# regression: {r.label(_engines(rows))}: {detail}")
    return out


def _limit_lines(rows: list[ComparedRow]) -> list[str]:
    """A table's largest size against the bandwidth limit, new (old), where both are known."""
    last: dict[tuple, ComparedRow] = {}
    for r in rows:
        old, new = r.limits.get("fraction", (None, None))
        if old is not None and new is not None:
            last[r.key[:3] + r.key[4:]] = r  # the table's rows arrive by size
    said = [
        f"{r.label()} {r.limits['fraction'][1]:.2f} ({r.limits['fraction'][0]:.2f})"
        for r in last.values()
    ]
    if not said:
        return []
    head = "# of the physical limit, new (old), each table's largest size (docs/limits.md): "
    return ["", head + "; ".join(said[:12]) + ("; ..." if len(said) > 12 else "")]


def _num(v: float | None) -> float | None:
    return v if v is None or math.isfinite(v) else None


def row_json(r: ComparedRow, with_engine: bool = False) -> dict:
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
        "interval": r.interval if r.ci else None,
        "detectable": _num(r.detectable),
        "within_spread": list(r.within) if r.within else None,
        "rho": list(r.rho) if r.rho else None,
        "n_eff": list(r.n_eff) if r.n_eff else None,
        "taken": list(r.taken) if r.taken else None,
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
        "limit": {k: list(v) for k, v in r.limits.items()} or None,
    }


def to_json(
    rows: list[ComparedRow],
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
    method: dict | None = None,
    baseline: dict | None = None,
    run_spread: float | None = None,
) -> dict:
    """The machine-readable verdict of `commbench compare --json` (docs/statistics.md): verdict
    pass, regression, too-noisy (the one refusal: the rows cannot see the threshold), refused
    (a finding the gate cannot vouch past) or error (bad input)."""
    refused = {f["code"] for f in findings if f["effect"] == "refused"}
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
        "run_spread": run_spread,
        "method": method or METHOD,
        **({"baseline": baseline} if baseline else {}),
        "exit_status": status,
        "verdict": {0: "pass", 1: "regression"}.get(status, _refusal(refused)),
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
            "detectable": detectability(rows),
        },
        "notes": [n.removeprefix("# note: ") for n in notes],
        "warnings": list(warns),
        "errors": list(errors),
        "findings": list(findings),
        "rows": [row_json(r, engines) for r in rows],
    }


def _refusal(codes: set[str]) -> str:
    if codes == {"too-noisy"}:
        return "too-noisy"
    return "refused" if codes else "error"


def write_json(path: str, payload: dict) -> str | None:
    """Write a JSON verdict to path (- : stdout; missing directories made, as -o and --csv
    make them); a message when it cannot be written."""
    text = json.dumps(payload, indent=1, allow_nan=False) + "\n"
    if path == "-":
        sys.stdout.write(text)
        return None
    try:
        outputs.ensure_parent(path)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        return (
            f"--json {path!r}: cannot write ({e.strerror}) (accepted: --json FILE in a "
            "writable directory, or -)"
        )
    return None
