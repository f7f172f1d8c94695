"""Fits as text, and the sink that fits each benchmark's table at the end of it.

`commbench run … --fit` adds FitView to the sinks: it sees the records like
every other view, and when a table of a benchmark that opts in
(Benchmark.fit = True) is complete it fits the Hockney model with
automatic breakpoints, prints the result under the table and hands the fits
to the results file ("fits" key). The harness never fits.

`commbench report FILE` reprints those stored fits where the run printed
them: the same FitView replays the records (so it flushes at the same
records) but takes each table's fit from the file instead of fitting again.
Run and report render a fit from the same stored entry (fit.to_dict(), or
the "not possible" entry) with the same function (entry_lines), so their
text is the same.
"""

from __future__ import annotations

import math
import sys
from typing import TextIO

from commbench import records
from commbench.models import hockney
from commbench.models.linear import LineFit
from commbench.views import series as series_mod


def _g(v: float, digits: int = 4) -> str:
    if v is None or not math.isfinite(v):
        return "inf" if v == math.inf else ("-inf" if v == -math.inf else "n/a")
    s = f"{v:.{digits}g}"
    if "e+" in s and abs(v) < 1e9:  # 32800, not 3.28e+04
        s = f"{float(s):.0f}"
    return s


def _est(e: hockney.Estimate, scale: float = 1.0) -> str:
    lo, hi = e.ci
    return f"{_g(e.value / scale)} [{_g(lo / scale)}, {_g(hi / scale)}]"


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [head, *rows]) + 3 for i in range(len(head))]
    return [
        "#   " + "".join(f"{c:<{w}}" for c, w in zip(r, widths)).rstrip() for r in [head, *rows]
    ]


def _region(seg: hockney.FitSegment) -> str:
    return f"{seg.sizes[0]}..{seg.sizes[1]} ({seg.points})"


def describe_breakpoints(fit: hockney.Fit) -> str:
    if fit.breakpoint_source == "none":
        return "breakpoints: none (one line over all sizes)"
    bps = ", ".join(str(b) for b in fit.breakpoints) or "none"
    if fit.breakpoint_source == "user":
        return f"breakpoints (given): {bps}"
    c = fit.criterion or {}
    tried = ", ".join(f"{r['segments']}: {r['bic']:.1f}" for r in c.get("tried", []))
    switch = "; ".join(
        f"between {s.sizes[1]} and {nxt.sizes[0]} bytes"
        for s, nxt in zip(fit.segments, fit.segments[1:])
    )
    where = f" - switch {switch}" if switch else ""
    return f"breakpoints (automatic, {c.get('name', 'BIC')}; segments: BIC {tried}): {bps}{where}"


def format_fit(fit: hockney.Fit, title: str, mb_unit: int = 10**6) -> list[str]:
    """Comment lines ('#') so the IMB text stays machine-readable."""
    mb = "MB/s" if mb_unit == 10**6 else "MiB/s"
    pct = f"{fit.confidence * 100:g}%"
    how = (
        "relative-error weighted least squares"
        if fit.weighting == "relative"
        else "ordinary least squares"
    )
    out = []
    if fit.model == "hockney":
        out.append(f"# Hockney fit of {title}: t = (n + n_1/2)/r_inf, {how}, [{pct} CI]")
        if fit.turnover != 1:
            out.append(
                f"#   turnover {fit.turnover:g}: r_inf is the rate of the {mb} column "
                f"({fit.turnover:g}·n / t)"
            )
        out.append("#   " + describe_breakpoints(fit))
        head = [
            "sizes [bytes] (points)",
            f"r_inf [{mb}]",
            "n_1/2 [bytes]",
            "t0 [usec]",
            "pi0 [MHz]",
            "rms rel. resid.",
        ]
        rows = [
            [
                _region(s),
                _est(s.r_inf, mb_unit),
                _est(s.n_half),
                _est(s.t0),
                _est(s.pi0, 1e6),
                f"{s.rms_relative * 100:.2g}%",
            ]
            for s in fit.segments
        ]
        out += _table(head, rows)
    else:
        out.append(f"# Linear fit of {title}: t = a + b*n, {how}, [{pct} CI]")
        out.append("#   " + describe_breakpoints(fit))
        head = ["sizes [bytes] (points)", "a [usec]", "b [usec/byte]", "rms rel. resid."]
        rows = []
        for s in fit.segments:
            ln = s.line
            a = hockney.Estimate(ln.a, ln.ci_a if ln.dof else (-math.inf, math.inf), "usec")
            b = hockney.Estimate(ln.b, ln.ci_b if ln.dof else (-math.inf, math.inf), "usec/B")
            rows.append([_region(s), _est(a), _est(b), f"{s.rms_relative * 100:.2g}%"])
        out += _table(head, rows)
    for s in fit.segments:
        for w in s.warnings:
            out.append(f"#   note (sizes {s.sizes[0]}..{s.sizes[1]}): {w}")
    return out


def fit_series(s: series_mod.Series, **kw) -> hockney.Fit:
    return hockney.fit(s.n, s.t, turnover=s.turnover, label=s.label, **kw)


def fit_each(
    series: list[series_mod.Series], **kw
) -> list[tuple[series_mod.Series, hockney.Fit | None, str | None]]:
    """Each series with its fit (hockney.fit's keywords, as `commbench fit` takes them), or
    None and why it cannot be fitted: what `commbench plot` draws and the HTML report shows."""
    out = []
    for s in series:
        try:
            out.append((s, fit_series(s, **kw), None))
        except ValueError as e:
            out.append((s, None, str(e)))
    return out


# ---------------------------------------------------------------- stored fits

_FIT_KEYS = {
    "model",
    "formula",
    "weighting",
    "confidence",
    "turnover",
    "breakpoints",
    "breakpoint_source",
    "criterion",
    "segments",
}


def _num(v, missing: float) -> float:
    """JSON has no infinity: to_dict writes an unbounded end as null (-inf low, inf high or a
    value)."""
    return missing if v is None else float(v)


def _estimate(d: dict) -> hockney.Estimate:
    lo, hi = d["ci"]
    return hockney.Estimate(
        _num(d["value"], math.inf), (_num(lo, -math.inf), _num(hi, math.inf)), d["unit"]
    )


def fit_from_dict(d: dict) -> hockney.Fit:
    """The Fit that fit.to_dict() wrote (residuals and all), as far as the text needs it exactly."""
    segments = []
    for sd in d["segments"]:
        ln = sd["line"]
        line = LineFit(
            a=ln["a_usec"],
            b=ln["b_usec_per_byte"],
            se_a=ln["se_a"],
            se_b=ln["se_b"],
            cov_ab=ln["cov_ab"],
            ci_a=(_num(ln["ci_a"][0], -math.inf), _num(ln["ci_a"][1], math.inf)),
            ci_b=(_num(ln["ci_b"][0], -math.inf), _num(ln["ci_b"][1], math.inf)),
            dof=ln["dof"],
            rss=ln["rss"],
            r2=ln["r2"],
            n=sd["points"],
            confidence=d["confidence"],
        )
        segments.append(
            hockney.FitSegment(
                lower=_num(sd["region"][0], -math.inf),
                upper=_num(sd["region"][1], math.inf),
                sizes=(sd["sizes"][0], sd["sizes"][1]),
                points=sd["points"],
                line=line,
                turnover=d["turnover"],
                t0=_estimate(sd["t0"]),
                r_inf=_estimate(sd["r_inf"]),
                n_half=_estimate(sd["n_half"]),
                pi0=_estimate(sd["pi0"]),
                residuals=list(sd.get("residuals", [])),
                rms_relative=sd["rms_relative_residual"],
                warnings=list(sd.get("warnings", [])),
            )
        )
    return hockney.Fit(
        d["model"],
        segments,
        list(d["breakpoints"]),
        d["breakpoint_source"],
        d["weighting"],
        d["confidence"],
        d["turnover"],
        d.get("criterion"),
        {k: v for k, v in d.items() if k not in _FIT_KEYS},
    )


def entry_lines(entry: dict, title: str, mb_unit: int = 10**6) -> list[str]:
    """The text of one "fits" entry of a results file:
    a fit (fit.to_dict()) or why there is none."""
    if "error" in entry:
        return [f"# Hockney fit of {title}: not possible: {entry['error']}"]
    return format_fit(fit_from_dict(entry), title, mb_unit)


class FitView:
    """Sink: fit every finished table of an opted-in benchmark (automatic breakpoints).

    With stored (the "fits" of a results file) it fits nothing: each table's
    fit is the stored entry of the same series (benchmark, #processes, mode,
    groups; the first not yet used), printed where the run printed it.
    """

    def __init__(
        self,
        out: TextIO = sys.stdout,
        fittable: set[str] | None = None,
        results=None,
        model: str = "hockney",
        stored: list | None = None,
        breakpoints: tuple[int, ...] = (),
    ):
        self.out = out
        self.breakpoints = tuple(breakpoints)  # --breakpoint: given ones instead of automatic
        self.fittable = fittable
        self.results = results  # a JsonResults (add_section) or None
        self.model = model
        self.stored = None if stored is None else list(stored)
        self.mb_unit = 10**6
        self.pending: list[records.Measurement] = []
        self.key: tuple | None = None
        self.fits: list[dict] = []

    def start(self, header: dict) -> None:
        self.mb_unit = header.get("config", {}).get("mb_unit", self.mb_unit)

    def record(self, rec: records.Measurement) -> None:
        if rec.table_key != self.key:
            self._flush()
            self.key = rec.table_key
        if self.fittable is None or rec.benchmark in self.fittable:
            self.pending.append(rec)

    def finish(self, summary: dict) -> None:
        self._flush()
        if self.results is not None:
            self.results.add_section("fits", self.fits)

    def _entry(self, s: series_mod.Series) -> dict | None:
        if self.stored is not None:
            return self._take_stored(s.label)
        try:
            bps = [
                b for b in self.breakpoints if s.n.min() < b < s.n.max()
            ]  # those inside this table
            return fit_series(
                s, model=self.model, auto=not self.breakpoints, breakpoints=bps
            ).to_dict()
        except ValueError as e:
            return {**s.label, "model": self.model, "error": str(e)}

    def _take_stored(self, label: dict) -> dict | None:
        for i, e in enumerate(self.stored):
            if isinstance(e, dict) and all(e.get(k) == v for k, v in label.items()):
                return self.stored.pop(i)
        return None  # the run printed no fit for this table

    def _flush(self) -> None:
        recs, self.pending = self.pending, []
        for s in series_mod.from_records(recs):
            entry = self._entry(s)
            if entry is None:
                continue
            try:
                lines = entry_lines(entry, s.title(), self.mb_unit)
            except (KeyError, IndexError, TypeError, ValueError) as e:
                if self.stored is None:
                    raise
                # a stored entry edited by hand
                lines = [
                    f"# Hockney fit of {s.title()}: stored fit unreadable ({type(e).__name__}: {e})"
                ]
            self.out.write("\n" + "\n".join(lines) + "\n")
            self.fits.append(entry)
        self.out.flush()


def fit_sink(cfg, sinks: list) -> FitView:
    """The FitView of a run: the family's opted-in benchmarks, fits into the results file."""
    from commbench import suites
    from commbench.views.results_file import JsonResults

    fam = suites.family(cfg.family)
    fittable = {b.name for b in fam.benchmarks if b.fit}
    results = next((s for s in sinks if isinstance(s, JsonResults)), None)
    return FitView(sys.stdout, fittable, results, breakpoints=cfg.breakpoints)


def report_sink(doc: dict, out: TextIO = sys.stdout) -> FitView | None:
    """The FitView of `commbench report`: the stored fits of a `--fit` run, or None (no "fits")."""
    stored = doc.get("fits")
    if not isinstance(stored, list):
        return None
    return FitView(out, {e.get("benchmark") for e in stored if isinstance(e, dict)}, stored=stored)
