"""`commbench report`: a results file's text again, its CSV, or one HTML page of runs and of
a store's trend (no MPI)."""

from __future__ import annotations

import sys

from commbench.commands.errors import err as _err
from commbench.commands.parsing import Parser

USAGE = (
    "commbench report FILE [--csv OUT|-], or commbench report --html OUT.html FILE [FILE ...], "
    "or commbench report --html OUT.html --trend STORE[:SELECTOR] [FILE ...], "
    "each --html page with --expect RULES.toml: the verdicts of a site's expectations"
)


def arguments(argv: list[str]):
    """paths, csv (OUT, '-' for stdout, None), html (OUT.html or None), trend (STORE[:SELECTOR]
    or None); ValueError naming what is wrong and the accepted forms."""
    p = Parser("commbench report", USAGE)
    p.add_argument("paths", nargs="*")
    p.add_argument("--csv", nargs="?", const="-")
    p.add_argument("--html", metavar="OUT.html")
    p.add_argument("--trend", metavar="STORE[:SELECTOR]")
    p.add_argument("--expect", metavar="RULES.toml")
    a = p.read(argv)
    if a.expect is not None and (a.html is None or not a.paths):
        raise ValueError(f"--expect judges the page's results files: it needs --html ({USAGE})")
    if a.html is None and a.trend is None:
        if len(a.paths) != 1:
            hint = " (did --csv take the results file as its OUT?)" if a.csv and not a.paths else ""
            raise ValueError(
                f"report needs one results file, got {len(a.paths)}{hint} (accepted: {USAGE})"
            )
        return a
    if a.html is None:
        raise ValueError(f"--trend draws on the HTML page: it needs --html OUT.html ({USAGE})")
    if a.csv is not None:
        raise ValueError(f"report --html takes no option '--csv' (accepted: {USAGE})")
    if not a.html.lower().endswith((".html", ".htm")):
        raise ValueError(f"--html {a.html!r}: the page must be an .html file (accepted: {USAGE})")
    if not a.paths and a.trend is None:
        raise ValueError(
            f"report --html needs at least one results file, or --trend STORE (accepted: {USAGE})"
        )
    return a


def main(argv: list[str]) -> int:
    try:
        a = arguments(argv)
    except ValueError as e:
        return _err(str(e))
    if a.html is not None:
        return _page(a.html, a.paths, a.trend, a.expect)
    from commbench.views import csv_export, results_file

    path, out = a.paths[0], a.csv
    try:
        doc, recs = results_file.read(path)
    except ValueError as e:
        return _err(str(e))
    if out is not None:
        try:
            csv_export.write(
                sys.stdout if out == "-" else out, recs, doc["config"].get("mb_unit", 10**6)
            )
        except OSError as e:
            return _err(
                f"--csv {out!r}: cannot write ({e.strerror}) "
                "(accepted: --csv <file in a writable directory>)"
            )
        if out != "-":
            print(f"commbench: {len(recs)} records written to {out}", file=sys.stderr)
        return 0
    from commbench.views.report_text import replay

    try:
        replay(doc, recs, sys.stdout)  # the run's text again, as the run's views printed it
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as e:
        # a file that passes the schema (open where families add their own keys) but lacks or
        # mistypes what its family's text needs: the file's problem, said as such
        what = f"it has no {e.args[0]!r}" if isinstance(e, KeyError) else f"{type(e).__name__}: {e}"
        return _err(
            f"{path}: cannot print the text of this {doc['config'].get('family')} run: {what}, "
            "which the text needs (was the file edited? `commbench schema` prints the format)"
        )
    return 0


def _page(out: str, paths: list[str], where: str | None, rules: str | None) -> int:
    """One self-contained page of runs (views.html_report); a store's trend read here (the
    store is above the views: they get plain data), and the verdicts of --expect's rules."""
    from commbench.views import html_report

    try:
        data, expected = None, None
        if rules is not None:
            from commbench.commands import expect
            from commbench.views import expect_text

            verdicts = expect.judge(rules, expect.load_runs(paths))
            expected = expect_text.section(verdicts, rules)
        if where is not None:
            from commbench.store import location, selector, trend
            from commbench.store.db import Store, StoreError

            try:
                store_text, sel_text = location.split(where)
                sel = selector.parse(sel_text)
                with Store.open(store_text) as store:
                    data = trend.compute(store, sel)
            except (StoreError, ValueError) as e:
                raise ValueError(f"--trend {where}: {e}") from None
        html_report.write(out, paths, data, expected)
    except ValueError as e:
        return _err(str(e))
    said = [f"{len(paths)} results file{'s' if len(paths) != 1 else ''}"] if paths else []
    said += [f"the trend of {len(data['runs'])} stored runs"] if data else []
    print(f"commbench: report of {' and '.join(said)} written to {out}", file=sys.stderr)
    return 0
