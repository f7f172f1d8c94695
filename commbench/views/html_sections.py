"""The sections of the HTML report (commbench.views.html_report): the comparison
verdicts, the tables and the text reports (the runs' metadata: html_meta; the
plots: html_plots), and what every section builds with: the CSS, esc(),
table() and the number cells.

Each section takes the runs (html_report.ReportedRun: path, doc, records, label) and
returns its HTML, or None when it has nothing to show. Every string that
comes from a results file goes through esc(); numbers are formatted here.

The page at the edges (issue 31 item 10): a cell of a number never wraps and
never shows NaN or inf bare (number(), number_cell(): a dash or a word with a
title saying why), a number too long for a column is shown in exponent form,
and every text -- a name, a path, a caption -- may break anywhere, so no name
widens a table beyond the page.
"""

from __future__ import annotations

import html
import io
import math
import re

from commbench import records
from commbench.models import limits
from commbench.views import compare, compare_runs, imb_text
from commbench.views.report_text import view_key

CSS = """\
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2430;
       background: #f6f7f9; margin: 0; overflow-wrap: anywhere; }
header { background: #1f3a5f; color: #fff; padding: 14px 28px 10px; }
header h1 { margin: 0 0 2px; font-size: 22px; }
header p { margin: 0 0 8px; color: #d6e2f0; }
header code { color: #fff; }
nav a { color: #fff; margin-right: 16px; text-decoration: none; border-bottom: 1px solid #8fb0d6; }
main { padding: 8px 28px 40px; }
section { background: #fff; border: 1px solid #dde2e8; border-radius: 6px; padding: 4px 18px 14px;
          margin: 16px 0; }
h2 { font-size: 18px; border-bottom: 1px solid #e3e7ec; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
table { border-collapse: collapse; margin: 6px 0 12px; font-variant-numeric: tabular-nums; max-width: 100%; }
th, td { border: 1px solid #d5dbe2; padding: 3px 9px; text-align: right; vertical-align: top;
         white-space: nowrap; overflow-wrap: normal; }
th { background: #eef2f6; font-weight: 600; }
td.text, th.text, caption { text-align: left; white-space: normal; overflow-wrap: anywhere; }
td.text { min-width: 6em; }
tbody tr:nth-child(even) td { background: #fafbfc; }
table.meta { table-layout: fixed; width: 100%; }
table.meta col.label { width: 10em; }
table.meta col.run { width: 16em; }
table.meta td, table.meta th { text-align: left; white-space: normal; overflow-wrap: anywhere; }
caption { caption-side: top; font-weight: 600; padding: 4px 0; }
tr.status td { background: #fff6e0 !important; color: #7a5200; }
.faster { color: #0a7a2f; font-weight: 600; }
.slower { color: #b3261e; font-weight: 600; }
.same { color: #5b6572; }
.verdict { font-weight: 600; }
.na, .nf { color: #5b6572; font-style: italic; text-decoration: underline dotted #9aa4b1; cursor: help; }
.ci { color: #5b6572; font-size: 12px; }
p.note { color: #7a5200; margin: 4px 0; }
p.unrecorded { color: #5b6572; margin: 4px 0; }
ul.fits { color: #5b6572; font-size: 13px; margin: 0 0 12px; padding-left: 20px; }
figure { margin: 8px 0 4px; }
figure img { width: 100%; max-width: 1400px; height: auto; border: 1px solid #e3e7ec; }
figcaption { color: #5b6572; font-size: 13px; }
pre { background: #f3f5f8; border: 1px solid #e3e7ec; padding: 8px; overflow-x: auto; font-size: 12px;
      overflow-wrap: normal; }
details summary { cursor: pointer; font-weight: 600; margin: 6px 0; }
"""  # noqa: E501


def esc(v) -> str:
    """Text for the page: every character of a results file's strings shown,
    never read as markup."""
    return html.escape("" if v is None else str(v), quote=True)


def table(
    head: list[str], rows: list, caption: str = "", cls: str = "", text: tuple[int, ...] = ()
) -> str:
    """A table of already-escaped cells; the columns in text (names, not numbers) left-aligned
    and free to wrap, every other cell on one line. A row given as a string is put in as it is."""

    def tr(cells: list[str], tag: str) -> str:
        return (
            "<tr>"
            + "".join(
                f"<{tag}{' class=text' if i in text else ''}>{c}</{tag}>"
                for i, c in enumerate(cells)
            )
            + "</tr>"
        )

    cap = f"<caption>{caption}</caption>" if caption else ""
    body = "\n".join(r if isinstance(r, str) else tr(r, "td") for r in rows)
    return (
        f"<table{f' class={cls}' if cls else ''}>{cap}<thead>{tr(head, 'th')}</thead>\n"
        f"<tbody>\n{body}\n</tbody></table>"
    )


# ---------------------------------------------------------------- numbers

OVER = "overflow"  # the word for a number beyond the range of floating point
WIDE = 15  # characters: a number printed longer (1e300 in "%.2f") is shown in exponent form


def nonfinite(v: float, why: str, word: str | None = None) -> str:
    """A value that is no finite number, never as Python prints it ("nan", "inf"): NaN as
    a dash, +-inf as "unbounded" or word ("overflow": a number beyond the range of
    floating point), with a title that says what it means here."""
    if math.isnan(v):
        return f'<span class="nf" title="not a number: {esc(why)}">&ndash;</span>'
    shown = word or ("unbounded" if v > 0 else "&minus;unbounded")
    return (
        f'<span class="nf" title="{"" if v > 0 else "minus "}infinity: {esc(why)}">{shown}</span>'
    )


def number(v, fmt: str, why: str, word: str | None = None) -> str:
    """A number for a cell in format fmt (".2f"); not finite: nonfinite(v, why, word)."""
    if v is None:
        return f'<span class="na" title="{esc(why)}">&ndash;</span>'
    v = float(v)
    if not math.isfinite(v):
        return nonfinite(v, why, word)
    s = format(v, fmt)
    return esc(s if len(s) <= WIDE else f"{v:.6g}")


def number_cell(text: str, why: str, word: str | None = None) -> str:
    """A number already printed (as the IMB text prints it) for a cell: as number() shows it."""
    try:
        v = float(text)
    except ValueError:
        return esc(text)
    if not math.isfinite(v):
        return nonfinite(v, why, word)
    return esc(text if len(text) <= WIDE else f"{v:.6g}")


_NONFINITE = re.compile(r"(?<![\w.])([-+]?)(nan|inf|infinity)(?![\w.])", re.I)


def mark_nonfinite(escaped: str, why: str) -> str:
    """Escaped text of commbench's own (no string of a file in it) with each "nan" / "inf"
    that Python printed into it shown as nonfinite() shows it."""

    def one(m: re.Match) -> str:
        v = (
            float("nan")
            if m.group(2).lower() == "nan"
            else (-math.inf if m.group(1) == "-" else math.inf)
        )
        return nonfinite(v, why)

    return _NONFINITE.sub(one, escaped)


# ---------------------------------------------------------------- comparison

THRESHOLD = 0.05  # as `commbench compare`'s default --threshold


_TIME = "a time of the file too large for a number (written as one beyond 1.8e308?)"
_RATIO = "new/old of two times so far apart that their ratio is beyond the range of numbers"
_SPREAD = "the rank spread (t_max - t_min) / t_max of a row whose times are not finite"
_MEAN = (
    "the geometric mean of ratios of which one is beyond the range of numbers (or 0, "
    "or both: not a number)"
)


def compared_cells(r: compare.ComparedRow) -> list[str]:
    """A compared row's benchmark, NP, mode, size, two times and their ratio, as cells."""
    name, np_, mode, x, groups = r.key
    return [
        esc(name if groups <= 1 else f"Multi-{name}"),
        esc(np_),
        esc(mode or "-"),
        "" if x is None else esc(x),
        number(r.old, ".2f", _TIME, OVER),
        number(r.new, ".2f", _TIME, OVER),
        number(r.ratio, ".3f", _RATIO, OVER),
    ]


def _compare_rows(rows: list[compare.ComparedRow]) -> list[list[str]]:
    return [
        [
            *compared_cells(r),
            number(r.noise * 100, ".1f", _SPREAD) + "%",
            f'<span class="{esc(r.verdict)}">{esc(r.verdict)}</span>',
        ]
        for r in rows
    ]


def geometric_mean(ratios: list[float]) -> float:
    """compare.geometric_mean for any ratios: 0 with a ratio 0, inf with an infinite one,
    NaN with both (compare's raises at a ratio 0 and overflows at a huge mean)."""
    logs = [math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan) for x in ratios]
    m = sum(logs) / len(logs) if logs else math.nan
    return math.inf if m > 709.78 else math.exp(m)


def summary(rows: list[compare.ComparedRow]) -> str:
    """compare.summary's sentence, escaped, its mean shown as number() shows it."""
    if not rows:
        return esc(compare.summary(rows))
    counts = {v: sum(1 for r in rows if r.verdict == v) for v in ("faster", "slower", "same")}
    tested = sum(1 for r in rows if r.tested)
    gm = number(geometric_mean([r.ratio for r in rows]), ".3f", _MEAN, OVER)
    return (
        f"{len(rows)} matched rows ({tested} tested); geometric mean new/old = {gm}; "
        f"{counts['faster']} faster, {counts['slower']} slower, {counts['same']} within noise"
    )


def _outcome(base, run) -> tuple[list[compare.ComparedRow] | None, str]:
    """The compared rows of run against base, or None and why they are not compared (a file
    with two rows of one key never gets here: results_file.read refuses it)."""
    try:
        return compare.compare(base.records, run.records, THRESHOLD), ""
    except (
        ValueError,
        OverflowError,
        ZeroDivisionError,
    ) as e:  # a ratio beyond the range of numbers
        return None, (
            f"not compared: the rows' times are too far apart for their ratio to be a number "
            f"({esc(e)})"
        )


_HEAD = [
    "benchmark",
    "np",
    "mode",
    "bytes",
    "old [usec]",
    "new [usec]",
    "new/old",
    "spread",
    "verdict",
]


def _notes(base, run) -> list[str]:
    """What differs between the two runs beyond the rows (compare_runs.context_notes),
    without its '# note: '."""
    return [n.removeprefix("# note: ") for n in compare_runs.context_notes(base.doc, run.doc)]


def _one_comparison(base, run, rows: list[compare.ComparedRow] | None, why: str) -> str:
    out = [f"<h3>{esc(run.label)} against {esc(base.label)}</h3>"]
    out += [f'<p class="note">{esc(n)}</p>' for n in _notes(base, run)]
    if rows is None:
        return "\n".join([*out, f'<p class="note">{why}</p>'])
    if not rows:
        return "\n".join([*out, f'<p class="verdict">{summary(rows)}</p>'])
    out.append(
        f'<details><summary class="verdict">{summary(rows)} (every row)</summary>'
        f"{table(_HEAD, _compare_rows(rows), text=(0, 2))}</details>"
    )
    return "\n".join(out)


def _folded(base, run, rows: list[compare.ComparedRow] | None, why: str) -> str:
    """One run's comparison in one line that opens to its notes and rows (under the overview)."""
    notes = "".join(f'<p class="note">{esc(n)}</p>' for n in _notes(base, run))
    body = f"{table(_HEAD, _compare_rows(rows), text=(0, 2))}" if rows else ""
    return (
        f"<details><summary>{esc(run.label)}: {why if rows is None else summary(rows)}</summary>"
        f"{notes}{body}</details>"
    )


def _overview(runs: list, outcomes: list) -> str:
    """One row per later run: its verdicts in counts, and what differs beyond the rows."""
    head = [
        "run",
        "matched rows",
        "tested",
        "geometric mean new/old",
        "faster",
        "slower",
        "within noise",
        "differs in",
    ]
    rows = []
    for run, (got, why) in zip(runs[1:], outcomes):
        differs = esc(", ".join(n.split(" differs:")[0] for n in _notes(runs[0], run)) or "-")
        if not got:
            rows.append(
                f'<tr><td class=text>{esc(run.label)}</td><td class=text colspan="6">'
                f"{why or summary(got or [])}</td><td class=text>{differs}</td></tr>"
            )
            continue
        counts = [sum(1 for r in got if r.verdict == v) for v in ("faster", "slower", "same")]
        rows.append(
            [
                esc(run.label),
                str(len(got)),
                str(sum(1 for r in got if r.tested)),
                number(geometric_mean([r.ratio for r in got]), ".3f", _MEAN, OVER),
                *map(str, counts),
                differs,
            ]
        )
    return table(head, rows, f"Every later run against {esc(runs[0].label)}", text=(0, 7))


def comparison(runs: list) -> str | None:
    """Every later run against the first, as `commbench compare FIRST LATER` judges them; with
    three runs or more a table of every later run's verdicts in counts, then each run in one
    line that opens to its rows."""
    if len(runs) < 2:
        return None
    intro = (
        f"<p>Each run against the first ({esc(runs[0].label)}): the ratio new/old of the reported "
        "time (t_max; t_ovrl for overlap tables) per matched row, as "
        "<code>commbench compare</code> gives it. Rows with --samples in both runs are tested: "
        f"<span class=slower>slower</span> means more than {THRESHOLD:.0%} slower by the ratio of "
        "medians and significant by the two-file test after Benjamini-Hochberg at 0.05 "
        f"(docs/statistics.md). Other rows: a change within {THRESHOLD:.0%} or within the larger "
        "rank-to-rank spread (t_max &minus; t_min) / t_max of the two rows is "
        "<span class=same>same</span>.</p>"
    )
    outcomes = [_outcome(runs[0], r) for r in runs[1:]]
    if len(runs) == 2:
        return "\n".join([intro, _one_comparison(runs[0], runs[1], *outcomes[0])])
    return "\n".join(
        [
            intro,
            _overview(runs, outcomes),
            "<h3>Each run's rows</h3>",
            *(_folded(runs[0], r, *o) for r, o in zip(runs[1:], outcomes)),
        ]
    )


# ---------------------------------------------------------------- tables


def imported_from(doc: dict) -> str | None:
    """'osu_latency 7.4 (OSU Micro-Benchmarks)' for a file of `commbench import`;
    None for a run of commbench."""
    meta, fam = doc.get("metadata") or {}, doc.get("family") or {}
    src = meta.get("source")
    if not isinstance(src, dict) and fam.get("profile") != "imported" and "imported" not in meta:
        return None
    src = src if isinstance(src, dict) else {}
    tool = " ".join(str(src[k]) for k in ("tool", "version") if src.get(k)) or str(
        fam.get("title") or "another tool"
    )
    suite = src.get("suite")
    return tool + (f" ({suite})" if suite and suite != src.get("tool") else "")


def _caption(rec: records.Measurement, engine: str | None) -> str:
    groups = len(rec.groups)
    parts = [f"Multi-{rec.benchmark}" if groups > 1 else rec.benchmark, f"{rec.np} processes"]
    if groups > 1:
        parts.append(f"{groups} groups")
    if rec.mode:
        parts.append(f"mode {rec.mode}")
    if engine:
        parts.append(f"engine {engine}")
    return esc(" \u00b7 ".join(parts))


_CELL = "a value of the file, or one computed from it, beyond the range of numbers"


def _rows(rec: records.Measurement, cols: list[str], cfg: dict) -> list:
    mb = cfg.get("mb_unit", 10**6)
    if rec.status != records.OK:
        return [
            (
                f'<tr class="status"><td>{esc(rec.bytes or 0)}</td>'
                f'<td class=text colspan="{max(len(cols) - 1, 1)}">'
                f"{esc(rec.status)}: {esc(rec.message)}</td></tr>"
            )
        ]
    if cfg.get("multi") == 1 and len(rec.groups) > 1:
        return [
            [number_cell(imb_text.cell(c, rec, v, mb, group=g), _CELL, OVER) for c in cols]
            for g, v in enumerate(rec.group_values)
        ]
    return [[number_cell(imb_text.cell(c, rec, rec.values, mb), _CELL, OVER) for c in cols]]


# Columns after IMB's where a table's rows carry their limit (commbench.models.limits): the
# fraction of the bandwidth limit, and the multiple of the latency floor.
LIMIT_COLUMNS = ["of limit", "x floor"]


def _limit_cells(rec: records.Measurement) -> list[str]:
    lim = limits.recorded(rec.extra)
    return [
        esc(f"{lim[k]:{f}}") if k in lim else "&ndash;"
        for k, f in (("fraction", ".2f"), ("multiple", ".1f"))
    ]


def imb_tables(run) -> str:
    """A run's tables in IMB's columns (imb_text.columns), one per benchmark, process count,
    mode and groups (and engine, with --engine both), its rows as the text has them."""
    cfg = run.doc.get("config") or {}
    both = cfg.get("engine") == "both"
    out: list[str] = []
    key, cols, rows, caption, held = None, [], [], "", False
    for rec in run.records:
        if rec.status == records.INVALID:
            out.append(
                f'<p class="note">{esc(rec.benchmark)}: invalid for {esc(rec.np)} processes</p>'
            )
            continue
        engine = rec.extra.get("engine") if both else None
        k = (*rec.table_key, engine)
        if k != key:
            if key is not None:
                out.append(
                    table([esc(c.strip()) for c in cols + LIMIT_COLUMNS * held], rows, caption)
                )
            key, cols, rows = (
                k,
                imb_text.columns(rec, cfg.get("multi"), cfg.get("check", False)),
                [],
            )
            caption, held = _caption(rec, engine), "limit" in rec.extra
        got = _rows(rec, cols, cfg)
        rows += [r + _limit_cells(rec) if held and isinstance(r, list) else r for r in got]
    if key is not None:
        out.append(table([esc(c.strip()) for c in cols + LIMIT_COLUMNS * held], rows, caption))
    return "\n".join(out) or "<p>no rows</p>"


def tables(runs: list) -> str:
    out = []
    for run in runs:
        out.append(f"<h3>{esc(run.label)}</h3>")
        source = imported_from(run.doc)
        if view_key(run.doc) == "imb":
            out.append(imb_tables(run))
        elif source:
            out.append(
                f"<p>Imported from {esc(source)}: its tables, as the log has them, are in its "
                "text report "
                '(<a href="#text">Text reports</a>).</p>'
            )
        else:
            out.append(
                f"<p>The tables of the {esc(run.family)} family are its own: see its text report "
                '(<a href="#text">Text reports</a>).</p>'
            )
    return "\n".join(out)


# ---------------------------------------------------------------- text


def text_reports(runs: list) -> str:
    """Each run's text as `commbench report FILE` prints it (tables, stored fits, trailer)."""
    from commbench.views.report_text import replay

    out = []
    for i, run in enumerate(runs):
        buf = io.StringIO()
        replay(run.doc, run.records, buf)
        opened = " open" if i == 0 and view_key(run.doc) != "imb" else ""
        out.append(
            f"<details{opened}><summary>{esc(run.label)} (<code>commbench report "
            f"{esc(run.path)}</code>)</summary><pre>{esc(buf.getvalue())}</pre></details>"
        )
    return "\n".join(out)
