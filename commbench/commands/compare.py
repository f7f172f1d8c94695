"""`commbench compare`: OLD NEW, the two-file gate (commbench.views.compare_gate); NEW
--baseline STORE[:SELECTOR], NEW against stored runs (commbench.store.gate); A B --across mpi,
which of two MPI libraries is faster (commbench.views.compare_mpis). Exit 0 (no regression),
1 (a regression), 2 (bad input, incomparable runs, a comparison the gate cannot vouch for)."""

from __future__ import annotations

import argparse
import os

from commbench.commands.errors import err
from commbench.commands.parsing import Parser, checked
from commbench.store import gate, location, selector
from commbench.views import compare_gate, compare_mpis, compare_text, results_file
from commbench.views.compare_gate import OVERRIDES, CompareArgs

USAGE = (
    "commbench compare OLD.json NEW.json [--threshold 10%|0.1] [--alpha 0.05] [--run-spread 2%] "
    "[--json FILE|-] [--gate-unsampled] [--allow-different] [--allow-incomplete] "
    "[--allow-noisy]\n"
    "       commbench compare NEW.json --baseline STORE[:SELECTOR] [--system NAME] [--history 20] "
    "[--min-spread 5%] [--confirm] [--threshold 10%|0.1] [--alpha 0.05] [--json FILE|-] "
    "[--allow-different] [--allow-incomplete] [--allow-noisy]\n"
    "       commbench compare A.json B.json --across mpi [--html OUT.html] [--threshold 10%|0.1] "
    "[--alpha 0.05] [--json FILE|-] [--allow-incomplete]"
)

HELP = """Matches the rows of two results files and judges each: new/old of the reported time.
Rows with --samples K in both runs are tested: a change beyond the threshold in the median
of the log-samples, against the samples' spread (their autocorrelation counted) and a spread
between runs assumed (--run-spread), Benjamini-Hochberg over the rows, a bootstrap interval
of the ratio of medians, and per row the smallest slowdown the test could detect.

  --threshold F       smallest change that matters: 10% or 0.1 (default 5%)
  --alpha A           false discovery rate of the slower/faster calls (default 0.05)
  --run-spread F      two files: the spread of a row's median between back-to-back runs on a
                      quiet machine, which a pair of runs cannot show, as a fraction (default
                      2%); runs days apart differ more: raise it
  --allow-noisy       judge the rows even where most of them could not detect a slowdown of
                      1 + 4 x the threshold (default: "too noisy to judge", exit status 2)
  --json FILE|-       the verdict as JSON (- : on stdout, instead of the text)
  --gate-unsampled    rows without samples count as regressions when slower beyond the
                      threshold and the rank spread (default: they are not judged, and a
                      comparison without any tested row is refused, exit status 2)
  --allow-different   compare runs that differ in what changes the numbers: world size,
                      rank placement, --alloc, --hugepages, MPI library, thread level,
                      methodology, --per-iteration, --sync-start, -off_cache, -multi,
                      -map, engine, MPI environment (default: refused, exit status 2)
  --allow-incomplete  compare the rows an interrupted run (or a cut log) holds, and rows
                      not measured in NEW (default: refused, exit status 2)
  --across mpi        not a gate: which of two MPI libraries is faster, row by row. A and B
                      may differ in the MPI library and what goes with it (MPI standard
                      version, library file, launcher and its settings, MPI environment
                      variables) and must agree in all
                      else that changes the numbers (world size, hosts, placement, --alloc,
                      options, family options, benchmarks, process counts, sizes); the
                      columns are named by the MPIs, each row says which is faster, by how
                      much, and whether the test supports it; a summary ends it
  --baseline STORE[:SELECTOR]  NEW against runs kept in a results store (commbench store):
                      by default the 5 latest complete runs before NEW of its system and
                      family that agree with it in what changes the numbers (SELECTOR, e.g.
                      last=10,tag=nightly or since=14d, narrows them). With 2 or more the
                      test uses the variation between those runs (a row is slower when NEW
                      lies above their prediction band by more than the threshold); with one
                      it is the two-file test on the samples, said so
  --system NAME       with --baseline: NEW's system in the store (default: its sorted hosts)
  --history N         with --baseline: the spread between runs is estimated from the N latest
                      comparable runs, the baseline's among them (default 20)
  --min-spread F      with --baseline: the spread's floor, as a standard deviation of the
                      log-values (default 3%: back-to-back runs differ by 2-3%)
  --confirm           with --baseline: a row is a regression only when the latest stored run
                      lay above the band too (both judged against the runs before it): a
                      regression is called on its second run, a one-run shift never
  --html OUT.html     with --across mpi: also a self-contained page of the comparison (the two
                      libraries, the rows, a figure of B/A per table, each run's metadata,
                      plots and tables)

The gate never passes what it cannot vouch for: an incomplete run, a failed -check,
rows OLD measured and NEW did not, no row with samples, rows too noisy to see the
threshold. Each is a named finding (refused: exit 2; or a warning) in the text and the JSON.

Exit status: 0 no regression, 1 regression, 2 bad input, incomparable runs, or a
comparison the gate cannot vouch for. With --across mpi: 0 the MPIs were compared
(whichever is faster), 2 refused: bad input, one library in both files, runs that differ
beyond the library, other rows, an interrupted run or failed -check, no row with samples;
never 1. docs/statistics.md describes the method."""


def _threshold(text: str) -> float:
    pct = text.endswith("%")
    try:
        v = float(text[:-1] if pct else text)
    except ValueError:
        v = float("nan")
    if not v >= 0 or v == float("inf"):
        raise ValueError(
            f"--threshold {text!r} is not a non-negative number (accepted: --threshold 10% or 0.1)"
        )
    if not pct and v >= 1:
        raise ValueError(
            f"--threshold {text!r}: a plain number is a fraction below 1 (accepted: --threshold "
            f"{v:g}% for {v:g} percent, or a fraction such as 0.1)"
        )
    return v / 100 if pct else v


def _alpha(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not 0 < v < 1:
        raise ValueError(
            f"--alpha {text!r} is not a probability between 0 and 1 (accepted: --alpha 0.05)"
        )
    return v


def _across(text: str) -> str:
    if text != compare_mpis.FACTOR:
        raise ValueError(
            f"--across {text!r}: the runs may differ in the MPI library only (accepted: "
            "--across mpi)"
        )
    return text


def _html(text: str) -> str:
    if not text.lower().endswith((".html", ".htm")):
        raise ValueError(
            f"--html {text!r}: the page must be an .html file (accepted: --html OUT.html)"
        )
    return text


VALUED = {
    "--threshold": ("threshold", _threshold),
    "--alpha": ("alpha", _alpha),
    "--json": ("json", str),
    "--across": ("across", _across),
    "--html": ("html", _html),
    "--baseline": ("baseline", str),
    "--system": ("system", str),
    "--history": ("history", lambda t: _count("--history", t, 2)),
    "--min-spread": ("min_spread", lambda t: _fraction("--min-spread", t)),
    "--run-spread": ("run_spread", lambda t: _fraction("--run-spread", t)),
}
BASELINE_ONLY = ("system", "history", "min_spread", "confirm")


def _count(flag: str, text: str, least: int) -> int:
    if not text.isdigit() or int(text) < least:
        raise ValueError(
            f"{flag} {text!r} is not a count of at least {least} (accepted: {flag} 20)"
        )
    return int(text)


def _fraction(flag: str, text: str) -> float:
    try:
        return _threshold(text)
    except ValueError:
        raise ValueError(
            f"{flag} {text!r} is not a non-negative fraction (accepted: {flag} 5% or 0.05)"
        ) from None


FLAGS = {"--confirm": "confirm", **OVERRIDES}


def parser() -> Parser:
    p = Parser("commbench compare", USAGE)
    p.add_argument("paths", nargs="*")
    for flag, (dest, check) in VALUED.items():
        p.add_argument(flag, dest=dest, type=checked(check), default=argparse.SUPPRESS)
    for flag, dest in FLAGS.items():
        p.add_argument(flag, dest=dest, action="store_true", default=argparse.SUPPRESS)
    return p


def arguments(argv: list[str]) -> CompareArgs:
    """The command's arguments; ValueError naming the problem and the accepted form."""
    given = vars(parser().read(argv))
    paths = given.pop("paths")
    _exclusive(given)
    if given.get("baseline") is not None:
        if len(paths) != 1:
            raise ValueError(
                f"compare NEW --baseline STORE[:SELECTOR] takes one results file, got {len(paths)} "
                f"(accepted: {USAGE})"
            )
        if "run_spread" in given:
            raise ValueError(
                "--run-spread is the two-file test's assumption: the store's gate measures the "
                "spread between its runs (accepted: --history N, --min-spread F with --baseline)"
            )
        return CompareArgs(given["baseline"] or "(default store)", paths[0], **given)
    for dest in BASELINE_ONLY:
        if dest in given:
            flag = "--" + dest.replace("_", "-")
            raise ValueError(
                f"{flag} is an option of the store's gate: it goes with --baseline ({USAGE})"
            )
    if len(paths) != 2:
        raise ValueError(f"compare needs two results files, got {len(paths)} (accepted: {USAGE})")
    return CompareArgs(paths[0], paths[1], **given)


def _exclusive(given: dict) -> None:
    """Options of the gate that --across mpi has no use for, and --html without it."""
    if given.get("baseline") is not None and given.get("across"):
        raise ValueError(
            "--baseline does not go with --across mpi: a store's runs are a baseline of one MPI "
            "(accepted: commbench compare NEW --baseline STORE[:SELECTOR], or commbench compare A "
            "B --across mpi)"
        )
    if not given.get("across"):
        if given.get("html"):
            raise ValueError(
                "--html is the page of --across mpi (accepted: commbench compare A B --across "
                "mpi --html OUT.html; any runs side by side: commbench report --html OUT.html "
                "A B)"
            )
        return
    for dest, why in (
        ("gate_unsampled", "there is no gate to count untested rows in"),
        ("allow_different", "--across mpi lets the MPI library differ and nothing else"),
        ("allow_noisy", "there is no gate to refuse"),
        ("run_spread", "it uses the two-file test's default spread between runs"),
    ):
        if dest in given:
            flag = "--" + dest.replace("_", "-")
            raise ValueError(
                f"{flag} does not go with --across mpi: {why} (accepted: --across mpi with "
                "--threshold, --alpha, --json, --html, --allow-incomplete)"
            )


def bad_command(argv: list[str], message: str) -> int:
    """Exit status 2 for a command line the gate cannot read (an unknown option, a bad
    --threshold or --history, a missing argument), with the JSON verdict (error) wherever --json
    names a destination, as docs/statistics.md promises: a pipeline that reads the file finds
    why instead of no file. Once the arguments are read, refuse() says it."""
    err(message)
    target = _json_target(argv)
    if target:
        payload = compare_text.to_json(
            [], old=None, new=None, threshold=None, alpha=None, gate_unsampled=False, status=2,
            errors=[message],
        )  # fmt: skip
        if failed := compare_text.write_json(target, payload):
            err(failed)
    return 2


def _json_target(argv: list[str]) -> str | None:
    """Where --json writes when the rest of the command line could not be read."""
    for i, a in enumerate(argv):
        if a == "--json" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--json="):
            return a.split("=", 1)[1] or None
    return None


def two_files(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(f"usage: {USAGE}\n\n{HELP}")
        return 0
    try:
        args = arguments(argv)
    except ValueError as e:
        return bad_command(argv, str(e))
    if os.environ.get("COMMBENCH_FAULT_READER"):
        # tests: a bug in a reader (commbench.commands._unexpected)
        raise TypeError("injected fault (COMMBENCH_FAULT_READER)")
    try:
        (old_doc, new_doc), (old, new) = compare_gate.load(args)
    except ValueError as e:
        return compare_gate.refuse(args, str(e))
    if args.across:
        return compare_mpis.run(args, [(args.old, old_doc, old), (args.new, new_doc, new)])
    return compare_gate.judge(args, (args.old, old_doc, old), (args.new, new_doc, new))


def baseline(argv: list[str]) -> int:
    """NEW against the runs of a results store (commbench.store.gate)."""
    args = None
    try:
        args = arguments(argv)
        new_doc, new = results_file.read(args.new)
        store_text, sel_text = location.split(args.baseline)
        sel = selector.parse(sel_text)
    except ValueError as e:
        if args is None:  # the command line itself
            return bad_command(argv, str(e))
        return compare_gate.refuse(args, str(e), method=gate.METHOD)
    return gate.against(args, new_doc, new, store_text, sel)


def main(argv: list[str]) -> int:
    helping = any(a in ("-h", "--help") for a in argv)
    if not helping and any(a == "--baseline" or a.startswith("--baseline=") for a in argv):
        return baseline(argv)  # NEW against the runs of a results store
    return two_files(argv)
