"""`commbench report --html OUT FILE [FILE ...]`: one self-contained HTML page of one or more runs.
With `--trend STORE[:SELECTOR]` the page also draws stored rows over time (the files are then
optional): the command line reads the store, this page gets its trend as plain data
(commbench.views.html_trend).

The page needs nothing but itself to be read, offline: the CSS is inline,
the figures are SVG in data: URIs (commbench.views.plot, the figures of
`commbench plot`), and there is no script. Every string that comes from a
results file is escaped (html.escape): a file is data, never markup.

The page is a list of sections (SECTIONS), each a function of the loaded
runs that returns its HTML, or None when it has nothing to show (the
comparison needs two runs; the plots need tables of time against size). A
family's own section (FAMILY_SECTIONS) is added the same way, by name: the
diagnosis family's heatmaps will be one, shown when a run of it is given.
"""

from __future__ import annotations

import importlib
import os
import time
from dataclasses import dataclass

from commbench import outputs, records
from commbench.views import html_sections as sec
from commbench.views import html_trend, results_file
from commbench.views.html_meta import metadata
from commbench.views.html_plots import plots
from commbench.views.html_sections import esc


@dataclass
class ReportedRun:
    """One results file of the report."""

    path: str
    doc: dict
    records: list[records.Measurement]
    label: str  # "run 1: name.json": how the page names it

    @property
    def family(self) -> str:
        return str(self.doc.get("family", {}).get("name", ""))


# (anchor, title, section): the page's order. A section returns its HTML or None.
SECTIONS = (
    ("metadata", "Runs", metadata),
    ("comparison", "Comparison", sec.comparison),
    ("plots", "Time and rate against size", plots),
    ("tables", "Tables", sec.tables),
    ("text", "Text reports", sec.text_reports),
)
# A family's own section, shown when a run of that family is given: family name ->
# (anchor, title, "module:function"), the function taking the runs like those above.
FAMILY_SECTIONS: dict[str, tuple[str, str, str]] = {}


def load(paths: list[str]) -> list[ReportedRun]:
    """The runs of the page, in the order given;
    ValueError for a file that is not a results file."""
    runs = []
    for i, path in enumerate(paths, start=1):
        doc, recs = results_file.read(path)
        runs.append(ReportedRun(path, doc, recs, f"run {i}: {os.path.basename(path)}"))
    return runs


def _sections(runs: list[ReportedRun], sections: tuple = SECTIONS) -> list[tuple[str, str, str]]:
    """(anchor, title, HTML) of every section that has something to show."""
    chosen = list(sections)
    for fam in dict.fromkeys(r.family for r in runs):
        if fam in FAMILY_SECTIONS:
            anchor, title, where = FAMILY_SECTIONS[fam]
            module, func = where.split(":")
            chosen.insert(-1, (anchor, title, getattr(importlib.import_module(module), func)))
    out = []
    for anchor, title, section in chosen:
        body = section(runs)
        if body is not None:
            out.append((anchor, title, body))
    return out


def render(
    runs: list[ReportedRun],
    sections: tuple = SECTIONS,
    title: str = "commbench report",
    command: str = "commbench report --html",
    trend: dict | None = None,
    expected: str | None = None,
) -> str:
    """The whole page: sections (SECTIONS: `commbench report --html`'s), its heading title,
    the command that made it, the verdicts of a site's expectations (expected: their HTML,
    views.expect_text.section) after the runs, and the trend of a store (html_trend: its data)
    after the comparison."""
    from commbench import __version__

    parts = _sections(runs, sections) if runs else []
    if expected is not None:
        at = sum(1 for a, _, _ in parts if a == "metadata")
        parts.insert(at, ("expectations", "Expectations", expected))
    if trend is not None:
        at = sum(1 for a, _, _ in parts if a in ("metadata", "comparison"))
        parts.insert(at, ("trend", "Trend in the results store", html_trend.section(trend)))
    names = ", ".join(
        [os.path.basename(r.path) for r in runs]
        + ([f"trend of {trend['store']}"] if trend is not None else [])
    )
    nav = " ".join(f'<a href="#{a}">{esc(t)}</a>' for a, t, _ in parts)
    body = "\n".join(
        f'<section id="{a}">\n<h2>{esc(t)}</h2>\n{html}\n</section>' for a, t, html in parts
    )
    made = time.strftime("%Y-%m-%d %H:%M:%S %z")
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="generator" content="commbench {esc(__version__)}">\n'
        f"<title>{esc(title)}: {esc(names)}</title>\n<style>\n{sec.CSS}</style>\n</head>\n"
        "<body>\n"
        f"<header>\n<h1>{esc(title)}</h1>\n<p>{esc(names)} &middot; made {esc(made)} by "
        "commbench "
        f"{esc(__version__)} (<code>{esc(command)}</code>)</p>\n<nav>{nav}</nav>\n"
        "</header>\n"
        f"<main>\n{body}\n</main>\n</body>\n</html>\n"
    )


def write(
    out: str, paths: list[str], trend: dict | None = None, expected: str | None = None
) -> None:
    """Load the runs and write the page to out, with the trend of a store when given (the
    data of commbench.store.trend.compute) and the expectations' section; ValueError saying
    what went wrong, before anything is written."""
    if trend is not None:
        html_trend.check(trend)
    write_page(out, render(load(paths), trend=trend, expected=expected))


def write_page(out: str, page: str) -> None:
    """The page to out, whole or not at all; ValueError saying what went wrong."""
    tmp = out + ".tmp"
    try:
        outputs.ensure_parent(out)  # missing directories made, as every output option does
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(page)
        os.replace(tmp, out)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise ValueError(
            f"--html {out!r}: cannot write ({e.strerror}) (accepted: an .html file in a "
            "writable directory)"
        ) from None
