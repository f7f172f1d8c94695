"""Straight-line fits y = a + b·x with confidence intervals (no MPI).

Used for the Hockney model (t = t0 + n / r_inf) and for the F, S, R, A, U, E
lines of the overhead decomposition. Weighted least squares: with weights
w_i = 1/y_i^2 the fit minimises relative residuals, which is what data whose
times span several orders of magnitude needs (plain least squares would be
dominated by the largest messages).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np


def t_quantile(p: float, dof: int) -> float:
    """Quantile of Student's t (two-sided intervals use p = 1 - alpha/2)."""
    if dof <= 0:
        return math.inf
    from scipy.stats import t

    return float(t.ppf(p, dof))


@dataclass(frozen=True)
class LineFit:
    a: float  # intercept
    b: float  # slope
    se_a: float
    se_b: float
    cov_ab: float
    ci_a: tuple[float, float]
    ci_b: tuple[float, float]
    dof: int
    rss: float  # weighted residual sum of squares
    r2: float
    n: int
    confidence: float

    def predict(self, x):
        return self.a + self.b * np.asarray(x, dtype=float)

    def to_dict(self) -> dict:
        return asdict(self)


def fit_line(x, y, weights=None, confidence: float = 0.95) -> LineFit:
    """Weighted least squares of y = a + b·x; weights are 1/variance (relative)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("x and y must be 1-D arrays of the same length")
    n = len(x)
    if n < 2:
        raise ValueError(f"a line needs at least 2 points, got {n}")
    if np.ptp(x) == 0:
        raise ValueError("a line needs at least two distinct x values")
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if np.any(w <= 0) or not np.all(np.isfinite(w)):
        raise ValueError("weights must be positive and finite")
    A = np.column_stack([np.ones(n), x])
    sw = np.sqrt(w)
    Aw, yw = A * sw[:, None], y * sw
    coef, *_ = np.linalg.lstsq(Aw, yw, rcond=None)
    a, b = float(coef[0]), float(coef[1])
    resid = yw - Aw @ coef
    rss = float(resid @ resid)
    dof = n - 2
    # Residual variance scales the covariance (weights are relative, not absolute).
    s2 = rss / dof if dof > 0 else 0.0
    cov = np.linalg.inv(Aw.T @ Aw) * s2
    se_a, se_b = math.sqrt(max(cov[0, 0], 0.0)), math.sqrt(max(cov[1, 1], 0.0))
    q = t_quantile(0.5 + confidence / 2, dof) if dof > 0 else math.inf
    ybar = float(np.average(y, weights=w))
    tss = float(np.sum(w * (y - ybar) ** 2))
    r2 = 1 - rss / tss if tss > 0 else 1.0
    return LineFit(
        a,
        b,
        se_a,
        se_b,
        float(cov[0, 1]),
        (a - q * se_a, a + q * se_a),
        (b - q * se_b, b + q * se_b),
        dof,
        rss,
        r2,
        n,
        confidence,
    )
