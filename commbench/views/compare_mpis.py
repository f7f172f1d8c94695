"""`commbench compare A B --across mpi`: which of two MPI libraries is faster here, row by row,
with the statistics (no MPI).

The two runs may differ in the MPI library and what goes with it (the MPI standard version,
the library file, the launcher and its settings, the MPI environment variables, mpi4py's
version: compare_runs.WITH_THE_MPI, compare_mpis_text.FACTS) and must agree in everything
else that changes the numbers (world size, hosts, placement, buffers, options, family
options, benchmarks, process counts and sizes). The rows are matched and tested as
`commbench compare` tests them (commbench.views.compare: a difference beyond the threshold
in the median of the log-samples, with the two-file test's default spread between runs,
twosample.DEFAULT_RUN_SPREAD, assumed: two runs under two MPIs differ as wholes as two runs
under one do; Benjamini-Hochberg over the rows, a bootstrap interval of the ratio of
medians); a row's difference is *supported* when that test calls it.

Not a regression gate. Exit status: 0 the comparison was made (two MPI libraries, nothing
else differing, the rows measured, at least one row tested); 2 refused (bad input, one
library in both files, a file that does not record its library, runs that differ beyond the
library, other benchmarks, process counts or sizes, an interrupted run or a failed -check,
no row with samples). Never 1. Each refusal is a named finding (compare_trust.RULES). The
text and JSON: compare_mpis_text; the HTML page: html_mpis.
"""

from __future__ import annotations

import sys
from dataclasses import replace

from commbench import records
from commbench.views import compare, compare_mpis_text, compare_runs, compare_text, compare_trust
from commbench.views.compare_mpis_text import Side, sides

FACTOR = "mpi"  # the one value of --across


# ---------------------------------------------------------------- what may not differ


def _two_mpis(a: Side, b: Side) -> list[compare_trust.Finding]:
    missing = [s for s in (a, b) if s.library is None]
    if missing:
        said = "; ".join(
            f"{s.letter} ({s.path}) records no MPI library (an imported log's header does not "
            "name it)"
            for s in missing
        )
        return [compare_trust.finding("not-two-mpis", said, set())]
    if " ".join(a.library.split()) == " ".join(b.library.split()):
        return [
            compare_trust.finding(
                "not-two-mpis",
                f"both runs used one MPI library ({a.first_line}): there is no second MPI to "
                "compare; the same MPI twice is the regression gate's comparison (commbench "
                "compare A B, without --across)",
                set(),
            )
        ]
    return []


def _beyond(a: Side, b: Side) -> list[compare_trust.Finding]:
    hard = compare_runs.incomparable(a.doc, b.doc, (f"{a.name}:", f"{b.name}:"), across=FACTOR)
    if not hard:
        return []
    return [
        compare_trust.finding(
            "differs-beyond-mpi",
            "the runs differ in more than the MPI library: " + "; ".join(hard),
            set(),
        )
    ]


def _listed(values) -> str:
    vals = sorted(values, key=lambda v: (str(type(v)), v))
    shown = ", ".join(map(str, vals[:8]))
    return shown + (f" and {len(vals) - 8} more" if len(vals) > 8 else "")


def _sets_differ(what: str, a: Side, b: Side, get) -> str | None:
    sa, sb = ({get(r) for r in s.recs} for s in (a, b))
    if sa == sb:
        return None
    parts = [
        f"only in {s.name}: {_listed(only)}" for s, only in ((a, sa - sb), (b, sb - sa)) if only
    ]
    return f"{what} differ: " + "; ".join(parts)


def _table_of(r: records.Measurement) -> tuple:
    ident = records.identity(r)
    return ident[:4] + ident[5:]  # all but the size


def _sizes_differ(a: Side, b: Side) -> str | None:
    """Sizes of the tables both runs have and measured whole (a sweep cut short is
    rows-not-measured's)."""
    cut = {_table_of(r) for s in (a, b) for r in s.recs if not r.ok}
    tables: dict[tuple, list[set]] = {}
    for i, s in enumerate((a, b)):
        for r in s.recs:
            tables.setdefault(_table_of(r), [set(), set()])[i].add(r.bytes)
    said = []
    for key, (sa, sb) in tables.items():
        if key in cut or not sa or not sb or sa == sb:
            continue
        only = [f"only in {s.name}: {_listed(o)}" for s, o in ((a, sa - sb), (b, sb - sa)) if o]
        said.append(f"{key[1]} np={key[2]}{' ' + key[3] if key[3] else ''} ({', '.join(only)})")
    if not said:
        return None
    return "sizes differ: " + "; ".join(said[:4]) + (" …" if len(said) > 4 else "")


def _rows_differ(a: Side, b: Side, allowed: set[str]) -> list[compare_trust.Finding]:
    said = [
        _sets_differ("benchmarks", a, b, lambda r: r.benchmark),
        _sets_differ("process counts", a, b, lambda r: r.np),
    ]
    said = [s for s in said if s] or [_sizes_differ(a, b)]
    if not any(said):
        lone = compare.unmatched(a.recs, b.recs)
        if any(lone):
            said = [
                f"{lone[0]} rows of {a.name} and {lone[1]} of {b.name} have no counterpart in "
                "the other run (another mode, engine or table)"
            ]
    said = [s for s in said if s]
    if not said:
        return []
    f = compare_trust.finding(
        "rows-differ",
        "; ".join(said) + ": measure the same benchmarks, process counts and sizes with both",
        set(),
    )
    cut = [s.letter for s in (a, b) if s.doc.get("complete") is not True]
    if cut and "--allow-incomplete" in allowed:  # the rows an interrupted run did not reach
        f = replace(
            f,
            effect=compare_trust.WARNING,
            message=f.message + f" (run {', '.join(cut)} did not finish; --allow-incomplete "
            "given: the rows both hold are compared)",
        )
    return [f]


def refusals(a: Side, b: Side, allowed: set[str]) -> list[compare_trust.Finding]:
    """What makes the runs two MPIs that cannot be compared row by row (refused before the
    rows are matched): not two libraries, other settings, other rows."""
    return _two_mpis(a, b) + _beyond(a, b) + _rows_differ(a, b, allowed)


def trust(a: Side, b: Side, allowed: set[str]) -> list[compare_trust.Finding]:
    """Each run on its own (did it finish, did its -check pass) and rows one of them measured
    and the other did not, either way (refused; --allow-incomplete: warned)."""
    found = compare_trust.runs(
        {f"{s.letter} ({s.name})": (s.path, s.doc, s.recs) for s in (a, b)}, allowed
    )
    for x, y in ((a, b), (b, a)):
        found += [
            replace(f, side=y.letter)
            for f in compare_trust.statuses(x.recs, y.recs, allowed, (x.name, y.name))
            if f.code == "rows-not-measured"
        ]
    return found


def untested(rows: list[compare.ComparedRow], a: Side, b: Side) -> list[compare_trust.Finding]:
    """No row with samples in both runs: nothing supports a difference either way."""
    if any(r.tested for r in rows):
        return []
    reasons = sorted(
        {r.why_untested.replace("old row", a.name).replace("new row", b.name) for r in rows}
    )
    return [
        compare_trust.Finding(
            "nothing-tested",
            f"no row could be tested ({'; '.join(reasons)}): no difference between {a.name} and "
            f"{b.name} is supported, nor their equality; run both with --samples K (K >= 10)",
            compare_trust.REFUSED,
        )
    ]


# ---------------------------------------------------------------- the command


def run(args, loaded: list[tuple[str, dict, list]]) -> int:
    """The comparison of args (compare_gate.Args, across == "mpi") over the loaded files."""
    a, b = sides(loaded)
    before = refusals(a, b, args.allowed)
    found = before + trust(a, b, args.allowed)
    if compare_trust.refused(before):
        bad = compare_trust.refused(found)
        message = "--across mpi: " + "; ".join(f"[{f.code}] {f.message}" for f in bad)
        print(f"commbench: error: {message}", file=sys.stderr)
        return _page(args, a, b, [], _emit(args, a, b, [], bad, 2, errors=[message]))
    rows = compare.compare(a.recs, b.recs, args.threshold, args.alpha)
    for r in rows:
        r.regression = False  # no gate: a row is faster in one MPI, not a regression
    found += untested(rows, a, b)
    status = 2 if compare_trust.refused(found) else 0
    if args.json != "-":
        print(compare_mpis_text.render(rows, a, b, args, found, status))
    else:
        compare_trust.to_stderr(found)
    return _page(args, a, b, rows, _emit(args, a, b, rows, found, status))


def _page(args, a: Side, b: Side, rows: list, status: int) -> int:
    """--html: the page of a comparison made (status 0); none of a refused one."""
    if not args.html:
        return status
    if status:
        print(
            f"commbench: --html {args.html}: not written: the comparison was refused",
            file=sys.stderr,
        )
        return status
    from commbench.views import html_mpis

    try:
        html_mpis.write(args.html, a, b, rows, args.threshold, args.alpha)
    except ValueError as e:
        print(f"commbench: error: {e}", file=sys.stderr)
        return 2
    print(f"commbench: MPIs compared in {args.html}", file=sys.stderr)
    return 0


def _emit(args, a: Side, b: Side, rows: list, found: list, status: int, errors=()) -> int:
    if not args.json:
        return status
    payload = compare_mpis_text.to_json(rows, a, b, args, found, status, list(errors))
    failed = compare_text.write_json(args.json, payload)
    if failed:
        print(f"commbench: error: {failed}", file=sys.stderr)
        return 2
    return status
