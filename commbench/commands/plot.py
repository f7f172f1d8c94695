"""`commbench plot FILE [FILE ...] -o OUT`: time and rate against size with the fits (PNG or
SVG); an overhead run's Figure 1 (seed 002) and a net run's heatmaps (no MPI)."""

from __future__ import annotations

import sys
from functools import partial

from commbench.commands.errors import err
from commbench.commands.fit import fit_kw, load, parser
from commbench.views.fit_text import fit_each

_err = partial(err, who="commbench plot")


def main(argv: list[str]) -> int:
    try:
        a = parser("plot").read(argv)
    except ValueError as e:
        return _err(str(e))
    if not a.output.lower().endswith((".png", ".svg")):
        return _err(f"-o {a.output!r}: the figure must be a .png or .svg file")
    doc = _overhead(a.files[0]) if len(a.files) == 1 else None
    if doc is not None:
        return _plot_overhead(doc, a.files[0], a.output)
    from commbench.views import heatmap  # a net (cluster diagnosis) run: its heatmaps

    if len(a.files) == 1 and (net := heatmap.is_net(a.files[0])) is not None:
        return heatmap.cmd(net, a.files[0], a.output)
    try:
        kw = fit_kw(a)
        all_series = load(a.files, a.benchmark)
    except ValueError as e:
        return _err(str(e))
    from commbench.views import plot

    several = len(a.files) > 1
    items = [(s, None) for s in all_series]
    if not a.no_fit:
        fitted = fit_each(all_series, **kw)
        for s, _, why in fitted:
            if why:
                print(f"commbench plot: {s.title()}: not fitted: {why}", file=sys.stderr)
        items = [(s, f) for s, f, _ in fitted]
    items = plot.drawable(items)
    if not items:
        return _err(
            "no measured row has a size > 0 to draw against the log size "
            "axis (0-byte rows only, or the other sizes did not measure)"
        )
    try:
        plot.figure(items, a.output, show_source=several)
    except OSError as e:
        return _err(f"cannot write {a.output!r} ({e.strerror})")
    print(f"commbench: figure written to {a.output}", file=sys.stderr)
    return 0


def _overhead(path: str) -> dict | None:
    """The results document of an overhead run (seed 002), else None."""
    from commbench.views import results_file

    try:
        doc, _ = results_file.read(path)
    except ValueError:
        return None  # the series reader says what is wrong with it
    return doc if doc.get("family", {}).get("name") == "overhead" else None


def _plot_overhead(doc: dict, path: str, out: str) -> int:
    """Seed 002's Figure 1 from an overhead results file: Table 1 and its fitted lines."""
    from commbench.models.overhead import analyse
    from commbench.suites.overhead import OverheadSettings
    from commbench.views import plot, results_file

    try:
        st = OverheadSettings.of(doc.get("config", {}).get("params", {}))
        decs = analyse(results_file.read(path)[1], st.statistic, st.baseline)["decomposition"]
    except ValueError as e:
        return _err(str(e))
    if not decs:
        return _err(
            f"{path}: no size with all six measured combinations (a run of "
            "--parts decomposition gives them)"
        )
    try:
        plot.overhead_figure(decs, out)
    except OSError as e:
        return _err(f"cannot write {out!r} ({e.strerror})")
    print(f"commbench: figure written to {out} (seed 002 Figure 1)", file=sys.stderr)
    return 0
