"""`commbench expect RULES.toml RESULTS...`: every row the rules select against what the site
expects of it (commbench.models.expectations); `--write OUT.toml RESULTS...` proposes a file
from good runs. Exit 0 (every row as expected), 1 (a row fails its bound), 2 (bad input, or a
rule that found no data)."""

from __future__ import annotations

import json
import sys

from commbench import records
from commbench.commands.errors import err
from commbench.commands.parsing import Parser, fraction
from commbench.models import expectations as ex
from commbench.views import expect_text, results_file

USAGE = (
    "commbench expect RULES.toml RESULTS.json [RESULTS.json ...] [--stored SELECTOR [--store "
    "PATH|URL]] [--json OUT|-] [--junit OUT.xml] [--allow-no-data]\n"
    "       commbench expect --write OUT.toml RESULTS.json [RESULTS.json ...] [--margin 20%]"
)

HELP = """Applies a site's expectations (a TOML file of rules: benchmark, sizes, process counts,
hosts, and a bound on t, bandwidth or rate; docs/expect.md) to results files: one verdict per
selected row, pass, fail or no data.

  --stored SELECTOR   also the runs of the results store the selector matches (e.g.
                      last=1,system=hb120 or tag=nightly,since=1d; commbench store -h)
  --store PATH|URL    with --stored: the store (default $COMMBENCH_STORE, else the user's)
  --json OUT|-        the verdicts as JSON (- : on stdout, instead of the text)
  --junit OUT.xml     the verdicts as JUnit XML, a test case each (Jenkins, GitLab)
  --allow-no-data     a rule that selects no measured row does not make the exit status 2
  --write OUT.toml    propose an expectations file from good runs instead, for a person to
                      edit: a rule a row, its time up to 64 KiB, its bandwidth above
  --margin F          with --write: the room each bound leaves (default 20%)

Exit status: 0 every selected row as expected, 1 a row fails its bound, 2 bad input (a rule
the message names by file and line) or a rule that found no data."""


def arguments(argv: list[str]):
    p = Parser("commbench expect", USAGE)
    p.add_argument("paths", nargs="*")
    p.add_argument("--stored", metavar="SELECTOR")
    p.add_argument("--store", metavar="PATH|URL")
    p.add_argument("--json", metavar="OUT|-")
    p.add_argument("--junit", metavar="OUT.xml")
    p.add_argument("--allow-no-data", action="store_true")
    p.add_argument("--write", metavar="OUT.toml")
    p.add_argument("--margin", type=fraction("--margin", "20% or 0.2"), default=0.2)
    a = p.read(argv)
    if a.write is not None:
        if not a.paths or a.json or a.junit or a.allow_no_data or a.stored or a.store:
            raise ValueError(f"--write takes results files and --margin only (accepted: {USAGE})")
        return a
    if a.store is not None and a.stored is None:
        raise ValueError(f"--store names where --stored SELECTOR reads runs ({USAGE})")
    if len(a.paths) < 2 and a.stored is None:
        raise ValueError(f"expect needs a rules file and at least one results file ({USAGE})")
    return a


def load_runs(paths: list[str], stored: str | None = None, store: str | None = None) -> list:
    """(where, document, records) of each results file, then of each stored run selected."""
    found = [(p, *results_file.read(p)) for p in paths]
    if stored is None:
        return found
    from commbench.store import runs, selector
    from commbench.store.db import Store, StoreError

    sel = selector.parse(stored)
    try:
        with Store.open(store) as db:
            ids = [r["id"] for r in runs.find(db, sel)]
            if not ids:
                raise ValueError(f"store {db.loc.shown()}: no run matches {stored}")
            docs = [(f"store:id={i}", runs.document(db, i)) for i in ids]
    except StoreError as e:
        raise ValueError(str(e)) from None
    return found + [(w, d, results_file.measurements(d, w)) for w, d in docs]


def rules(path: str, runs: list[tuple[str, dict, list]] = ()) -> list[ex.Rule]:
    """The rules of an expectations file; ValueError naming file, line and rule. A benchmark
    is known when a family has it or a run given holds it (an imported log's names)."""
    from commbench import suites

    known = {b.name.lower() for f in suites.families() for b in f.benchmarks}
    known |= {r.benchmark.lower() for _, _, recs in runs for r in recs}
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: cannot read the expectations ({e})") from None
    return ex.parse(text, path, known)


def judge(rules_path: str, runs: list[tuple[str, dict, list]]) -> list[ex.Verdict]:
    """The verdicts of the rules in rules_path on runs; ValueError on bad input."""
    found = rules(rules_path, runs)
    hosts = [records.run_hosts(doc) for _, doc, _ in runs]
    ex.check_hosts(found, hosts)
    return [v for (path, _, recs), hs in zip(runs, hosts) for v in ex.judge(found, path, hs, recs)]


def write_out(target: str, content: str | bytes) -> None:
    """content to target, '-' for stdout; ValueError saying why it cannot be written."""
    if target == "-":
        sys.stdout.write(content if isinstance(content, str) else content.decode())
        return
    try:
        with open(target, "wb" if isinstance(content, bytes) else "w") as f:
            f.write(content)
    except OSError as e:
        raise ValueError(f"cannot write {target!r} ({e.strerror})") from None


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(f"usage: {USAGE}\n\n{HELP}")
        return 0
    try:
        a = arguments(argv)
        if a.write is not None:
            runs = load_runs(a.paths)
            write_out(a.write, expect_text.propose(runs, a.margin))
            print(f"commbench: proposed expectations written to {a.write}", file=sys.stderr)
            return 0
        verdicts = judge(a.paths[0], load_runs(a.paths[1:], a.stored, a.store))
        status = ex.exit_status(verdicts, a.allow_no_data)
        if a.junit:
            write_out(a.junit, expect_text.junit(verdicts, a.paths[0]))
        if a.json:
            payload = expect_text.as_json(verdicts, a.paths[0], status)
            write_out(a.json, json.dumps(payload, indent=1) + "\n")
    except ValueError as e:
        return err(str(e))
    if a.json != "-":
        print("\n".join(expect_text.text(verdicts, a.paths[0])))
    return status
