"""The HTML report's figures: time and rate against size with the Hockney fits.

One figure per table (benchmark, process count, mode, groups), every run's
series of that table in it (PER_FIGURE at most: with more runs, one figure
per PER_FIGURE of them, so that the legend stays readable): `commbench
plot`'s figure (views.plot) with the fits `commbench fit FILE
--auto-breakpoints` computes (views.fit_text), or the fits a `--fit` run
stored in its file. Under the figures the fits as a table: per run and
region the estimates `commbench fit` prints, each with its confidence
interval under it; an end of an interval that is unbounded (too few points,
too much scatter) says so in a word with a title, never "inf". The figure is
SVG in a data: URI, so the page needs no other file and its ids cannot clash
with another figure's. Names too long for the figure's legend are shortened
there (…); the heading above the figure gives them whole.
"""

from __future__ import annotations

import base64
import dataclasses
import io
import math

from commbench.models import hockney
from commbench.views import fit_text
from commbench.views import series as series_mod
from commbench.views.html_sections import esc, mark_nonfinite, nonfinite, table

FIT = {"model": "hockney", "auto": True}  # = commbench fit FILE --auto-breakpoints
PER_FIGURE = 8  # series in one figure
LEGEND_NAME = 40  # characters of a benchmark name, mode or run label the legend shows


def _stored(doc: dict, s: series_mod.Series) -> dict | None:
    """The fit a --fit run stored for this series' table, if any."""
    for e in doc.get("fits") or []:
        if isinstance(e, dict) and all(
            e.get(k) == v
            for k, v in (
                ("benchmark", s.benchmark),
                ("np", s.np),
                ("mode", s.mode),
                ("groups", s.groups),
            )
        ):
            return e
    return None


def fit_of(doc: dict, s: series_mod.Series):
    """(Fit or None, why not, where it came from) for one series."""
    entry = _stored(doc, s)
    if entry is not None:
        if "error" in entry:
            return None, str(entry["error"]), "stored by the run (--fit)"
        try:
            return fit_text.fit_from_dict(entry), None, "stored by the run (--fit)"
        except (KeyError, IndexError, TypeError, ValueError):
            pass  # edited by hand: fitted again below
    ((_, fit, why),) = fit_text.fit_each([s], **FIT)
    return fit, why, "automatic breakpoints (commbench fit --auto-breakpoints)"


def svg_uri(items: list, show_source: bool) -> str:
    from commbench.views import plot

    buf = io.BytesIO()
    plot.figure(items, buf, show_source=show_source, fmt="svg")
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def short(text: str, most: int = LEGEND_NAME) -> str:
    """text, or its start and end around an ellipsis when it is longer than most characters."""
    if len(text) <= most:
        return text
    tail = most // 3
    return text[: most - tail - 1] + "\u2026" + text[-tail:]


def _for_legend(s: series_mod.Series) -> series_mod.Series:
    return dataclasses.replace(
        s,
        benchmark=short(s.benchmark),
        mode=short(s.mode, LEGEND_NAME // 2),
        source=short(s.source),
    )


# ---------------------------------------------------------------- the fits as a table


def _g(v: float) -> str:
    """As fit_text prints an estimate: 4 significant digits, 32800 rather than 3.28e+04."""
    s = f"{v:.4g}"
    return f"{float(s):.0f}" if "e+" in s and abs(v) < 1e9 else s


_VALUE = "the fit gives no finite value here (a flat or falling line: noise dominates the region)"


def _estimate(e, scale: float, pct: str) -> str:
    """The value, and under it its confidence interval; an end that is unbounded said in a word."""

    def end(v: float, which: str) -> str:
        if math.isfinite(v):
            return esc(_g(v / scale))
        return nonfinite(
            v,
            f"the {pct} confidence interval has no {which} bound: too few points in the "
            "region, or too much scatter, to bound it",
            word="unbounded",
        )

    value = esc(_g(e.value / scale)) if math.isfinite(e.value) else nonfinite(e.value, _VALUE)
    lo, hi = e.ci
    return f'{value}<br><span class="ci">[{end(lo, "lower")}, {end(hi, "upper")}]</span>'


def _columns(model: str, mb: str) -> list[tuple[str, str, float | None]]:
    """(heading, attribute of a segment, scale; None: the run's MB unit) of the estimates of a
    model."""
    if model == "hockney":
        return [
            (f"r_inf [{mb}]", "r_inf", None),
            ("n_1/2 [bytes]", "n_half", 1.0),
            ("t0 [usec]", "t0", 1.0),
            ("pi0 [MHz]", "pi0", 1e6),
        ]
    return [("a [usec]", "a", 1.0), ("b [usec/byte]", "b", 1.0)]


def _segment_estimate(seg, attr: str):
    if attr in ("a", "b"):
        ln = seg.line
        ci = (ln.ci_a if attr == "a" else ln.ci_b) if ln.dof else (-math.inf, math.inf)
        return hockney.Estimate(getattr(ln, attr), ci, "")
    return getattr(seg, attr)


def _fit_rows(label: str, fit, why: str | None, cols: list, mb_unit: int, width: int) -> list:
    if fit is None:
        return [
            f'<tr><td class=text>{label}</td><td class=text colspan="{width - 1}">'
            f"not possible: {esc(why)}</td></tr>"
        ]
    pct = f"{fit.confidence * 100:g}%"
    out = []
    for i, seg in enumerate(fit.segments):
        cells = [
            _estimate(_segment_estimate(seg, attr), mb_unit if scale is None else scale, pct)
            for _, attr, scale in cols
        ]
        rms = seg.rms_relative * 100
        out.append(
            [
                label if i == 0 else "",
                esc(f"{seg.sizes[0]}..{seg.sizes[1]}"),
                esc(seg.points),
                *cells,
                esc(f"{rms:.2g}%") if math.isfinite(rms) else nonfinite(rms, _VALUE),
            ]
        )
    return out


def _how(fit, source: str, mb: str) -> str:
    """How one fit was made, in the words of `commbench fit` (its numbers as the page shows
    them)."""
    weighting = (
        "relative-error weighted least squares"
        if fit.weighting == "relative"
        else "ordinary least squares"
    )
    turnover = (
        (
            f"; turnover {fit.turnover:g}: r_inf is the rate of the {mb} column "
            f"({fit.turnover:g}\u00b7n / t)"
        )
        if fit.turnover != 1 and fit.model == "hockney"
        else ""
    )
    text = (
        esc(f"{weighting}, [{fit.confidence * 100:g}% CI]{turnover}; ")
        + mark_nonfinite(
            esc(fit_text.describe_breakpoints(fit)), "a criterion of a fit without residuals"
        )
        + esc(f"; fit: {source}")
    )
    notes = [
        esc(f"note (sizes {s.sizes[0]}..{s.sizes[1]}): {w}")
        for s in fit.segments
        for w in s.warnings
    ]
    return "; ".join([text, *notes])


def fit_table(members: list, fits: list, mb_unit: int) -> str:
    """The fits of one table's series: a row per run and region,
    the estimates with their intervals."""
    mb = "MB/s" if mb_unit == 10**6 else "MiB/s"
    model = next((f.model for f, _, _ in fits if f is not None), "hockney")
    cols = _columns(model, mb)
    several = len(members) > 1
    head = ["run", "sizes [bytes]", "points", *(h for h, _, _ in cols), "rms rel. resid."]
    rows, how = [], []
    for (run, _), (fit, why, source) in zip(members, fits):
        label = esc(run.label)
        rows += _fit_rows(label, fit, why, cols, mb_unit, len(head))
        if fit is not None:
            how.append(f"<li>{label + ': ' if several else ''}{_how(fit, source, mb)}</li>")
    formula = "t = (n + n_1/2) / r_inf" if model == "hockney" else "t = a + b*n"
    pct = next((f"{f.confidence * 100:g}% " for f, _, _ in fits if f is not None), "")
    caption = (
        f"{'Hockney' if model == 'hockney' else 'Linear'} fits, {formula} per region; under each "
        f"value its {pct}confidence interval"
    )
    return table(head, rows, caption, text=(0,)) + (
        f'<ul class="fits">{"".join(how)}</ul>' if how else ""
    )


# ---------------------------------------------------------------- the section


def _tables(runs: list) -> dict[tuple, list]:
    """Table key -> [(run, series)], in the order the tables first appear."""
    out: dict[tuple, list] = {}
    for run in runs:
        for s in series_mod.from_records(run.records, source=run.label):
            out.setdefault((s.benchmark, s.np, s.mode, s.groups), []).append((run, s))
    return out


def _figures(title: str, members: list, fits: list, several: bool) -> list[str]:
    from commbench.views import plot

    out = []
    for i in range(0, len(members), PER_FIGURE):
        part = members[i : i + PER_FIGURE]
        items = [
            (_for_legend(s), fit) for (_, s), (fit, _, _) in zip(part, fits[i : i + PER_FIGURE])
        ]
        if not plot.drawable(items):
            continue
        which = (
            f" (runs {i + 1}&ndash;{i + len(part)} of {len(members)})"
            if len(members) > PER_FIGURE
            else ""
        )
        out.append(
            f'<figure><img src="{svg_uri(items, several)}" '
            f'alt="{esc(title)}: time and rate against message size">'
            f"<figcaption>{esc(title)}{which}: "
            f"{', '.join(esc(r.label) for r, _ in part)}</figcaption>"
            "</figure>"
        )
    return out


def plots(runs: list) -> str | None:
    """A figure per table with sizes, every run's series of it overlaid; None without any."""
    groups = _tables(runs)
    if not groups:
        return None
    several = len(runs) > 1
    out = [
        (
            "<p>Left: the reported time (t_max) against message size, bars t_min .. t_max over "
            "the ranks, and the fitted Hockney lines t = (n + n_1/2) / r_inf per region. Right: "
            "the rate with r_inf dotted and n_1/2 marked. Dashed verticals: breakpoints "
            "(protocol switches). Zero sizes are fitted but not drawn (log axes). With more than "
            f"{PER_FIGURE} runs, one figure per {PER_FIGURE} of them. Under the figures, the fits "
            "as <code>commbench fit</code> gives them.</p>"
        )
    ]
    for members in groups.values():
        fits = [fit_of(run.doc, s) for run, s in members]
        title = members[0][1].title()
        mb_unit = (members[0][0].doc.get("config") or {}).get("mb_unit", 10**6)
        out += [
            f"<h3>{esc(title)}</h3>",
            *_figures(title, members, fits, several),
            fit_table(members, fits, mb_unit),
        ]
    return "\n".join(out)
