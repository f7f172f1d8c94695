"""`commbench compare A B --across mpi --html OUT.html`: the comparison of two MPI libraries as
one self-contained page (no MPI).

The page is html_report's (inline CSS, SVG figures in data: URIs, no script, every string of
a file escaped) with its first section, "MPIs compared", in place of the report's comparison:
the two libraries named (version string, MPI standard, launcher, mpi4py, the MPI environment
variables each run set), what both runs agree in, the summary of compare_mpis_text, per table
a figure of B/A against message size (the ratio of medians with its 95% interval, filled
where the difference is supported), and every row with the faster MPI. The runs' metadata,
time and rate figures, tables and text reports follow, the runs named by their MPIs.
"""

from __future__ import annotations

import math
import os

from commbench.views import compare_mpis_text as cmt
from commbench.views import compare_runs, compare_text, html_report
from commbench.views.compare import ComparedRow
from commbench.views.compare_mpis_text import Side
from commbench.views.html_sections import OVER, compared_cells, esc, number, table

COMMAND = "commbench compare A B --across mpi --html"
COLOURS = ("#1f77b4", "#ff7f0e")  # A's, B's (tab10's first two)
_RATIO = "B/A of two times so far apart that their ratio is beyond the range of numbers"


def _size(x: int) -> str:
    for shift, unit in ((30, "G"), (20, "M"), (10, "K")):
        if x >= 1 << shift and x % (1 << shift) == 0:
            return f"{x >> shift}{unit}"
    return str(x)


def _tables(rows: list[ComparedRow]) -> dict[tuple, list[ComparedRow]]:
    """Rows with a size, by table (benchmark, np, mode, groups, extras), in the rows' order."""
    out: dict[tuple, list[ComparedRow]] = {}
    for r in rows:
        name, np_, mode, x, groups = r.key
        if x is not None and 0 < r.ratio < math.inf:
            key = (r.family, name, np_, mode, groups, tuple(sorted(r.extras.items())))
            out.setdefault(key, []).append(r)
    return out


def _points(ax, rows: list[ComparedRow], a: Side, b: Side) -> None:
    for i, r in enumerate(rows):
        who, ok = cmt.faster(r, a, b), cmt.supported(r)
        colour = COLOURS[0] if who is a else COLOURS[1] if who is b else "#5b6572"
        err = None
        if r.ci and all(math.isfinite(v) and v > 0 for v in r.ci):
            err = [[max(r.ratio - r.ci[0], 0)], [max(r.ci[1] - r.ratio, 0)]]
        ax.errorbar(
            [i],
            [r.ratio],
            yerr=err,
            fmt="x" if ok is None else "o",
            color=colour,
            mfc=colour if ok else "white",
            ms=7,
            capsize=3,
            lw=1,
        )


def figure(title: str, rows: list[ComparedRow], a: Side, b: Side, threshold: float) -> str:
    """B/A against size for one table, as an SVG data: URI."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    from commbench.views import plot

    fig, ax = plot.pyplot().subplots(figsize=(9, 3.6))
    ax.axhspan(1 / (1 + threshold), 1 + threshold, color="#e3e7ec")
    ax.axhline(1, color="#5b6572", lw=1)
    _points(ax, rows, a, b)
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(range(len(rows)), [_size(r.key[3]) for r in rows], rotation=45, fontsize=8)
    ax.set_xlabel("message size [bytes]")
    ax.set_ylabel(f"time {b.name} / {a.name}", fontsize=9)
    ax.set_title(f"{title}: below 1 {b.name} is faster, above 1 {a.name}", fontsize=10)
    ax.grid(True, which="major", axis="y", alpha=0.3)
    handles = [
        Line2D([], [], marker="o", ls="", color=COLOURS[1], label=f"{b.name} faster, supported"),
        Line2D([], [], marker="o", ls="", color=COLOURS[0], label=f"{a.name} faster, supported"),
        Line2D([], [], marker="o", ls="", color="#5b6572", mfc="white", label="not supported"),
        Line2D([], [], marker="x", ls="", color="#5b6572", label="untested (no samples)"),
        Line2D([], [], lw=6, color="#e3e7ec", label=f"within {threshold:.0%}"),
    ]
    ax.legend(handles=handles, fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    return plot.svg_uri(fig)


def _libraries(a: Side, b: Side) -> str:
    env = [compare_runs.mpi_env_settings(s.doc) for s in (a, b)]
    rows = [
        ["file", *(esc(s.path) for s in (a, b))],
        [
            "MPI library",
            *(f'<span style="white-space: pre-line">{esc(s.library)}</span>' for s in (a, b)),
        ],
    ]
    for label, get in cmt.FACTS:
        rows.append([label, *(esc(get(s) or "not recorded") for s in (a, b))])
    rows.append(
        [
            "MPI environment variables",
            *(
                esc(", ".join(f"{k}={v}" for k, v in e.items()) or "none")
                if isinstance(e, dict)
                else "not recorded"
                for e in env
            ),
        ]
    )
    head = ["", *(f"{s.letter}: {esc(s.name)}" for s in (a, b))]
    return table(head, rows, cls="meta", text=(0, 1, 2))


def _row_cells(r: ComparedRow, a: Side, b: Side) -> list[str]:
    who, ok = cmt.faster(r, a, b), cmt.supported(r)
    word = "untested" if ok is None else "yes" if ok else "no"
    return [
        *compared_cells(r),
        f"{r.ci[0]:.3f}&ndash;{r.ci[1]:.3f}" if r.ci else "-",
        esc(compare_text.q_text(r)),
        "-" if who is None else f"{esc(who.name)} {number(cmt.speedup(r), '.2f', _RATIO, OVER)}x",
        f'<span class="{"faster" if ok else "same"}">{word}</span>',
    ]


def section(rows: list[ComparedRow], a: Side, b: Side, threshold: float, alpha: float):
    """The "MPIs compared" section, as html_report's sections are: a function of the runs."""

    def build(_runs: list) -> str:
        same = compare_runs.agreeing(a.doc, b.doc, "mpi")
        out = [
            f"<p>{esc(a.name)} (A) against {esc(b.name)} (B): one configuration under two MPI "
            "libraries, as <code>commbench compare A B --across mpi</code> compares them. Per "
            "row B/A, the ratio of the reported times (of the medians of the samples for a "
            f"tested row); a difference is <b>supported</b> when it is beyond {threshold:.0%} "
            "by the ratio of medians and significant by the two-file test on the samples after "
            f"Benjamini-Hochberg at {alpha:g} (docs/statistics.md).</p>",
            _libraries(a, b),
            "<p>The same in both: "
            + esc(", ".join([*same, "benchmarks, process counts and sizes"]))
            + ".</p>",
            f'<p class="verdict">{esc(cmt.summary(rows, a, b, threshold, alpha))}</p>',
            *(f'<p class="note">{esc(w)}</p>' for w in cmt.warnings(rows, a, b, alpha)),
        ]
        for (_, name, np_, mode, groups, extras), part in _tables(rows).items():
            title = f"{name} np={np_}" + (f" {mode}" if mode else "")
            title += "".join(f" {k}={v}" for k, v in extras) + (
                f" ({groups} groups)" if groups > 1 else ""
            )
            out.append(
                f'<h3>{esc(title)}</h3><figure><img src="{figure(title, part, a, b, threshold)}"'
                f' alt="{esc(title)}: B/A against message size"><figcaption>{esc(title)}: '
                f"time of {esc(b.name)} over {esc(a.name)}, bars: 95% interval of the ratio of "
                "medians</figcaption></figure>"
            )
        head = ["benchmark", "np", "mode", "bytes", f"{a.name} [usec]", f"{b.name} [usec]"]
        head = [esc(h) for h in head] + ["B/A", "95% CI", "q", "faster", "supported"]
        out.append(table(head, [_row_cells(r, a, b) for r in rows], "Every row", text=(0, 2)))
        return "\n".join(out)

    return build


def write(
    out: str, a: Side, b: Side, rows: list[ComparedRow], threshold: float, alpha: float
) -> None:
    """The page to out; ValueError saying what went wrong."""
    runs = [
        html_report.ReportedRun(
            s.path, s.doc, s.recs, f"{s.letter}: {s.name} ({os.path.basename(s.path)})"
        )
        for s in (a, b)
    ]
    sections = (
        ("mpis", "MPIs compared", section(rows, a, b, threshold, alpha)),
        *(s for s in html_report.SECTIONS if s[0] != "comparison"),
    )
    title = f"commbench: {a.name} against {b.name}"
    html_report.write_page(out, html_report.render(runs, sections, title, COMMAND))
