"""The HTML report's first section: where, when, with what and how each run ran.

Each row (ROWS) is a function of a run that gives its cell, or None where the
file does not record it: a file of `commbench import` knows only what its
log says (no buffers, no Python, no -iter of commbench), a file of an older
commbench lacks what came later. Such a cell says "not recorded" (its title:
imported from which tool, or the file's age); a row no run records is left
out and named once under the table. Nothing is filled in with a default
that the run did not state ("--samples 1", "?").

Up to RUNS_PER_TABLE runs stand side by side, one column each. With more
(a table of 50 columns is not readable at 1280 px), the rows that are the
same in every run come once, in a table of their own; what differs follows in
one table with a row per run when at most DIFFERING_AS_COLUMNS rows differ
(the usual series of runs: file, date, options), else in tables of
RUNS_PER_TABLE runs each. So no table has more than 7 columns however many
runs there are. The tables have a fixed layout: their columns share the
page's width, and a long value wraps within its column.
"""

from __future__ import annotations

from commbench.views import imb_preamble
from commbench.views.html_sections import esc, imported_from, number
from commbench.views.imported_text import import_warnings

RUNS_PER_TABLE = 4
DIFFERING_AS_COLUMNS = 6


def not_recorded(run) -> str:
    source = imported_from(run.doc)
    why = (
        f"imported from {source}: its log does not say this"
        if source
        else "this results file does not record this (written by an older commbench, or edited)"
    )
    return f'<span class="na" title="{esc(why)}">not recorded</span>'


def _joined(parts: list[str | None], sep: str = ", ") -> str | None:
    """The parts that are known, escaped and joined; None when none is."""
    known = [p for p in parts if p]
    return esc(sep.join(known)) if known else None


def _mpi(meta: dict, run) -> str | None:
    lib = str(meta.get("mpi_library_version") or "").strip()
    version = f"MPI {meta['mpi_version']}" if meta.get("mpi_version") else ""
    if not lib:
        return f"{esc(version)}, library {not_recorded(run)}" if version else None
    first = esc(lib.splitlines()[0]) + (f" ({esc(version)})" if version else "")
    if "\n" not in lib:
        return first
    return f"<details><summary>{first}</summary><pre>{esc(lib)}</pre></details>"


def _hosts(meta: dict) -> str | None:
    per = meta.get("ranks_per_host") or {}
    if not isinstance(per, dict) or not per:
        return _joined([str(h) for h in meta.get("hosts") or []])
    return esc(
        f"{len(per)}: "
        + ", ".join(f"{h} ({n} rank{'s' if n != 1 else ''})" for h, n in per.items())
    )


def _cpu(meta: dict) -> str | None:
    count = meta.get("cpu_count")
    model = str(meta.get("cpu_model") or "")
    if model and count:
        return esc(f"{model} ({count} CPUs)")
    return _joined([model, f"{count} CPUs" if count else None])


def _memory(meta: dict, cfg: dict) -> str | None:
    b = meta.get("buffer_allocation") or {}
    kind, huge, thp, mem = (
        b.get("kind", cfg.get("alloc")),
        b.get("hugepages", cfg.get("hugepages")),
        b.get("thp_system"),
        cfg.get("max_mem"),
    )
    return _joined(
        [
            kind and f"buffers: {kind}",
            huge and f"huge pages: {huge}",
            thp and f"system THP: {thp}",
            mem and f"-mem {mem} GB per process",
        ],
        "; ",
    )


def _complete(doc: dict) -> str:
    summary = doc.get("summary") or {}
    if doc.get("complete") is True:
        secs = summary.get("elapsed_s")
        return "yes" + (
            f", {number(secs, 'g', 'the elapsed time the file gives')} s"
            if isinstance(secs, int | float)
            else ""
        )
    return (
        '<span class="slower">no: '
        f"{esc(summary.get('interrupted') or 'the file says complete: false')}</span>"
    )


def _made_by(doc: dict) -> str | None:
    meta = doc.get("metadata") or {}
    version = meta.get("commbench_version")
    source = imported_from(doc)
    if not source:
        return esc(f"commbench {version}") if version else None
    imp = meta.get("imported") or {}
    logs = [
        lg.get("file")
        for lg in (meta.get("source") or {}).get("logs") or []
        if isinstance(lg, dict)
    ]
    logs = [str(f) for f in logs if f] or ([str(imp["from"])] if imp.get("from") else [])
    return esc(
        f"{source}; imported by commbench {version or ''}".rstrip()
        + (f" on {imp['date']}" if imp.get("date") else "")
        + (f" from {', '.join(logs)}" if logs else "")
    )


def _options(doc: dict) -> str | None:
    meta, cfg = doc.get("metadata") or {}, doc.get("config") or {}
    seq = meta.get("calling_sequence")
    if not seq and imported_from(doc) and cfg.get("argv"):  # nccl-tests: the log's arguments
        tool = ((meta.get("source") or {}).get("tool")) or ""
        seq = [tool, *cfg["argv"]] if tool else cfg["argv"]
    return f"<code>{esc(' '.join(map(str, seq)))}</code>" if seq else None


def _repetitions(doc: dict) -> str | None:
    cfg = doc.get("config") or {}
    if imported_from(doc):
        return (
            None  # commbench's -iter, -time and --samples: the tool had its own (the options row)
        )
    return _joined(
        [
            cfg.get("msgspersample") and f"-iter {cfg['msgspersample']}",
            cfg.get("iter_policy") and f"policy {cfg['iter_policy']}",
            cfg.get("secs") and f"-time {cfg['secs']} s per size",
            cfg.get("samples") and f"--samples {cfg['samples']}",
        ]
    )


def _python(meta: dict) -> str | None:
    impl = meta.get("python_implementation")
    py = meta.get("python_version") and f"{meta['python_version']}" + (f" ({impl})" if impl else "")
    return _joined(
        [
            py,
            meta.get("mpi4py_version") and f"mpi4py {meta['mpi4py_version']}",
            meta.get("numpy_version") and f"numpy {meta['numpy_version']}",
        ]
    )


def _env(meta: dict) -> str | None:
    env = meta.get("mpi_env")
    if not isinstance(env, dict):
        return None
    return esc(", ".join(f"{k}={v}" for k, v in env.items()) or "none set")


def _family(doc: dict) -> str | None:
    fam = doc.get("family") or {}
    title, name = fam.get("title"), fam.get("name")
    return (
        esc(f"{title} ({name})" if title and name and title != name else (title or name))
        if title or name
        else None
    )


def _m(key: str):
    return lambda run: (
        esc(run.doc["metadata"][key])
        if (run.doc.get("metadata") or {}).get(key) not in (None, "")
        else None
    )


# (label, function of a run -> its cell's HTML, or None where the file does not record it)
ROWS = (
    ("file", lambda run: esc(run.path)),
    ("made by", lambda run: _made_by(run.doc)),
    ("complete", lambda run: _complete(run.doc)),
    ("family", lambda run: _family(run.doc)),
    (
        "benchmarks",
        lambda run: _joined(
            [str(b) for b in (run.doc.get("config") or {}).get("benchmarks") or []]
        ),
    ),
    ("date", _m("date")),
    ("MPI library", lambda run: _mpi(run.doc.get("metadata") or {}, run)),
    ("launcher", _m("launcher")),
    ("thread level", _m("thread_level")),
    ("hosts", lambda run: _hosts(run.doc.get("metadata") or {})),
    ("ranks", _m("world_size")),
    ("CPU", lambda run: _cpu(run.doc.get("metadata") or {})),
    (
        "engine",
        lambda run: (
            esc(
                (run.doc.get("metadata") or {}).get("engine")
                or (run.doc.get("config") or {}).get("engine")
            )
            or None
        ),
    ),
    ("memory", lambda run: _memory(run.doc.get("metadata") or {}, run.doc.get("config") or {})),
    ("options", lambda run: _options(run.doc)),
    (
        "methodology",
        lambda run: (
            esc(imb_preamble.methodology_line(run.doc["config"]))
            if (run.doc.get("config") or {}).get("methodology")
            else None
        ),
    ),
    ("repetitions", lambda run: _repetitions(run.doc)),
    ("Python", lambda run: _python(run.doc.get("metadata") or {})),
    ("MPI variables", lambda run: _env(run.doc.get("metadata") or {})),
)


def _table(runs: list, rows: list[tuple[str, list]], caption: str = "") -> str:
    """One column per run (at most RUNS_PER_TABLE), its cells given; None: not recorded."""
    cols = f'<colgroup><col class="label"><col span="{len(runs)}"></colgroup>'
    head = "<tr><th></th>" + "".join(f"<th>{esc(r.label)}</th>" for r in runs) + "</tr>"
    body = [
        "<tr><th>"
        + label
        + "</th>"
        + "".join(f"<td>{not_recorded(r) if c is None else c}</td>" for r, c in zip(runs, cells))
        + "</tr>"
        for label, cells in rows
    ]
    cap = f"<caption>{caption}</caption>" if caption else ""
    return (
        f'<table class="meta">{cap}{cols}<thead>{head}</thead><tbody>\n'
        + "\n".join(body)
        + "\n</tbody></table>"
    )


def _same(runs: list, rows: list[tuple[str, list]]) -> str:
    body = [
        (
            f"<tr><th>{label}</th><td>"
            f"{not_recorded(runs[0]) if cells[0] is None else cells[0]}</td></tr>"
        )
        for label, cells in rows
    ]
    return (
        f'<table class="meta"><caption>The same in all {len(runs)} runs</caption>'
        '<colgroup><col class="label"><col></colgroup><tbody>\n'
        + "\n".join(body)
        + "\n</tbody></table>"
    )


def _per_run(runs: list, rows: list[tuple[str, list]]) -> str:
    """A row per run, a column per row of ROWS given (at most DIFFERING_AS_COLUMNS)."""
    cols = f'<colgroup><col class="run"><col span="{len(rows)}"></colgroup>'
    head = "<tr><th></th>" + "".join(f"<th>{label}</th>" for label, _ in rows) + "</tr>"
    body = [
        "<tr><th>"
        + esc(r.label)
        + "</th>"
        + "".join(
            f"<td>{not_recorded(r) if cells[i] is None else cells[i]}</td>" for _, cells in rows
        )
        + "</tr>"
        for i, r in enumerate(runs)
    ]
    return (
        f'<table class="meta"><caption>What differs between the runs, a row each</caption>{cols}'
        f"<thead>{head}</thead><tbody>\n" + "\n".join(body) + "\n</tbody></table>"
    )


def _tables(runs: list, rows: list[tuple[str, list]]) -> list[str]:
    if len(runs) <= RUNS_PER_TABLE:
        return [_table(runs, rows)]
    same = [(label, cells) for label, cells in rows if len(set(cells)) == 1]
    differ = [(label, cells) for label, cells in rows if len(set(cells)) > 1]
    out = [_same(runs, same)] if same else []
    if len(differ) <= DIFFERING_AS_COLUMNS:
        return [*out, _per_run(runs, differ)] if differ else out
    for i in range(0, len(runs), RUNS_PER_TABLE):
        part = runs[i : i + RUNS_PER_TABLE]
        cap = f"Runs {i + 1}&ndash;{i + len(part)}" if len(part) > 1 else f"Run {i + 1}"
        out.append(
            _table(
                part,
                [(label, cells[i : i + len(part)]) for label, cells in differ],
                cap + (": what differs between the runs" if same else ""),
            )
        )
    return out


def metadata(runs: list) -> str:
    """The runs side by side (in tables of RUNS_PER_TABLE runs), what none records named
    once, then each run's notes."""
    rows = [(label, [f(r) for r in runs]) for label, f in ROWS]
    shown = [(label, cells) for label, cells in rows if any(c is not None for c in cells)]
    out = _tables(runs, shown)
    missing = [label for label, cells in rows if all(c is None for c in cells)]
    if missing:
        imported = sorted({s for s in map(lambda r: imported_from(r.doc), runs) if s})
        why = (
            f" (imported from {', '.join(imported)}: a log says only what its tool prints)"
            if imported
            else ""
        )
        out.append(
            '<p class="unrecorded">Not recorded in '
            f"{'any of these files' if len(runs) > 1 else 'this file'}: "
            f"{esc(', '.join(missing))}{esc(why)}.</p>"
        )
    for r in runs:
        notes = [n for n in r.doc.get("notes") or [] if str(n).strip()]
        logs = ((r.doc.get("metadata") or {}).get("source") or {}).get("logs") or []
        notes += [
            f"import warning: {lg.get('file')}: {w}"
            for lg in logs
            if isinstance(lg, dict)
            for w in import_warnings(lg)
        ]
        if notes:
            out.append(
                f"<h3>Notes of {esc(r.label)}</h3>"
                + "".join(f'<p class="note">{esc(n)}</p>' for n in notes)
            )
    return "\n".join(out)
