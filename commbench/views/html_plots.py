"""The HTML report's figures: time and rate against size with the Hockney fits.

One figure per table (benchmark, process count, mode, groups), every run's
series of that table in it: `commbench plot`'s figure (views.plot) with the
fits `commbench fit FILE --auto-breakpoints` computes (views.fit_text), or
the fits a `--fit` run stored in its file. Under each figure the fits as
`commbench fit` prints them. The figure is SVG in a data: URI, so the page
needs no other file and its ids cannot clash with another figure's.
"""

from __future__ import annotations

import base64
import io

from commbench.views import fit_text
from commbench.views import series as series_mod
from commbench.views.html_sections import esc

FIT = {"model": "hockney", "auto": True}  # = commbench fit FILE --auto-breakpoints


def _stored(doc: dict, s: series_mod.Series) -> dict | None:
    """The fit a --fit run stored for this series' table, if any."""
    for e in doc.get("fits") or []:
        if isinstance(e, dict) and all(e.get(k) == v for k, v in (("benchmark", s.benchmark), ("np", s.np),
                                                                    ("mode", s.mode), ("groups", s.groups))):
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


def _fit_text(doc: dict, s: series_mod.Series, fit, why: str | None, source: str, several: bool) -> str:
    title = s.title() + (f" - {s.source}" if several else "")
    if fit is None:
        return f"# Hockney fit of {title}: not possible: {why}"
    mb = (doc.get("config") or {}).get("mb_unit", 10**6)
    return "\n".join([*fit_text.format_fit(fit, title, mb), f"#   fit: {source}"])


def _tables(runs: list) -> dict[tuple, list]:
    """Table key -> [(run, series)], in the order the tables first appear."""
    out: dict[tuple, list] = {}
    for run in runs:
        for s in series_mod.from_records(run.records, source=run.label):
            out.setdefault((s.benchmark, s.np, s.mode, s.groups), []).append((run, s))
    return out


def plots(runs: list) -> str | None:
    """A figure per table with sizes, every run's series of it overlaid; None without any."""
    groups = _tables(runs)
    if not groups:
        return None
    several = len(runs) > 1
    out = ["<p>Left: the reported time (t_max) against message size, bars t_min .. t_max over the ranks, "
           "and the fitted Hockney lines t = (n + n_1/2) / r_inf per region. Right: the rate with r_inf "
           "dotted and n_1/2 marked. Dashed verticals: breakpoints (protocol switches). Zero sizes are "
           "fitted but not drawn (log axes).</p>"]
    for members in groups.values():
        items, texts = [], []
        for run, s in members:
            fit, why, source = fit_of(run.doc, s)
            items.append((s, fit))
            texts.append(_fit_text(run.doc, s, fit, why, source, several))
        title = members[0][1].title()
        out.append(f"<h3>{esc(title)}</h3>\n<figure><img src=\"{svg_uri(items, several)}\" "
                   f"alt=\"{esc(title)}: time and rate against message size\">"
                   f"<figcaption>{esc(title)}: {', '.join(esc(r.label) for r, _ in members)}</figcaption></figure>"
                   f"\n<pre>{esc(chr(10).join(texts))}</pre>")
    return "\n".join(out)
