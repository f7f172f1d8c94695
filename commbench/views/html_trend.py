"""The HTML report's trend section (`commbench report --html OUT --trend STORE[:SELECTOR]`):
stored rows over time, from the plain data of commbench.store.trend.compute (the command
line opens the store and hands the dict over; this module never reads a store).

Rows are grouped into figures by table (the row's label without its size: benchmark, np,
mode, and system when there are several): one figure per table, one small panel per
message size. A panel draws the row's value in each run against the run's date, the
baseline band the run was judged against as a shaded area (its center dashed), the runs
the between-run test flagged (slower: red triangle up, faster: green triangle down) and a
dotted vertical line, labelled with the run and what changed, at each run that changed MPI
library, commbench version or options against its system's run before. Above the figures,
those runs as a table; under them, the flagged points.

A store can hold thousands of rows: at most MAX_FIGURES figures of MAX_PANELS panels each
are drawn (tables and sizes with flagged points first, then spread over the rest), the
latest MAX_RUNS runs in them, and the page says what was left out and how to narrow the
selection. Every string of the store is escaped; the figures are SVG in data: URIs as the
report's other figures (commbench.views.html_plots).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

from commbench.views.html_sections import esc, number, table

MAX_FIGURES = 12  # tables drawn
MAX_PANELS = 12  # sizes of one table drawn
MAX_RUNS = 200  # the latest runs drawn in the figures
MAX_FLAGGED = 100  # flagged points in the table (the newest)
COLUMNS = 4  # panels in a figure's row
DOTS = 60  # runs in a panel up to which each value is a dot on the line
VALUE, BAND, SLOWER, FASTER, CHANGE = "#1f5fa8", "#1f5fa8", "#c62828", "#2e7d32", "#8a5a00"
NARROW = (
    "narrow the selection: <code>--trend STORE:benchmark=NAME</code>, "
    "<code>:system=S</code>, <code>:last=N</code> (the N latest runs), <code>:since=30d</code>"
)


def check(data: dict) -> None:
    """ValueError when the trend has nothing to draw: no run matches, or none holds a row."""
    where = f"store {data['store']}"
    sel = data.get("selector")
    accepted = (
        "accepted: a selector that matches stored runs, e.g. benchmark=PingPong,last=30; "
        "`commbench store list SELECTOR` shows what one matches"
    )
    if not data["runs"]:
        raise ValueError(
            f"--trend: {where} has no run that matches {sel or 'it'}: nothing to draw ({accepted})"
        )
    if not data["rows"]:
        raise ValueError(
            f"--trend: the {len(data['runs'])} runs of {where} that match {sel or 'it'} hold no "
            f"rows: nothing to draw ({accepted})"
        )


def when(iso: str) -> datetime:
    """The store's date (ISO UTC, 2026-11-26T09:34:25Z) as a datetime."""
    return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def title(row: dict, several_systems: bool) -> str:
    """The table a row belongs to: its label without the size (and its system, if needed)."""
    label = re.sub(r" bytes=\d+", "", row["label"])
    return f"{label} [{row['system']}]" if several_systems else label


def _flagged(row: dict) -> bool:
    return any(p.get("flag") for p in row["points"])


def pick(items: list, most: int, important) -> list:
    """At most `most` of items in their order: the important ones first, then spread evenly
    over the rest."""
    if len(items) <= most:
        return list(items)
    keep = [i for i, x in enumerate(items) if important(x)][:most]
    spread = [round(j * (len(items) - 1) / max(most - 1, 1)) for j in range(most)]
    rest = [i for i in spread if i not in keep] + [i for i in range(len(items)) if i not in keep]
    for i in rest:
        if len(keep) >= most:
            break
        if i not in keep:
            keep.append(i)
    return [items[i] for i in sorted(keep)]


def groups(data: dict) -> dict[str, list[dict]]:
    """Table title -> its rows (sizes ascending), in the order of data["rows"]."""
    several = len({r["system"] for r in data["rows"]}) > 1
    out: dict[str, list[dict]] = {}
    for row in data["rows"]:
        out.setdefault(title(row, several), []).append(row)
    return out


# ---------------------------------------------------------------- the figures


def short_change(change: str) -> str:
    """What changed, in a few words for the figure: "MPI library, methodology"."""
    words = []
    for part in change.split("; "):
        if " differs:" in part:
            words.append(part.split(" differs:")[0].split(" (")[0])
        elif part.startswith("commbench "):
            words.append("commbench version")
        elif part.startswith("MPI library "):
            words.append("MPI library")
        else:
            words.append(part[:24])
    return ", ".join(dict.fromkeys(words))


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "\u2026"


def _masked(values: list):
    import numpy as np

    return np.ma.masked_invalid(np.array([math.nan if v is None else v for v in values], float))


def _ylim(ax, points: list[dict]) -> None:
    """The axis over the values and band centers; a band wider than that is cut off."""
    seen = [p["value"] for p in points if p["value"] is not None]
    seen += [p["center"] for p in points if p.get("center") is not None]
    seen = [v for v in seen if math.isfinite(v)]
    if not seen:
        return
    lo, hi = min(seen), max(seen)
    pad = 0.15 * (hi - lo) if hi > lo else 0.1 * abs(hi) or 1.0
    ax.set_ylim(max(0.0, lo - pad) if lo >= 0 else lo - pad, hi + pad)


def _panel(ax, k: int, row: dict, drawn: set, changes: list[tuple]) -> None:
    """Panel k, one row: its values, band, flags and the changes of its system (each with an
    id in the SVG: band-K, slower-K, faster-K, change-RUN-K)."""
    pts = [p for p in row["points"] if p["run"] in drawn]
    x = [when(p["started"]) for p in pts]
    ax.fill_between(
        x,
        _masked([p["band"][0] if p.get("band") else None for p in pts]),
        _masked([p["band"][1] if p.get("band") else None for p in pts]),
        color=BAND,
        alpha=0.16,
        lw=0,
        gid=f"band-{k}",
    )
    ax.plot(x, _masked([p.get("center") for p in pts]), "--", color="#5b6572", lw=0.8)
    dots = "o" if len(pts) <= DOTS else ""  # with many runs, the line alone
    ax.plot(x, _masked([p["value"] for p in pts]), "-" + dots, color=VALUE, lw=1, ms=2.5)
    for flag, colour, marker in (("slower", SLOWER, "^"), ("faster", FASTER, "v")):
        hit = [(when(p["started"]), p["value"]) for p in pts if p.get("flag") == flag]
        if hit:
            ax.scatter(*zip(*hit), marker=marker, s=40, color=colour, zorder=4, gid=f"{flag}-{k}")
    for run_id, moment, system, what in changes:
        if system == row["system"] and run_id in drawn:
            ax.axvline(moment, color=CHANGE, ls=":", lw=1.1, gid=f"change-{run_id}-{k}")
            ax.annotate(
                _cut(f"run {run_id}: {what}", 32),
                xy=(moment, 1),
                xycoords=("data", "axes fraction"),
                rotation=90,
                fontsize=7,
                color=CHANGE,
                ha="right",
                va="top",
            )
    _ylim(ax, pts)
    ax.set_title(
        f"{row['bytes']} B" if row["bytes"] is not None else _cut(row["label"], 40), fontsize=9
    )
    ax.grid(True, alpha=0.3)
    ax.tick_params(labelsize=7, labelbottom=True)


def _legend(fig) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [
        Line2D([], [], color=VALUE, marker="o", ms=3, lw=1, label="value [usec]"),
        Patch(color=BAND, alpha=0.16, label="baseline band (where a run is called)"),
        Line2D([], [], color="#5b6572", ls="--", lw=0.8, label="band center"),
        Line2D([], [], color=SLOWER, marker="^", ls="", label="flagged slower"),
        Line2D([], [], color=FASTER, marker="v", ls="", label="flagged faster"),
        Line2D([], [], color=CHANGE, ls=":", label="MPI / commbench / options changed"),
    ]
    fig.legend(handles=handles, loc="lower center", ncol=6, fontsize=7, frameon=False)


def svg_uri(name: str, rows: list[dict], drawn: set, changes: list[tuple]) -> str:
    """One table's figure: a panel per row, as an SVG data: URI."""
    import matplotlib.dates as mdates

    from commbench.views import plot

    plt = plot.pyplot()
    cols = min(COLUMNS, len(rows))
    lines = -(-len(rows) // cols)
    width, height = 3.5 * cols + 0.6, 2.3 * lines + 1.1  # inches
    with plt.rc_context({"text.parse_math": False}):  # a "$" of a name stays a "$"
        fig, axes = plt.subplots(lines, cols, figsize=(width, height), sharex=True, squeeze=False)
        for k, (ax, row) in enumerate(zip(axes.flat, rows)):
            _panel(ax, k, row, drawn, changes)
        ticks = mdates.AutoDateLocator(minticks=2, maxticks=5)  # shared by the panels
        axes[0, 0].xaxis.set_major_locator(ticks)
        axes[0, 0].xaxis.set_major_formatter(mdates.ConciseDateFormatter(ticks))
        for ax in list(axes.flat)[len(rows) :]:
            ax.set_visible(False)
        for ax in axes[:, 0]:
            ax.set_ylabel("usec", fontsize=8)
        fig.suptitle(_cut(f"{name}: value per run over time (UTC)", 120), fontsize=10)
        _legend(fig)
        fig.subplots_adjust(  # fixed margins: tight_layout would draw every panel once more
            left=0.75 / width,
            right=1 - 0.15 / width,
            top=1 - 0.55 / height,
            bottom=0.8 / height,
            wspace=0.3,
            hspace=0.75,
        )
        return plot.svg_uri(fig, dpi=100)


# ---------------------------------------------------------------- the section


def _intro(data: dict, drawn: set) -> str:
    runs = data["runs"]
    sel = f"<code>{esc(data['selector'])}</code>" if data.get("selector") else "every run"
    older = len(runs) - len(drawn)
    cut = (
        f" The figures draw the latest {len(drawn)} runs; {older} older runs are left out of "
        f"them (the table of flagged points has them; {NARROW})."
        if older > 0
        else ""
    )
    return (
        f"<p>Store <code>{esc(data['store'])}</code>, {sel}: {len(runs)} runs from "
        f"{esc(runs[0]['started'])} to {esc(runs[-1]['started'])}, {len(data['rows'])} rows. "
        "Each run is judged as <code>commbench compare RUN --baseline</code> judges it: against "
        f"the (up to) {esc(data['last'])} complete runs of its system before it that agree with "
        "it in what changes the numbers; with two or more, the band (shaded) is what the "
        "between-run test calls: a run outside it is beyond "
        f"{esc(format(data['threshold'], '.0%'))} of the band's center at a one-sided "
        f"p &le; {esc(format(data['alpha'], 'g'))}, and is flagged where its q over the run's "
        "rows stays there too; a run inside it is never flagged (slower: red &#9650;, faster: "
        "green &#9660;). Dotted "
        "verticals: runs that changed MPI library, commbench version or options against the "
        "run of their system before (a run's baseline holds only earlier runs with the same "
        "MPI library and options: after a change, no band until two such runs are stored). "
        "The same numbers as "
        f"text: <code>commbench store trend</code>.{cut}</p>"
    )


def _changes(data: dict) -> str:
    changed = [r for r in data["runs"] if r.get("change")]
    if not changed:
        return "<p>No run changed MPI library, commbench version or options.</p>"
    several = len({r["system"] for r in data["runs"]}) > 1
    head = ["run", "started", *(["system"] if several else []), "what changed"]
    rows = [
        [esc(r["id"]), esc(r["started"]), *([esc(r["system"])] if several else []),
         esc(r["change"])]
        for r in changed
    ]  # fmt: skip
    return table(
        head,
        rows,
        "Runs that changed (dotted verticals in the figures)",
        text=(2, 3) if several else (2,),
    )


def _band(p: dict) -> str:
    if not p.get("band"):
        return '<span class="na" title="fewer than two baseline runs: no band">&ndash;</span>'
    lo, hi = p["band"]
    why = "a band end beyond the range of numbers"
    return f"{number(lo, '.3f', why)} &ndash; {number(hi, '.3f', why)}"


def _flagged_table(data: dict) -> str:
    several = len({r["system"] for r in data["rows"]}) > 1
    found = [
        (p, row)
        for row in data["rows"]
        for p in row["points"]
        if p.get("flag") in ("slower", "faster")
    ]
    if not found:
        return "<p>No point is flagged: every judged run lies within what its baseline allows.</p>"
    found.sort(key=lambda pr: (pr[0]["started"], pr[0]["run"]), reverse=True)
    shown = found[:MAX_FLAGGED]
    head = ["row", *(["system"] if several else []), "run", "started", "value [usec]",
            "band [usec]", "base runs", "new/center", "q (slower)", "flag"]  # fmt: skip
    rows = [
        [esc(row["label"]), *([esc(row["system"])] if several else []), esc(p["run"]),
         esc(p["started"]), number(p["value"], ".3f", "no value stored for this row"), _band(p),
         esc(p["n"]), number(p.get("ratio"), ".3f", "no ratio: no band center"),
         number(p.get("q_slower"), ".3g", "no q: the run was not judged"),
         f'<span class="{p["flag"]}">{esc(p["flag"])}</span>']
        for p, row in shown
    ]  # fmt: skip
    more = len(found) - len(shown)
    caption = f"Flagged points, newest first: {len(found)}" + (
        f" (the newest {len(shown)} shown; {more} more: {NARROW})" if more else ""
    )
    return table(head, rows, caption, text=(0, 1) if several else (0,))


def _left_out(tables: dict, drawn_tables: list[str], panels: dict[str, list]) -> str:
    """What the figures leave out, and how to narrow the selection."""
    said = []
    missing = [t for t in tables if t not in drawn_tables]
    if missing:
        names = ", ".join(esc(t) for t in missing[:20]) + (
            ", &hellip;" if len(missing) > 20 else ""
        )
        said.append(f"{len(missing)} of {len(tables)} tables are not drawn ({names})")
    partly = [
        f"{esc(t)}: {len(panels[t])} of {len(tables[t])}"
        for t in drawn_tables
        if len(panels[t]) < len(tables[t])
    ]
    if partly:
        said.append(
            f"{len(partly)} drawn tables show only some of their sizes (those with flagged "
            f"points, then spread over the range; each panel is titled with its size): "
            + ", ".join(partly)
        )
    if not said:
        return ""
    return (
        f'<p class="note">Left out of the figures (at most {MAX_FIGURES} tables of '
        f"{MAX_PANELS} sizes each; tables and sizes with flagged points first): "
        + "; ".join(said)
        + f". Their flagged points are in the table below. To see them, {NARROW}.</p>"
    )


def section(data: dict) -> str:
    """The trend section's HTML (check(data) first: it needs runs and rows)."""
    drawn = {r["id"] for r in data["runs"][-MAX_RUNS:]}
    changes = [
        (r["id"], when(r["started"]), r["system"], short_change(r["change"]))
        for r in data["runs"]
        if r.get("change")
    ]
    tables = groups(data)
    chosen = pick(list(tables), MAX_FIGURES, lambda t: any(map(_flagged, tables[t])))
    panels = {t: pick(tables[t], MAX_PANELS, _flagged) for t in chosen}
    out = [_intro(data, drawn), _changes(data), _left_out(tables, chosen, panels)]
    for t in chosen:
        flagged = sum(1 for r in tables[t] for p in r["points"] if p.get("flag") == "slower")
        out += [
            f"<h3>{esc(t)}</h3>",
            f'<figure><img src="{svg_uri(t, panels[t], drawn, changes)}" '
            f'alt="{esc(t)}: value per run over time, with baseline bands">'
            f"<figcaption>{esc(t)}: one panel per message size"
            + (f"; {flagged} points flagged slower" if flagged else "")
            + "</figcaption></figure>",
        ]
    out.append(_flagged_table(data))
    return "\n".join(o for o in out if o)
