"""The Hockney model t(n) = (n + n_1/2) / r_inf, piecewise, with confidence intervals (no MPI).

Seed 000: a message channel is described by two parameters, the asymptotic
rate r_inf and the half-performance length n_1/2, fitted by least squares to
t = (n + n_1/2) / r_inf, i.e. the straight line t = t0 + n / r_inf with
t0 = n_1/2 / r_inf; pi0 = r_inf / n_1/2 is the specific performance. Where
the library switches protocol the line breaks, and each region gets its own
fit (seed 000, the iPSC/860 at 100 bytes).

Method (docs/models.md says more):

* Weighting. Times over a size sweep span five orders of magnitude and their
  scatter is roughly proportional to the time itself, so ordinary least
  squares would be decided by the few largest messages and t0 would come out
  with an error larger than itself. We minimise RELATIVE residuals
  (t_i - f_i) / f_i: weighted least squares with weights 1/f_i^2, iterated
  (IRLS) from weights 1/t_i^2 until the fitted values f_i settle. Weights from
  the fitted values rather than the observations avoid favouring points whose
  noise happened to make them small. "uniform" (ordinary least squares) is
  available for data with constant absolute error (seed 002's tables).
* Intervals. The line's covariance comes from the weighted residual scatter
  (commbench.models.linear.fit_line); quantiles are Student's t with n - 2
  degrees of freedom. t0 is the intercept: its interval is direct. r_inf and
  pi0 are monotone functions of one coefficient (F/b and F/a), so their
  intervals are the exact images of the coefficient's interval. n_1/2 = a/b is
  a ratio of two correlated estimates: its interval is Fieller's, which uses
  the covariance of a and b and, unlike the delta method, is not forced to be
  symmetric (and is unbounded when the slope is not significantly non-zero).
* Turnover F. Rates follow the records: r = F·n / t (the Mbytes/sec column),
  so r_inf = F / b. n_1/2 (in message bytes) and t0 do not depend on F;
  pi0 = r_inf / n_1/2 = F / t0 is the slope of the rate at small n.
* Breakpoints. A breakpoint B puts sizes n <= B in one region and n > B in
  the next. Automatic detection places up to max_segments contiguous segments
  by dynamic programming over the sorted sizes (minimum total relative RSS for
  each number of segments k) and chooses k by the Bayesian information
  criterion BIC = N ln(RSS/N) + p ln N with p = 2k + 3(k - 1): two
  coefficients per segment and three for each breakpoint position (see
  BREAKPOINT_COST), which charges every extra segment.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from commbench.models.linear import LineFit, fit_line, t_quantile

WEIGHTINGS = ("relative", "uniform")
MODELS = ("hockney", "linear")
IRLS_ITERATIONS = 50
INF = math.inf
# A breakpoint's position is chosen among ~N candidates, which buys more fit than
# one regular parameter; charged as 3 parameters, one-regime data of 24 sizes is
# split by chance in ~5% of trials and a real protocol switch is still found in
# ~97% (simulation in docs/models.md). Plain BIC (1 per position) splits ~25%.
BREAKPOINT_COST = 3


@dataclass(frozen=True)
class Estimate:
    value: float
    ci: tuple[float, float]
    unit: str

    def to_dict(self) -> dict:
        return {
            "value": _finite(self.value),
            "ci": [_finite(self.ci[0]), _finite(self.ci[1])],
            "unit": self.unit,
        }


@dataclass
class FitSegment:
    """One region's line t = a + b·n (µs) and what follows from it."""

    lower: float  # region: lower < n <= upper (bytes); -inf / inf at the ends
    upper: float
    sizes: tuple[int, int]  # smallest and largest measured size in it
    points: int
    line: LineFit
    turnover: float
    t0: Estimate  # µs
    r_inf: Estimate  # bytes/s
    n_half: Estimate  # bytes
    pi0: Estimate  # 1/s
    residuals: list[dict] = field(default_factory=list)
    rms_relative: float = 0.0
    warnings: list[str] = field(default_factory=list)

    def t(self, n) -> np.ndarray:
        """Fitted time in µs."""
        return self.line.predict(n)

    def rate(self, n) -> np.ndarray:
        """Fitted rate F·n / t in bytes/s."""
        n = np.asarray(n, dtype=float)
        return self.turnover * n / (self.t(n) * 1e-6)

    def to_dict(self) -> dict:
        ln = self.line
        return {
            "region": [_finite(self.lower), _finite(self.upper)],
            "sizes": list(self.sizes),
            "points": self.points,
            "line": {
                "a_usec": ln.a,
                "b_usec_per_byte": ln.b,
                "ci_a": list(ln.ci_a if ln.dof else (None, None)),
                "ci_b": list(ln.ci_b if ln.dof else (None, None)),
                "se_a": ln.se_a,
                "se_b": ln.se_b,
                "cov_ab": ln.cov_ab,
                "dof": ln.dof,
                "rss": ln.rss,
                "r2": ln.r2,
            },
            "t0": self.t0.to_dict(),
            "r_inf": self.r_inf.to_dict(),
            "n_half": self.n_half.to_dict(),
            "pi0": self.pi0.to_dict(),
            "rms_relative_residual": self.rms_relative,
            "residuals": self.residuals,
            "warnings": list(self.warnings),
        }


@dataclass
class Fit:
    """A piecewise fit of one series (one table of one benchmark)."""

    model: str
    segments: list[FitSegment]
    breakpoints: list[int]  # the largest size of every region but the last
    breakpoint_source: str  # "none" | "user" | "auto"
    weighting: str
    confidence: float
    turnover: float
    criterion: dict | None = None  # automatic detection: BIC per number of segments
    label: dict = field(default_factory=dict)  # benchmark, np, mode, source file …

    def to_dict(self) -> dict:
        return {
            **self.label,
            "model": self.model,
            "formula": "t = (n + n_half) / r_inf = t0 + n / r_inf"
            if self.model == "hockney"
            else "t = a + b*n",
            "weighting": self.weighting,
            "confidence": self.confidence,
            "turnover": self.turnover,
            "breakpoints": list(self.breakpoints),
            "breakpoint_source": self.breakpoint_source,
            "criterion": self.criterion,
            "segments": [s.to_dict() for s in self.segments],
        }


def _finite(v: float) -> float | None:
    """JSON has no infinity: unbounded interval ends are written as null."""
    return float(v) if math.isfinite(v) else None


# ---------------------------------------------------------------- one line


def _prepare(n, t) -> tuple[np.ndarray, np.ndarray]:
    n = np.asarray(n, dtype=float)
    t = np.asarray(t, dtype=float)
    if n.shape != t.shape or n.ndim != 1:
        raise ValueError("sizes and times must be 1-D sequences of the same length")
    if not (np.all(np.isfinite(n)) and np.all(np.isfinite(t))):
        raise ValueError("sizes and times must be finite numbers")
    if np.any(n < 0):
        raise ValueError("message sizes must be >= 0")
    if np.any(t <= 0):
        if not np.any(t):
            raise ValueError(
                "every time is 0: nothing to fit (below the timer's resolution, or no repetition "
                "was timed)"
            )
        raise ValueError("times must be > 0 (a relative-error fit divides by them)")
    order = np.argsort(n, kind="stable")
    return n[order], t[order]


def _wls2(n: np.ndarray, t: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """Closed-form weighted least squares of t = a + b·n (fast: used in the search)."""
    sw, swn, swt = w.sum(), (w * n).sum(), (w * t).sum()
    nbar, tbar = swn / sw, swt / sw
    dn = n - nbar
    sxx = (w * dn * dn).sum()
    b = (w * dn * (t - tbar)).sum() / sxx
    return tbar - b * nbar, b


def _irls_weights(n: np.ndarray, t: np.ndarray, weighting: str) -> np.ndarray:
    """Weights 1/f^2 with f the fitted times (relative), or 1 (uniform)."""
    if weighting == "uniform":
        return np.ones_like(t)
    if weighting != "relative":
        raise ValueError(f"weighting must be one of {'|'.join(WEIGHTINGS)}, got {weighting!r}")
    w = 1.0 / t**2
    prev = None
    for _ in range(IRLS_ITERATIONS):
        a, b = _wls2(n, t, w)
        f = a + b * n
        if np.any(f <= 0):  # a line that goes negative inside the data: keep the last weights
            break
        w = 1.0 / f**2
        if (
            prev is not None
            and abs(a - prev[0]) <= 1e-9 * abs(a)
            and abs(b - prev[1]) <= 1e-9 * abs(b)
        ):
            break
        prev = (a, b)
    return w


def weighted_rss(n: np.ndarray, t: np.ndarray, weighting: str = "relative") -> float:
    """Weighted RSS of the fitted line: the sum of squared relative residuals under
    relative weighting, of absolute ones under uniform."""
    w = _irls_weights(n, t, weighting)
    a, b = _wls2(n, t, w)
    f = a + b * n
    if weighting == "relative":
        # relative to the fitted time; to the measured one where the line is not positive
        w = 1.0 / np.where(f > 0, f, t) ** 2
    return float(np.sum(w * (t - f) ** 2))


def _invert(scale: float, est: float, lo: float, hi: float) -> tuple[float, float]:
    """Interval of scale/x for x in [lo, hi] (scale > 0), est the estimate of x.

    Where [lo, hi] holds zero the image is two rays; the one on the estimate's
    side is reported (a rate of the other sign is not physical)."""
    if lo > 0 or hi < 0:
        return (scale / hi, scale / lo)
    return (scale / hi, INF) if est > 0 else (-INF, scale / lo)


def fieller(
    a: float, b: float, vaa: float, vbb: float, vab: float, q: float
) -> tuple[float, float]:
    """Fieller's interval for the ratio a/b of two correlated normal estimates."""
    A = b * b - q * q * vbb
    B = a * b - q * q * vab
    C = a * a - q * q * vaa
    if A <= 0:
        return (-INF, INF)
    disc = max(B * B - A * C, 0.0)
    root = math.sqrt(disc)
    return ((B - root) / A, (B + root) / A)


def fit_segment(
    n,
    t,
    turnover: float = 1.0,
    weighting: str = "relative",
    confidence: float = 0.95,
    lower: float = -INF,
    upper: float = INF,
) -> FitSegment:
    """Fit t = a + b·n (t in µs, n in bytes) and derive r_inf, n_1/2, t0, pi0."""
    n, t = _prepare(n, t)
    if len(np.unique(n)) < 2:
        raise ValueError(f"a line needs at least 2 distinct sizes, got {len(np.unique(n))}")
    if not turnover > 0:
        raise ValueError(f"turnover must be positive, got {turnover}")
    w = _irls_weights(n, t, weighting)
    line = fit_line(n, t, w, confidence)
    t0, r_inf, n_half, pi0, warnings = _derived(line, turnover, confidence)
    f = line.predict(n)
    # relative to the measurement where the line is not positive
    rel = (t - f) / np.where(f > 0, f, t)
    residuals = [
        {"bytes": int(x), "t_usec": float(y), "fit_usec": float(p), "relative": float(r)}
        for x, y, p, r in zip(n, t, f, rel)
    ]
    return FitSegment(
        lower,
        upper,
        (int(n[0]), int(n[-1])),
        len(n),
        line,
        turnover,
        t0,
        r_inf,
        n_half,
        pi0,
        residuals,
        float(np.sqrt(np.mean(rel**2))),
        warnings,
    )


def _derived(
    line: LineFit, turnover: float, confidence: float
) -> tuple[Estimate, Estimate, Estimate, Estimate, list[str]]:
    """t0, r_inf, n_1/2 and pi0 of a fitted line with their intervals, and what the line
    does not support (no interval from 2 points, no growth with size, no startup cost)."""
    a, b = line.a, line.b
    scale_r = turnover * 1e6  # b is µs per byte
    warnings = []
    if line.dof == 0:
        warnings.append("2 points: the line passes through both, no confidence interval")
        ci_t0 = ci_r = ci_nh = ci_pi = (-INF, INF)
    else:
        q = t_quantile(0.5 + confidence / 2, line.dof)
        ci_t0, ci_r = line.ci_a, _invert(scale_r, b, *line.ci_b)
        ci_nh = fieller(a, b, line.se_a**2, line.se_b**2, line.cov_ab, q)
        ci_pi = _invert(scale_r, a, *line.ci_a)
    if b <= 0:
        warnings.append(
            "time does not grow with size in this region: r_inf and n_1/2 are not meaningful"
        )
    if a <= 0:
        warnings.append("intercept t0 <= 0: the line does not describe a startup cost here")
    t0 = Estimate(a, tuple(ci_t0), "usec")
    r_inf = Estimate(scale_r / b if b else INF, ci_r, "B/s")
    n_half = Estimate(a / b if b else INF, ci_nh, "B")
    pi0 = Estimate(scale_r / a if a else INF, ci_pi, "1/s")
    return t0, r_inf, n_half, pi0, warnings


# ---------------------------------------------------------------- regions


def regions(n: np.ndarray, breakpoints: Sequence[float]) -> list[tuple[float, float, np.ndarray]]:
    """(lower, upper, index mask) of every region lower < n <= upper."""
    edges = [-INF, *sorted({float(b) for b in breakpoints}), INF]
    return [(lo, hi, (n > lo) & (n <= hi)) for lo, hi in itertools.pairwise(edges)]


def detect_breakpoints(
    n, t, max_segments: int = 4, min_points: int = 4, weighting: str = "relative"
) -> tuple[list[int], dict]:
    """Number and position of segments by dynamic programming and BIC.

    Returns the breakpoints (largest size of each region but the last) and a
    record of the criterion: BIC and relative RSS for every k tried.
    """
    n, t = _prepare(n, t)
    N = len(n)
    if min_points < 3:
        raise ValueError("min_points must be >= 3 (a line with an error estimate)")
    kmax = max(1, min(max_segments, N // min_points))
    # cost[i][j]: relative RSS of one line through points i .. j-1; a segment
    # may only start where the size changes (equal sizes stay together).
    starts = [i for i in range(N) if i == 0 or n[i] != n[i - 1]] + [N]
    ok_start = set(starts)
    cost: dict[tuple[int, int], float] = {}
    for i in starts[:-1]:
        for j in starts:
            if j - i >= min_points and len(np.unique(n[i:j])) >= 3:
                cost[(i, j)] = weighted_rss(n[i:j], t[i:j], weighting)
    if (0, N) not in cost and len(np.unique(n)) >= 2:  # too few points to split: one line
        cost[(0, N)] = weighted_rss(n, t, weighting)
    best: list[dict[int, tuple[float, list[int]]]] = [{0: (0.0, [])}]
    for k in range(1, kmax + 1):
        row: dict[int, tuple[float, list[int]]] = {}
        for j in starts[1:]:
            cands = [
                (prev[0] + cost[(i, j)], prev[1] + [i])
                for i, prev in best[k - 1].items()
                if (i, j) in cost and i in ok_start
            ]
            if cands:
                row[j] = min(cands, key=lambda c: c[0])
        best.append(row)
    table = []
    floor = 1e-300
    for k in range(1, kmax + 1):
        if N not in best[k]:
            continue
        rss, cuts = best[k][N]
        if not math.isfinite(rss):
            continue
        bic = N * math.log(max(rss, floor) / N) + (2 * k + BREAKPOINT_COST * (k - 1)) * math.log(N)
        bps = [int(n[c - 1]) for c in cuts[1:]]
        table.append({"segments": k, "bic": bic, "weighted_rss": rss, "breakpoints": bps})
    if not table:
        raise ValueError(f"a line needs at least 2 distinct sizes, got {len(np.unique(n))}")
    chosen = min(table, key=lambda r: r["bic"])
    return chosen["breakpoints"], {
        "name": "BIC",
        "parameters": f"2 per segment + {BREAKPOINT_COST} per breakpoint",
        "min_points": min_points,
        "max_segments": max_segments,
        "chosen": chosen["segments"],
        "tried": table,
    }


def fit(
    n,
    t,
    *,
    model: str = "hockney",
    breakpoints: Sequence[float] = (),
    auto: bool = False,
    turnover: float = 1.0,
    weighting: str = "relative",
    confidence: float = 0.95,
    max_segments: int = 4,
    min_points: int = 4,
    label: dict | None = None,
) -> Fit:
    """Piecewise fit: user breakpoints, automatic ones, or one line."""
    if model not in MODELS:
        raise ValueError(f"model must be one of {'|'.join(MODELS)}, got {model!r}")
    n, t = _prepare(n, t)
    criterion = None
    if breakpoints and auto:
        raise ValueError("give breakpoints or ask for automatic detection, not both")
    if auto:
        bps, criterion = detect_breakpoints(n, t, max_segments, min_points, weighting)
        source = "auto"
    else:
        bps = sorted({int(b) if float(b).is_integer() else float(b) for b in breakpoints})
        source = "user" if bps else "none"
    segments = []
    for lo, hi, mask in regions(n, bps):
        sizes = np.unique(n[mask])
        if len(sizes) < 2:
            where = _region_text(lo, hi)
            raise ValueError(
                f"region {where} holds {len(sizes)} measured size(s); a line needs at "
                "least 2 (move or drop a breakpoint)"
            )
        segments.append(fit_segment(n[mask], t[mask], turnover, weighting, confidence, lo, hi))
    return Fit(
        model,
        segments,
        list(bps),
        source,
        weighting,
        confidence,
        turnover,
        criterion,
        dict(label or {}),
    )


def _region_text(lo: float, hi: float) -> str:
    left = "n" if not math.isfinite(lo) else f"{lo:g} < n"
    return (
        f"{left} <= {hi:g}"
        if math.isfinite(hi)
        else (f"n > {lo:g}" if math.isfinite(lo) else "all n")
    )


def region_text(seg: FitSegment) -> str:
    return _region_text(seg.lower, seg.upper)
