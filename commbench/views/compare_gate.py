"""`commbench compare OLD NEW`: its options, its refusals and its exit status (no MPI).

Exit status: 0 no regression, 1 at least one regression (commbench.views.compare),
2 bad input or runs that cannot be compared (different world size, rank
placement, buffer allocation, huge pages, MPI library; no matching rows).
`--json FILE` (or `-`, stdout) writes the verdict for CI systems.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

from commbench.views import compare, results_file

USAGE = ("commbench compare OLD.json NEW.json [--threshold 10%|0.1] [--alpha 0.05] [--json FILE|-] "
         "[--gate-unsampled] [--allow-different]")

HELP = """Matches the rows of two results files and judges each: new/old of the reported time.
Rows with --samples K in both runs are tested (Mann-Whitney U of a change beyond the
threshold, Benjamini-Hochberg over the rows, bootstrap interval of the ratio of medians).

  --threshold F       smallest change that matters: 10% or 0.1 (default 5%)
  --alpha A           false discovery rate of the slower/faster calls (default 0.05)
  --json FILE|-       the verdict as JSON (- : on stdout, instead of the text)
  --gate-unsampled    rows without samples count as regressions when slower beyond the
                      threshold and the rank spread (default: they are reported only)
  --allow-different   compare runs that differ in world size, rank placement, --alloc,
                      --hugepages or MPI library (default: refused, exit status 2)

Exit status: 0 no regression, 1 regression, 2 bad input or incomparable runs.
docs/statistics.md describes the method."""


@dataclass
class Args:
    old: str
    new: str
    threshold: float = 0.05
    alpha: float = 0.05
    json: str | None = None
    gate_unsampled: bool = False
    allow_different: bool = False


def _threshold(text: str) -> float:
    pct = text.endswith("%")
    try:
        v = float(text[:-1] if pct else text)
    except ValueError:
        v = float("nan")
    if not v >= 0 or v == float("inf"):
        raise ValueError(f"--threshold {text!r} is not a non-negative number (accepted: --threshold 10% or 0.1)")
    if not pct and v >= 1:
        raise ValueError(f"--threshold {text!r}: a plain number is a fraction below 1 (accepted: --threshold "
                         f"{v:g}% for {v:g} percent, or a fraction such as 0.1)")
    return v / 100 if pct else v


def _alpha(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not 0 < v < 1:
        raise ValueError(f"--alpha {text!r} is not a probability between 0 and 1 (accepted: --alpha 0.05)")
    return v


VALUED = {"--threshold": ("threshold", _threshold), "--alpha": ("alpha", _alpha), "--json": ("json", str)}
FLAGS = {"--gate-unsampled": "gate_unsampled", "--allow-different": "allow_different"}


def arguments(argv: list[str]) -> Args:
    """The command's arguments; ValueError naming the problem and the accepted form."""
    paths: list[str] = []
    given: dict = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        name, eq, value = a.partition("=")
        if name in VALUED:
            if not eq:
                if i + 1 >= len(argv):
                    raise ValueError(f"{name} needs a value (accepted: {USAGE})")
                i, value = i + 1, argv[i + 1]
            dest, parse = VALUED[name]
            given[dest] = parse(value)
        elif a in FLAGS:
            given[FLAGS[a]] = True
        elif a.startswith("-") and a != "-":
            raise ValueError(f"unknown option {a!r} for compare (accepted: {USAGE})")
        else:
            paths.append(a)
        i += 1
    if len(paths) != 2:
        raise ValueError(f"compare needs two results files, got {len(paths)} (accepted: {USAGE})")
    return Args(paths[0], paths[1], **given)


def _load(args: Args) -> tuple[list[dict], list[list]]:
    docs = [results_file.load(p) for p in (args.old, args.new)]
    recs = [results_file.measurements(d, p) for d, p in zip(docs, (args.old, args.new))]
    for path, rs in zip((args.old, args.new), recs):
        if compare.duplicates(rs):
            raise ValueError(f"{path}: {compare.duplicates(rs)} rows repeat another row's benchmark, size, process "
                             "count and engine: which to compare is ambiguous (accepted: files with one row per key)")
    return docs, recs


def _emit_json(args: Args, payload: dict) -> str | None:
    """Write the JSON verdict; a message when it cannot be written."""
    text = json.dumps(payload, indent=1, allow_nan=False) + "\n"
    if args.json == "-":
        sys.stdout.write(text)
        return None
    try:
        with open(args.json, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        return f"--json {args.json!r}: cannot write ({e.strerror}) (accepted: --json FILE in a writable directory, or -)"
    return None


def _refuse(args: Args, message: str, rows: list | None = None, notes: list[str] = ()) -> int:
    print(f"commbench: error: {message}", file=sys.stderr)
    if args.json:
        _emit_json(args, compare.to_json(rows or [], old=args.old, new=args.new, threshold=args.threshold,
                                         alpha=args.alpha, gate_unsampled=args.gate_unsampled, status=2,
                                         notes=list(notes), errors=[message]))
    return 2


def run(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(f"usage: {USAGE}\n\n{HELP}")
        return 0
    try:
        args = arguments(argv)
    except ValueError as e:
        print(f"commbench: error: {e}", file=sys.stderr)
        return 2
    try:
        (old_doc, new_doc), (old, new) = _load(args)
    except ValueError as e:
        return _refuse(args, str(e))
    hard = compare.incomparable(old_doc, new_doc)
    if hard and not args.allow_different:
        return _refuse(args, "the runs cannot be compared row by row: " + "; ".join(hard) + " (accepted: runs of "
                       "the same world size, rank placement, --alloc, --hugepages and MPI library; "
                       "--allow-different compares them anyway)", notes=compare.context_notes(old_doc, new_doc))
    notes = compare.context_notes(old_doc, new_doc)
    rows = compare.compare(old, new, args.threshold, args.alpha)
    if not rows:
        if args.json != "-":
            print("\n".join([*notes, f"# {compare.summary(rows)}"]))
        return _refuse(args, f"{args.old} and {args.new} have no matching rows: nothing to compare (accepted: two "
                       "runs with benchmarks, sizes and process counts in common)", notes=notes)
    return _report(args, rows, notes, compare.unmatched(old, new))


def _report(args: Args, rows: list, notes: list[str], unmatched: tuple[int, int]) -> int:
    warns = compare.warnings(rows, args.alpha, args.gate_unsampled)
    if any(unmatched):
        warns.append(f"{unmatched[0]} rows of the old run and {unmatched[1]} of the new one have no counterpart in "
                     "the other run: not compared")
    status = 1 if compare.regressions(rows, args.gate_unsampled) else 0
    if args.json == "-":
        for w in warns:
            print(f"commbench: warning: {w}", file=sys.stderr)
    else:
        print(compare.render(rows, args.old, args.new, args.threshold, args.alpha, notes, warns, args.gate_unsampled))
    if args.json:
        failed = _emit_json(args, compare.to_json(rows, old=args.old, new=args.new, threshold=args.threshold,
                                                  alpha=args.alpha, gate_unsampled=args.gate_unsampled,
                                                  status=status, notes=notes, warns=warns, unmatched_rows=unmatched))
        if failed:
            print(f"commbench: error: {failed}", file=sys.stderr)
            return 2
    return status
