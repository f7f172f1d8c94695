"""`commbench fit FILE`: Hockney (or linear) fits of time against size over a results file or
plain CSV, with CIs (no MPI); its options and loading serve `commbench plot` too."""

from __future__ import annotations

import argparse
import json
import sys

from commbench.commands.errors import err
from commbench.commands.parsing import Parser
from commbench.models import hockney
from commbench.views import series as series_mod
from commbench.views.fit_text import fit_series, format_fit

_SUFFIX = {"k": 1024, "m": 2**20}
FIT_USAGE = "commbench fit FILE [--json] [--model hockney|linear] [options] (commbench fit -h)"
PLOT_USAGE = "commbench plot FILE [FILE ...] -o OUT.png|OUT.svg [--no-fit] (commbench plot -h)"


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


def add_fit_options(p: argparse.ArgumentParser) -> None:
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


DESCRIPTIONS = {
    "fit": "Fit t(n) of a results file or CSV (bytes,t_usec).",
    "plot": "Time and rate against message size, with the fitted model, on log axes.",
}


def parser(cmd: str) -> argparse.ArgumentParser:
    usage = FIT_USAGE if cmd == "fit" else PLOT_USAGE
    p = Parser(f"commbench {cmd}", usage, add_help=True, description=DESCRIPTIONS[cmd])
    if cmd == "fit":
        p.add_argument(
            "file", metavar="FILE", help="commbench results JSON, or CSV with columns bytes,t_usec"
        )
        p.add_argument("--json", action="store_true", help="print the fits as JSON")
    else:
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
    add_fit_options(p)
    return p


def load(paths: list[str], names: list[str] | None) -> list[series_mod.Series]:
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


def fit_kw(a: argparse.Namespace) -> dict:
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


def main(argv: list[str]) -> int:
    try:
        a = parser("fit").read(argv)
        kw = fit_kw(a)
        all_series = load([a.file], a.benchmark)
    except ValueError as e:
        return err(str(e), "commbench fit")
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
