"""The two-file gate of `commbench compare OLD NEW` (commbench.commands.compare reads its
command line): its refusals, its verdict and its exit status (no MPI).

Exit status: 0 no regression, 1 at least one regression (commbench.views.compare),
2 bad input, runs that cannot be compared (different world size, rank placement,
buffer allocation, huge pages, MPI library, options that change the numbers; no
matching rows), or a comparison the gate cannot vouch for (an incomplete run, a
failed -check, rows not measured, no row tested: commbench.views.compare_trust), or one too
noisy to judge (most rows' tests cannot see 1 + 4 x the threshold; --allow-noisy: a warning).
`--json FILE` (or `-`, stdout) writes the verdict for CI systems.

`--across mpi` is another comparison, not a gate: two runs of one configuration under two MPI
libraries, which is faster row by row (commbench.views.compare_mpis; exit 0 or 2).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from commbench.models import twosample
from commbench.views import (
    compare,
    compare_detect,
    compare_runs,
    compare_text,
    compare_trust,
    results_file,
)

# The gate's overrides, as compare_trust.RULES names them: option -> CompareArgs field.
OVERRIDES = {
    "--gate-unsampled": "gate_unsampled",
    "--allow-different": "allow_different",
    "--allow-incomplete": "allow_incomplete",
    "--allow-noisy": "allow_noisy",
}


@dataclass
class CompareArgs:
    old: str
    new: str
    threshold: float = 0.05
    alpha: float = 0.05
    json: str | None = None
    gate_unsampled: bool = False
    allow_different: bool = False
    allow_incomplete: bool = False
    allow_noisy: bool = False  # too noisy to judge: a warning, the rows decide
    run_spread: float = twosample.DEFAULT_RUN_SPREAD  # the two-file test's between-run term
    across: str | None = None
    html: str | None = None
    baseline: str | None = None  # STORE[:SELECTOR]: NEW against stored runs (commbench.store)
    system: str | None = None  # with --baseline: the system NEW belongs to
    history: int = 20  # with --baseline: runs the spread is estimated from
    min_spread: float = 0.03  # with --baseline: the spread's floor (models.betweenruns)
    confirm: bool = False  # with --baseline: the latest stored run must be slower too

    @property
    def allowed(self) -> set[str]:
        """The overrides given, as compare_trust.RULES names them."""
        return {flag for flag, dest in OVERRIDES.items() if getattr(self, dest)}


def load(args: CompareArgs) -> tuple[list[dict], list[list]]:
    (old_doc, old), (new_doc, new) = (results_file.read(p) for p in (args.old, args.new))
    return [old_doc, new_doc], [old, new]


def _payload(args: CompareArgs, rows: list, status: int, names: tuple | None = None, **kw) -> dict:
    old, new = names or (args.old, args.new)
    return compare_text.to_json(
        rows,
        old=old,
        new=new,
        threshold=args.threshold,
        alpha=args.alpha,
        gate_unsampled=args.gate_unsampled,
        status=status,
        run_spread=args.run_spread if kw.get("method") is None else None,
        **kw,
    )


def refuse(
    args: CompareArgs,
    message: str,
    notes: list[str] = (),
    found: list = (),
    method: dict | None = None,
) -> int:
    """Exit status 2 with the message (and the JSON verdict, naming the method asked for)."""
    print(f"commbench: error: {message}", file=sys.stderr)
    if args.json:
        payload = _payload(
            args,
            [],
            2,
            notes=list(notes),
            errors=[message],
            findings=[f.to_json() for f in found],
            method=method,
        )
        compare_text.write_json(args.json, payload)
    return 2


def judge(args: CompareArgs, old_side: tuple, new_side: tuple, extra: list[str] = ()) -> int:
    """The two-file gate on (name, document, records) of OLD and NEW (the files, or the one run
    of a store baseline, commbench.store.gate); extra: lines said before the rows."""
    (old_name, old_doc, old), (new_name, new_doc, new) = old_side, new_side
    notes = [*extra, *compare_runs.context_notes(old_doc, new_doc)]
    hard = compare_runs.incomparable(old_doc, new_doc)
    if hard and not args.allow_different:
        found = [compare_trust.finding("options-differ", "; ".join(hard), args.allowed)]
        return refuse(
            args,
            "the runs cannot be compared row by row: " + "; ".join(hard) + " (accepted: runs that "
            "agree in what changes the numbers; --allow-different compares them anyway)",
            notes,
            found,
        )
    rows = compare.compare(old, new, args.threshold, args.alpha, run_spread=args.run_spread)
    if not rows:
        if args.json != "-":
            print("\n".join([*notes, f"# {compare.summary(rows)}"]))
        return refuse(
            args,
            f"{old_name} and {new_name} have no matching rows: nothing to compare (accepted: two "
            "runs with benchmarks, sizes and process counts in common)",
            notes,
        )
    found = findings(args, (old_name, new_name), (old_doc, new_doc), (old, new), rows, hard)
    notes += compare_detect.sample_notes(rows)
    return report(
        args, rows, notes, found, compare.unmatched(old, new), (old_name, new_name),
        test_line=compare_text.test_line(args.threshold, args.alpha, args.run_spread),
    )  # fmt: skip


def findings(
    args: CompareArgs,
    names: tuple[str, str],
    docs: tuple[dict, dict],
    recs: tuple[list, list],
    rows: list,
    hard: list[str],
) -> list:
    """Everything the gate must say before (or instead of) a verdict: compare_trust."""
    allowed = args.allowed
    found = compare_trust.runs(
        {"old": (names[0], docs[0], recs[0]), "new": (names[1], docs[1], recs[1])}, allowed
    )
    found += compare_trust.statuses(*recs, allowed)
    if hard:
        found.append(compare_trust.finding("options-differ", "; ".join(hard), allowed))
    found += compare_trust.family_options(*docs, allowed)
    found += compare_trust.untested(rows, args.threshold, args.gate_unsampled, allowed)
    found += compare_trust.noisy(rows, args.threshold, allowed, args.gate_unsampled)
    return found + compare_trust.unmatched(compare.unmatched(*recs), allowed)


def report(
    args: CompareArgs,
    rows: list,
    notes: list[str],
    found: list,
    unmatched: tuple[int, int],
    names: tuple[str, str],
    **how,
) -> int:
    """Says the verdict (text or JSON) and returns the exit status; how: another test's
    (compare_text.render's test_line, columns; to_json's method, baseline; its warns)."""
    warns = (
        how["warns"]
        if "warns" in how
        else compare_text.warnings(rows, args.alpha, args.gate_unsampled)
    )
    refused = compare_trust.refused(found)
    status = 2 if refused else 1 if compare.regressions(rows, args.gate_unsampled) else 0
    if args.json == "-":
        compare_trust.to_stderr(found)  # with the JSON on stdout; the warnings too
        for w in warns:
            print(f"commbench: warning: {w}", file=sys.stderr)
    else:
        print(
            compare_text.render(
                rows,
                names[0],
                names[1],
                args.threshold,
                args.alpha,
                [*notes, *(f.line for f in found)],
                warns,
                args.gate_unsampled,
                gate=compare_trust.gate_line(found),
                test_line=how.get("test_line"),
                columns=how.get("columns"),
            )
        )
    if args.json:
        payload = _payload(
            args,
            rows,
            status,
            notes=notes,
            warns=warns,
            unmatched_rows=unmatched,
            findings=[f.to_json() for f in found],
            errors=[f.message for f in refused],
            method=how.get("method"),
            baseline=how.get("baseline"),
            names=names,
        )
        failed = compare_text.write_json(args.json, payload)
        if failed:
            print(f"commbench: error: {failed}", file=sys.stderr)
            return 2
    return status
