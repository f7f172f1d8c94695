"""The sections of the HTML report (commbench.views.html_report): the runs' metadata,
the comparison verdicts, the tables and the text reports (the plots: html_plots).

Each section takes the runs (html_report.Run: path, doc, records, label) and
returns its HTML, or None when it has nothing to show. Every string that
comes from a results file goes through esc(); numbers are formatted here.
"""

from __future__ import annotations

import html
import io

from commbench import records, suites
from commbench.views import compare, imb_text

CSS = """\
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2430;
       background: #f6f7f9; margin: 0; }
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
table { border-collapse: collapse; margin: 6px 0 12px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d5dbe2; padding: 3px 9px; text-align: right; vertical-align: top; }
th { background: #eef2f6; font-weight: 600; }
td.text, th.text { text-align: left; }
tbody tr:nth-child(even) td { background: #fafbfc; }
table.meta td { text-align: left; max-width: 520px; overflow-wrap: anywhere; }
table.meta th { text-align: left; white-space: nowrap; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: 4px 0; }
tr.status td { background: #fff6e0 !important; color: #7a5200; }
.faster { color: #0a7a2f; font-weight: 600; }
.slower { color: #b3261e; font-weight: 600; }
.same { color: #5b6572; }
.verdict { font-weight: 600; }
p.note { color: #7a5200; margin: 4px 0; }
figure { margin: 8px 0 4px; }
figure img { width: 100%; max-width: 1400px; height: auto; border: 1px solid #e3e7ec; }
figcaption { color: #5b6572; font-size: 13px; }
pre { background: #f3f5f8; border: 1px solid #e3e7ec; padding: 8px; overflow-x: auto; font-size: 12px; }
details summary { cursor: pointer; font-weight: 600; margin: 6px 0; }
"""


def esc(v) -> str:
    """Text for the page: every character of a results file's strings shown, never read as markup."""
    return html.escape("" if v is None else str(v), quote=True)


def table(head: list[str], rows: list[list[str]], caption: str = "", cls: str = "", text_cols: int = 0) -> str:
    """A table of already-escaped cells; the first text_cols columns left-aligned."""
    def tr(cells: list[str], tag: str) -> str:
        return "<tr>" + "".join(f'<{tag}{" class=text" if i < text_cols else ""}>{c}</{tag}>'
                                for i, c in enumerate(cells)) + "</tr>"

    cap = f"<caption>{caption}</caption>" if caption else ""
    body = "\n".join(r if isinstance(r, str) else tr(r, "td") for r in rows)
    return (f'<table{f" class={cls}" if cls else ""}>{cap}<thead>{tr(head, "th")}</thead>\n'
            f"<tbody>\n{body}\n</tbody></table>")


# ---------------------------------------------------------------- metadata

def _mpi(meta: dict) -> str:
    lib = str(meta.get("mpi_library_version") or "")
    first = lib.strip().splitlines()[0] if lib.strip() else "unknown"
    version = f" (MPI {esc(meta.get('mpi_version'))})" if meta.get("mpi_version") else ""
    if "\n" not in lib.strip():
        return esc(first) + version
    return f"<details><summary>{esc(first)}{version}</summary><pre>{esc(lib.strip())}</pre></details>"


def _hosts(meta: dict) -> str:
    per = meta.get("ranks_per_host") or {}
    if not isinstance(per, dict) or not per:
        return esc(", ".join(map(str, meta.get("hosts") or [])) or "unknown")
    return esc(f"{len(per)}: " + ", ".join(f"{h} ({n} rank{'s' if n != 1 else ''})" for h, n in per.items()))


def _memory(meta: dict, cfg: dict) -> str:
    b = meta.get("buffer_allocation") or {}
    kind = b.get("kind", cfg.get("alloc"))
    return esc(f"buffers: {kind or 'unknown'}; huge pages: {b.get('hugepages', cfg.get('hugepages', '?'))} "
               f"(system THP: {b.get('thp_system', '?')}); -mem {cfg.get('max_mem', '?')} GB per process")


def _complete(doc: dict) -> str:
    summary = doc.get("summary") or {}
    if doc.get("complete") is True:
        return "yes" + (f", {esc(summary['elapsed_s'])} s" if "elapsed_s" in summary else "")
    return f'<span class="slower">no: {esc(summary.get("interrupted") or "the file says complete: false")}</span>'


def _meta_rows(run) -> list[tuple[str, str]]:
    doc = run.doc
    meta, cfg, fam = doc.get("metadata") or {}, doc.get("config") or {}, doc.get("family") or {}
    env = meta.get("mpi_env") or {}
    return [
        ("file", esc(run.path)),
        ("complete", _complete(doc)),
        ("family", esc(f"{fam.get('title', '?')} ({fam.get('name', '?')})")),
        ("benchmarks", esc(", ".join(map(str, cfg.get("benchmarks") or [])))),
        ("date", esc(meta.get("date"))),
        ("commbench", esc(meta.get("commbench_version"))),
        ("MPI library", _mpi(meta)),
        ("launcher", esc(meta.get("launcher"))),
        ("thread level", esc(meta.get("thread_level"))),
        ("hosts", _hosts(meta)),
        ("ranks", esc(meta.get("world_size"))),
        ("CPU", esc(f"{meta.get('cpu_model', '?')} ({meta.get('cpu_count', '?')} CPUs)")),
        ("engine", esc(meta.get("engine", cfg.get("engine")))),
        ("memory", _memory(meta, cfg)),
        ("options", f"<code>{esc(' '.join(map(str, meta.get('calling_sequence') or [])))}</code>"),
        ("methodology", esc(imb_text.methodology_line(cfg)) if cfg.get("methodology") else "&ndash;"),
        ("repetitions", esc(f"-iter {cfg.get('msgspersample', '?')}, policy {cfg.get('iter_policy', '?')}, "
                            f"-time {cfg.get('secs', '?')} s per size, --samples {cfg.get('samples', 1)}")),
        ("Python", esc(f"{meta.get('python_version', '?')} ({meta.get('python_implementation', '?')}), "
                       f"mpi4py {meta.get('mpi4py_version', '?')}, numpy {meta.get('numpy_version', '?')}")),
        ("MPI variables", esc(", ".join(f"{k}={v}" for k, v in env.items()) if isinstance(env, dict) and env
                              else "none set")),
    ]


def metadata(runs: list) -> str:
    """One column per run: where, when, with what and how it ran; then each run's notes."""
    rows = [_meta_rows(r) for r in runs]
    body = [[f"<th>{label}</th>", *(r[i][1] for r in rows)] for i, (label, _) in enumerate(rows[0])]
    head = "<tr><th></th>" + "".join(f"<th>{esc(r.label)}</th>" for r in runs) + "</tr>"
    lines = ["<tr>" + cells[0] + "".join(f"<td>{c}</td>" for c in cells[1:]) + "</tr>" for cells in body]
    out = [f'<table class="meta"><thead>{head}</thead><tbody>\n' + "\n".join(lines) + "\n</tbody></table>"]
    for r in runs:
        notes = [n for n in r.doc.get("notes") or [] if str(n).strip()]
        if notes:
            out.append(f"<h3>Notes of {esc(r.label)}</h3>" + "".join(f'<p class="note">{esc(n)}</p>' for n in notes))
    return "\n".join(out)


# ---------------------------------------------------------------- comparison

THRESHOLD = 0.05  # as `commbench compare`'s default --threshold


def _compare_rows(rows: list[compare.Row]) -> list[list[str]]:
    out = []
    for r in rows:
        name, np_, mode, x, groups = r.key
        out.append([esc(name if groups <= 1 else f"Multi-{name}"), esc(np_), esc(mode or "-"),
                    "" if x is None else esc(x), f"{r.old:.2f}", f"{r.new:.2f}", f"{r.ratio:.3f}",
                    f"{r.noise * 100:.1f}%", f'<span class="{esc(r.verdict)}">{esc(r.verdict)}</span>'])
    return out


def _one_comparison(base, run) -> str:
    out = [f"<h3>{esc(run.label)} against {esc(base.label)}</h3>"]
    out += [f'<p class="note">{esc(n.removeprefix("# note: "))}</p>' for n in compare.context_notes(base.doc, run.doc)]
    for r in (base, run):
        if compare.duplicates(r.records):
            return "\n".join([*out, f'<p class="note">{esc(r.label)}: {compare.duplicates(r.records)} rows repeat '
                                    "another row's benchmark, size, process count and engine: which to compare is "
                                    "ambiguous; not compared</p>"])
    rows = compare.compare(base.records, run.records, THRESHOLD)
    if not rows:
        return "\n".join([*out, f'<p class="verdict">{esc(compare.summary(rows))}</p>'])
    head = ["benchmark", "np", "mode", "bytes", "old [usec]", "new [usec]", "new/old", "spread", "verdict"]
    out.append(f'<details><summary class="verdict">{esc(compare.summary(rows))} (every row)</summary>'
               f"{table(head, _compare_rows(rows), text_cols=1)}</details>")
    return "\n".join(out)


def comparison(runs: list) -> str | None:
    """Every later run against the first, as `commbench compare FIRST LATER` judges them."""
    if len(runs) < 2:
        return None
    intro = (f"<p>Each run against the first ({esc(runs[0].label)}): the ratio new/old of the reported time "
             "(t_max; t_ovrl for overlap tables) per matched row, as <code>commbench compare</code> gives it. "
             f"Rows with --samples in both runs are tested: <span class=slower>slower</span> means more than "
             f"{THRESHOLD:.0%} slower by the ratio of medians and significant by Mann-Whitney U after "
             "Benjamini-Hochberg at 0.05 (docs/statistics.md). Other rows: a change within "
             f"{THRESHOLD:.0%} or within the larger rank-to-rank spread (t_max &minus; t_min) "
             "/ t_max of the two rows is <span class=same>same</span>.</p>")
    return "\n".join([intro, *(_one_comparison(runs[0], r) for r in runs[1:])])


# ---------------------------------------------------------------- tables

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


def _rows(rec: records.Measurement, cols: list[str], cfg: dict) -> list:
    mb = cfg.get("mb_unit", 10**6)
    if rec.status != records.OK:
        return [f'<tr class="status"><td>{esc(rec.bytes or 0)}</td><td class=text colspan="{max(len(cols) - 1, 1)}">'
                f"{esc(rec.status)}: {esc(rec.message)}</td></tr>"]
    if cfg.get("multi") == 1 and len(rec.groups) > 1:
        return [[esc(imb_text.cell(c, rec, v, mb, group=g)) for c in cols] for g, v in enumerate(rec.group_values)]
    return [[esc(imb_text.cell(c, rec, rec.values, mb)) for c in cols]]


def imb_tables(run) -> str:
    """A run's tables in IMB's columns (imb_text.columns), one per benchmark, process count,
    mode and groups (and engine, with --engine both), its rows as the text has them."""
    cfg = run.doc.get("config") or {}
    both = cfg.get("engine") == "both"
    out: list[str] = []
    key, cols, rows, caption = None, [], [], ""
    for rec in run.records:
        if rec.status == records.INVALID:
            out.append(f'<p class="note">{esc(rec.benchmark)}: invalid for {esc(rec.np)} processes</p>')
            continue
        engine = rec.extra.get("engine") if both else None
        k = (*rec.table_key, engine)
        if k != key:
            if key is not None:
                out.append(table([esc(c.strip()) for c in cols], rows, caption))
            key, cols, rows = k, imb_text.columns(rec, cfg.get("multi"), cfg.get("check", False)), []
            caption = _caption(rec, engine)
        rows += _rows(rec, cols, cfg)
    if key is not None:
        out.append(table([esc(c.strip()) for c in cols], rows, caption))
    return "\n".join(out) or "<p>no rows</p>"


def _view(run) -> str:
    """The text view of the run's family (or the file's own: `commbench import`'s), as report_text picks it."""
    fam = suites.canonical_family(run.family or "mpi1")
    return (run.doc.get("family") or {}).get("view") or (suites.family(fam).view if fam else "imb")


def tables(runs: list) -> str:
    out = []
    for run in runs:
        out.append(f"<h3>{esc(run.label)}</h3>")
        if _view(run) == "imb":
            out.append(imb_tables(run))
        else:
            out.append(f"<p>The tables of the {esc(run.family)} family are its own: see its text report "
                       '(<a href="#text">Text reports</a>).</p>')
    return "\n".join(out)


# ---------------------------------------------------------------- text

def text_reports(runs: list) -> str:
    """Each run's text as `commbench report FILE` prints it (tables, stored fits, trailer)."""
    from commbench.views.report_text import replay

    out = []
    for i, run in enumerate(runs):
        buf = io.StringIO()
        replay(run.doc, run.records, buf)
        opened = " open" if i == 0 and _view(run) != "imb" else ""
        out.append(f"<details{opened}><summary>{esc(run.label)} (<code>commbench report "
                   f"{esc(run.path)}</code>)</summary><pre>{esc(buf.getvalue())}</pre></details>")
    return "\n".join(out)
