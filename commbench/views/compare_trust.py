"""What `commbench compare` must know before it may say "pass": the runs it can vouch for.

The rows' statistics answer "is NEW slower than OLD?" only for rows that were
measured, checked and tested. Each way a comparison falls short of that is a
finding with a code, the file it concerns and an effect:

- **refused** (exit status 2 whatever the rows read; the JSON's verdict is
  "refused"): the gate cannot vouch for the comparison;
- **warning** (named in the text and in the JSON's findings; the exit status
  follows the rows): the comparison is whole but something in it is not judged.

RULES is the table docs/statistics.md gives; `--allow-incomplete` and
`--allow-different` turn the findings that name them into warnings, and
`--gate-unsampled` makes untested rows count, so that nothing is left unjudged.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from commbench import records
from commbench.models import twosample
from commbench.views import compare, compare_text

REFUSED, WARNING = "refused", "warning"

# code -> (effect, what turns it into a warning, when it applies)
RULES: dict[str, tuple[str, str | None, str]] = {
    "incomplete-run": (
        REFUSED,
        "--allow-incomplete",
        (
            "a file says complete: false (an interrupted run, "
            "a log cut short): rows it lacks are not gated"
        ),
    ),
    "check-failed": (
        REFUSED,
        None,
        "a file comes from a run whose -check FAILED: its timings are not valid",
    ),
    "rows-not-measured": (
        REFUSED,
        "--allow-incomplete",
        "rows OLD measured have another status in NEW (time-out, stuck, interrupted, out-of-mem …)",
    ),
    "options-differ": (
        REFUSED,
        "--allow-different",
        (
            "the runs differ in what changes the numbers (world size, placement, --alloc, "
            "--hugepages, MPI library and standard, thread level, methodology, --per-iteration, "
            "--sync-start, -off_cache, -multi, -map, engine, MPI environment variables)"
        ),
    ),
    "family-options-differ": (
        WARNING,
        None,
        "the family's own options differ (config.params): some select rows, others change the "
        "numbers (window sizes, data types): named, not refused",
    ),
    "nothing-tested": (
        REFUSED,
        "--gate-unsampled",
        "no matched row has --samples in both runs: no row can be tested",
    ),
    "too-noisy": (
        REFUSED,
        "--allow-noisy",
        "more than half of the tested rows cannot detect a slowdown of 1 + 4 x threshold (their "
        "detectable ratio; the threshold taken as at least 5%): the runs vary too much (the "
        "history gate: its baseline runs) for a pass to mean anything; rows called slower "
        "through that noise are a regression all the same, and this a warning beside it",
    ),
    "untested-slower": (
        WARNING,
        "--gate-unsampled",
        "untested rows read slower than the threshold: shown, not judged",
    ),
    "rows-not-measured-before": (
        WARNING,
        None,
        "rows NEW measured have another status in OLD: nothing to compare them with",
    ),
    "unmatched-rows": (
        WARNING,
        None,
        "rows of one file have no counterpart in the other: not compared",
    ),
    # --across mpi (commbench.views.compare_mpis): a comparison of two MPI libraries
    "not-two-mpis": (
        REFUSED,
        None,
        "--across mpi: both runs used one MPI library, or a file does not record its library",
    ),
    "differs-beyond-mpi": (
        REFUSED,
        None,
        "--across mpi: the runs differ in more than the MPI library (world size, hosts, "
        "placement, --alloc, options, family options …): the ratios would mix the two",
    ),
    "rows-differ": (
        REFUSED,
        None,
        "--across mpi: the runs measured other benchmarks, process counts or sizes",
    ),
}


OVERRIDES = {
    "--gate-unsampled": (
        "judges untested rows by their ratio against the threshold and the rank spread"
    ),
    "--allow-noisy": "judges the rows as they are: a pass says nothing below that ratio",
}


@dataclass
class Finding:
    code: str
    message: str
    effect: str = ""  # REFUSED or WARNING: RULES' effect unless the override was given
    side: str = ""  # old, new, both, or "" (the comparison)
    rows: list[str] = field(default_factory=list)

    @property
    def line(self) -> str:
        """The finding as the comparison's text says it ("# REFUSED [code]: message")."""
        shown = "REFUSED" if self.effect == REFUSED else self.effect
        return f"# {shown} [{self.code}]: {self.message}"

    def to_json(self) -> dict:
        return {
            "code": self.code,
            "effect": self.effect,
            "side": self.side or None,
            "message": self.message,
            "rows": self.rows,
        }


def finding(
    code: str, message: str, allowed: set[str], side: str = "", rows: list[str] = ()
) -> Finding:
    effect, override, _ = RULES[code]
    does = OVERRIDES.get(override, "compares anyway")
    if override and override in allowed:
        effect = WARNING
        message += f" ({override} given: it {does})"
    elif override and effect == REFUSED:
        message += f" (accepted: {override} {does})"
    return Finding(code, message, effect, side, list(rows))


def _label(r: records.Measurement) -> str:
    return f"{r.benchmark} np={r.np}" + ("" if r.bytes is None else f" bytes={r.bytes}")


def _few(labels: list[str], most: int = 4) -> str:
    return ", ".join(labels[:most]) + (
        f" and {len(labels) - most} more" if len(labels) > most else ""
    )


def runs(
    docs: dict[str, tuple[str, dict, list[records.Measurement]]], allowed: set[str]
) -> list[Finding]:
    """Findings about each run on its own: did it finish, did its check pass.
    docs: side -> (path, document, records)."""
    out = []
    for side, (path, doc, recs) in docs.items():
        if doc.get("complete") is not True:
            why = (doc.get("summary") or {}).get("interrupted") or "complete is not true"
            out.append(
                finding(
                    "incomplete-run",
                    f"{side} run {path} did not finish ({why}); it holds "
                    f"{sum(1 for r in recs if r.ok)} measured rows",
                    allowed,
                    side,
                )
            )
        failed = [_label(r) for r in recs if r.extra.get("check") == records.FAILED]
        count = (doc.get("summary") or {}).get("check_failures") or 0
        if failed or count:
            out.append(
                finding(
                    "check-failed",
                    f"{side} run {path} comes from a run whose -check FAILED "
                    f"({len(failed) or count} rows{': ' + _few(failed) if failed else ''}): its "
                    "timings are not valid; fix the failure and run again",
                    allowed,
                    side,
                    failed,
                )
            )
    return out


def _table(r: records.Measurement) -> tuple:
    return records.identity(r)[:4] + records.identity(r)[5:]  # all but the size


def statuses(
    old: list[records.Measurement],
    new: list[records.Measurement],
    allowed: set[str],
    names: tuple[str, str] = ("old", "new"),
) -> list[Finding]:
    """Rows one run measured and the other did not: another status for the same row, or, after
    a row that ended its sweep (IMB's time-out), the sizes the sweep never reached."""
    by_old = {records.identity(r): r for r in old}
    measured_new = {records.identity(r) for r in new if r.ok}
    cut = {_table(r) for r in new if not r.ok}
    out = []
    lost = [
        (o, r)
        for r in new
        if (o := by_old.get(records.identity(r))) is not None and o.ok and not r.ok
    ]
    labels = [f"{_label(r)} ({r.status})" for _, r in lost]
    seen = {records.identity(r) for _, r in lost}
    labels += [
        f"{_label(o)} (not reached)"
        for o in old
        if o.ok
        and _table(o) in cut
        and records.identity(o) not in measured_new
        and records.identity(o) not in seen
    ]
    if labels:
        out.append(
            finding(
                "rows-not-measured",
                f"{len(labels)} rows that {names[0]} measured were not measured in {names[1]}: "
                f"{_few(labels)}",
                allowed,
                "new",
                labels,
            )
        )
    gained = [
        (o, r)
        for r in new
        if (o := by_old.get(records.identity(r))) is not None and r.ok and not o.ok
    ]
    if gained:
        labels = [f"{_label(r)} ({names[0]}: {o.status})" for o, r in gained]
        out.append(
            finding(
                "rows-not-measured-before",
                f"{len(gained)} rows of {names[1]} were not measured in {names[0]}: {_few(labels)}",
                allowed,
                "old",
                labels,
            )
        )
    return out


def untested(
    rows: list, threshold: float, gate_unsampled: bool, allowed: set[str]
) -> list[Finding]:
    """Rows the statistics could not test: none at all (refused),
    or slower ones among tested (warned)."""
    if not rows or gate_unsampled:
        return []
    plain = [r for r in rows if not r.tested]
    slow = sorted((r for r in plain if r.ratio > 1 + threshold), key=lambda r: -r.ratio)
    span = (
        (
            f"; they read new/old {min(r.ratio for r in plain):.2f} to "
            f"{max(r.ratio for r in plain):.2f}"
        )
        if plain
        else ""
    )
    if len(plain) == len(rows):
        reasons = sorted({r.why_untested for r in plain})
        return [
            finding(
                "nothing-tested",
                f"no row could be tested ({'; '.join(reasons)}){span}: the gate has "
                f"nothing it can judge; {compare_text.samples_advice(plain)}",
                allowed,
                "",
                [r.label() for r in slow],
            )
        ]
    if slow:
        return [
            finding(
                "untested-slower",
                f"{len(slow)} untested rows read slower by more than {threshold:.0%} (up to "
                f"{slow[0].ratio:.2f}x: {_few([r.label() for r in slow])}); they cannot be "
                f"tested ({'; '.join(sorted({r.why_untested for r in slow}))}), so the gate does "
                "not judge them (--gate-unsampled counts them)",
                allowed,
                "",
                [r.label() for r in slow],
            )
        ]
    return []


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def noisy(
    rows: list, threshold: float, allowed: set[str], gate_unsampled: bool = False
) -> list[Finding]:
    """Too noisy to judge (twosample.too_noisy on the rows' detectable ratios): the two-file
    gate says how much the noisier run's rows vary between their samples, the store's gate how
    much its baseline runs vary between each other."""
    have = [r for r in rows if r.tested and r.detectable is not None]
    if not twosample.too_noisy([r.detectable for r in have], threshold):
        return []
    if all(r.versus == "base" for r in have):
        who, spread = "the baseline's rows", _median([r.noise for r in have])
        where = f"between runs (over {_median([r.k_old for r in have])} baseline runs a row)"
    else:
        old, new = (_median([r.within[i] for r in have if r.within]) for i in (0, 1))
        i, who = (1, "NEW's rows") if new >= old else (0, "OLD's rows")
        spread = max(old, new)
        rounds = all(r.taken and r.taken[i] == compare.ROUNDS for r in have)
        where = "between rounds" if rounds else "between samples"
    limit = twosample.noisy_limit(threshold)
    over = [r for r in have if r.detectable > limit]
    # the test counts the noise: a row slower through it is a regression, and noise cannot
    # make a red gate green; what it hides is a smaller slowdown, which only a pass would miss
    slower = len(compare.regressions(rows, gate_unsampled))
    f = finding(
        "too-noisy",
        f"too noisy to judge: {who} vary by {spread:.1%} {where}; a slowdown below "
        f"{_median([r.detectable for r in have]):.2f}x cannot be seen ({len(over)} of "
        f"{len(have)} tested rows cannot detect {limit:.2f}x, 1 + {twosample.NOISY_FACTOR} "
        "x the threshold)",
        allowed - {"--allow-noisy"} if slower else allowed,
        "",
        [r.label() for r in over],
    )
    if slower:  # said as a warning beside the regression, not refused
        f.effect = WARNING
        f.message = f.message.split(" (accepted:")[0] + (
            f"; {slower} rows are slower beyond that noise: a regression all the same"
        )
    return [f]


def unmatched(counts: tuple[int, int], allowed: set[str]) -> list[Finding]:
    if not any(counts):
        return []
    return [
        finding(
            "unmatched-rows",
            f"{counts[0]} rows of the old run and {counts[1]} of the new one have no "
            "counterpart in the other run: not compared",
            allowed,
            "both",
        )
    ]


def family_options(old_doc: dict, new_doc: dict, allowed: set[str]) -> list[Finding]:
    a, b = ((d.get("config") or {}).get("params") for d in (old_doc, new_doc))
    if not isinstance(a, dict) or not isinstance(b, dict) or a == b:
        return []
    keys = sorted(k for k in {*a, *b} if a.get(k) != b.get(k))
    said = "; ".join(f"{k}: old {a.get(k, '(unset)')}, new {b.get(k, '(unset)')}" for k in keys)
    return [
        finding(
            "family-options-differ",
            f"the family's options differ ({said[:300]}): where one changes "
            "what a row measures, its ratio includes that change",
            allowed,
            "both",
        )
    ]


def refused(found: list[Finding]) -> list[Finding]:
    return [f for f in found if f.effect == REFUSED]


def to_stderr(found: list[Finding]) -> None:
    """With the JSON on stdout, the findings go to stderr."""
    for f in found:
        kind = "error" if f.effect == REFUSED else "warning"
        print(f"commbench: {kind}: [{f.code}] {f.message}", file=sys.stderr)


def gate_line(found: list[Finding]) -> str | None:
    """The text's gate line when the findings decide it (exit 2), else None."""
    bad = refused(found)
    if not bad:
        return None
    if {f.code for f in bad} == {"too-noisy"}:
        return f"# gate: TOO NOISY (exit 2): {bad[0].message}"
    return "# gate: REFUSED (exit 2): the comparison cannot be vouched for: " + "; ".join(
        dict.fromkeys(f.code for f in bad)
    )
