"""`commbench fit` and `commbench plot`: models over results files or plain CSV (no MPI)."""

from __future__ import annotations

import argparse
import json
import sys

from commbench.models import hockney
from commbench.views import series as series_mod
from commbench.views.fit_text import fit_each, fit_series, format_fit

_SUFFIX = {"k": 1024, "m": 2**20}


def _size(s: str) -> int:
    t = s.strip().lower()
    mult = _SUFFIX.get(t[-1:], 1)
    digits = t[:-1] if mult != 1 else t
    if not digits.isdigit():
        raise argparse.ArgumentTypeError(
            f"{s!r} is not a message size (accepted: a non-negative integer "
            "of bytes, optional k or m suffix: 65536, 64k)"
        )
    return int(digits) * mult


def _confidence(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        v = -1.0
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(
            f"{s!r}: the confidence level must lie strictly between 0 and 1 (e.g. 0.95)"
        )
    return v


def _segments(s: str) -> int:
    if not s.isdigit() or int(s) < 1:
        raise argparse.ArgumentTypeError(
            f"{s!r}: the number of segments must be a positive integer"
        )
    return int(s)


def _add_fit_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--benchmark",
        action="append",
        metavar="NAME",
        help="only this benchmark (repeatable; default: every table with sizes)",
    )
    p.add_argument(
        "--breakpoint",
        action="append",
        type=_size,
        metavar="N",
        default=[],
        help="region boundary: sizes <= N in one fit, > N in the next (repeatable)",
    )
    p.add_argument(
        "--auto-breakpoints",
        action="store_true",
        help="choose number and position of segments by BIC (protocol switches)",
    )
    p.add_argument(
        "--max-segments",
        type=_segments,
        default=4,
        metavar="K",
        help="most segments automatic detection tries (default 4)",
    )
    p.add_argument(
        "--model",
        choices=hockney.MODELS,
        default="hockney",
        help="hockney: r_inf, n_1/2, t0, pi0 (default); linear: t = a + b*n",
    )
    p.add_argument(
        "--weights",
        choices=hockney.WEIGHTINGS,
        default="relative",
        help="relative: minimise relative residuals (default); uniform: ordinary least squares",
    )
    p.add_argument(
        "--confidence",
        type=_confidence,
        default=0.95,
        metavar="P",
        help="confidence level of the intervals (default 0.95)",
    )


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # the same form as every other commbench error
        print(
            f"commbench {self.prog.split()[-1]}: error: {message}\n{self.format_usage()}",
            file=sys.stderr,
            end="",
        )
        raise SystemExit(2)


def _parser(cmd: str) -> argparse.ArgumentParser:
    if cmd == "fit":
        p = _Parser(
            prog="commbench fit", description="Fit t(n) of a results file or CSV (bytes,t_usec)."
        )
        p.add_argument(
            "file", metavar="FILE", help="commbench results JSON, or CSV with columns bytes,t_usec"
        )
        p.add_argument("--json", action="store_true", help="print the fits as JSON")
    else:
        p = _Parser(
            prog="commbench plot",
            description="Time and rate against message size, with the fitted model, on log axes.",
        )
        p.add_argument(
            "files",
            nargs="+",
            metavar="FILE",
            help="results JSON or CSV files (several: one figure)",
        )
        p.add_argument(
            "-o", "--output", required=True, metavar="OUT", help="figure file: .png or .svg"
        )
        p.add_argument("--no-fit", action="store_true", help="measured points only")
    _add_fit_options(p)
    return p


def _load(paths: list[str], names: list[str] | None) -> list[series_mod.Series]:
    out = []
    for path in paths:
        found = series_mod.load(path)
        chosen = series_mod.select(found, names)
        if not chosen:
            have = sorted({s.benchmark for s in found})
            if names:
                raise ValueError(
                    f"{path}: no benchmark {', '.join(names)} with message sizes "
                    f"(the file has: {', '.join(have) or 'none'})"
                )
            raise ValueError(f"{path}: {series_mod.why_none(path)}")
        out += chosen
    return out


def _fit_kw(a: argparse.Namespace) -> dict:
    if a.breakpoint and a.auto_breakpoints:
        raise ValueError(
            "--breakpoint and --auto-breakpoints exclude "
            "each other (give positions, or let them be found)"
        )
    return {
        "model": a.model,
        "breakpoints": a.breakpoint,
        "auto": a.auto_breakpoints,
        "weighting": a.weights,
        "confidence": a.confidence,
        "max_segments": a.max_segments,
    }


def cmd_fit(argv: list[str]) -> int:
    a = _parser("fit").parse_args(argv)
    try:
        kw = _fit_kw(a)
        all_series = _load([a.file], a.benchmark)
    except ValueError as e:
        print(f"commbench fit: error: {e}", file=sys.stderr)
        return 2
    fits, failed = [], 0
    for s in all_series:
        try:
            f = fit_series(s, **kw)
        except ValueError as e:
            failed += 1
            print(f"commbench fit: {s.title()}: {e}", file=sys.stderr)
            fits.append({**s.label, "model": a.model, "error": str(e)})
            continue
        fits.append(f)
        if not a.json:
            print("\n".join(format_fit(f, s.title())))
            print()
    if a.json:
        doc = {"source": a.file, "fits": [f if isinstance(f, dict) else f.to_dict() for f in fits]}
        json.dump(doc, sys.stdout, indent=1, allow_nan=False)
        print()
    return 1 if failed == len(all_series) else 0


def cmd_plot(argv: list[str]) -> int:
    a = _parser("plot").parse_args(argv)
    if not a.output.lower().endswith((".png", ".svg")):
        print(
            f"commbench plot: error: -o {a.output!r}: the figure must be a .png or .svg file",
            file=sys.stderr,
        )
        return 2
    doc = _overhead(a.files[0]) if len(a.files) == 1 else None
    if doc is not None:
        return _plot_overhead(doc, a.files[0], a.output)
    from commbench.views import heatmap  # a net (cluster diagnosis) run: its heatmaps

    if len(a.files) == 1 and (net := heatmap.is_net(a.files[0])) is not None:
        return heatmap.cmd(net, a.files[0], a.output)
    try:
        kw = _fit_kw(a)
        all_series = _load(a.files, a.benchmark)
    except ValueError as e:
        print(f"commbench plot: error: {e}", file=sys.stderr)
        return 2
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
        print(
            "commbench plot: error: no measured row has a size > 0 to draw against the log size "
            "axis (0-byte rows only, or the other sizes did not measure)",
            file=sys.stderr,
        )
        return 2
    try:
        plot.figure(items, a.output, show_source=several)
    except OSError as e:
        print(f"commbench plot: error: cannot write {a.output!r} ({e.strerror})", file=sys.stderr)
        return 2
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
    from commbench.suites.overhead import Settings
    from commbench.views import plot, results_file

    try:
        st = Settings.of(doc.get("config", {}).get("params", {}))
        decs = analyse(results_file.read(path)[1], st.statistic, st.baseline)["decomposition"]
    except ValueError as e:
        print(f"commbench plot: error: {e}", file=sys.stderr)
        return 2
    if not decs:
        print(
            f"commbench plot: error: {path}: no size with all six measured combinations (a run of "
            "--parts decomposition gives them)",
            file=sys.stderr,
        )
        return 2
    try:
        plot.overhead_figure(decs, out)
    except OSError as e:
        print(f"commbench plot: error: cannot write {out!r} ({e.strerror})", file=sys.stderr)
        return 2
    print(f"commbench: figure written to {out} (seed 002 Figure 1)", file=sys.stderr)
    return 0
