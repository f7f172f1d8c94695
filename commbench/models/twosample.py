"""Two samples of one row's time, old and new: is new slower by more than a threshold?
(`commbench compare`'s regression gate; no MPI; scipy throughout.)

* Per run (series). The log-values of the row's samples, in the order taken: their
  median m, their robust scale s = 1.4826 x the median absolute deviation (about the
  relative spread; one slow sample moves neither), the standard error of the median
  1.2533 s / sqrt(n_eff), or where larger the half-width of the median's distribution-free
  95 % interval (order statistics) over 1.96, times sqrt(n / n_eff): samples split between
  two levels (a job sharing a core hits some samples of a row and not others) leave the
  median to jump between the levels, which the MAD does not see (with a background load,
  two identical runs' 4 KiB PingPong had 7 and 11 of 20 samples at 2.3x the others and were
  called 1.85x slower on the MAD alone). n_eff: where the lag-1 autocorrelation rho of the
  log-values lies above 1.645 / sqrt(n) (a one-sided 5 % test of "no correlation"), the samples
  are not independent (a burst, a trend over the run) and count n (1 - rho) / (1 + rho);
  at rho >= UNTESTABLE_RHO (and significant) the row is not tested at all.
* Between runs. Two runs differ as wholes (placement, frequency, other jobs) by more
  than their samples vary within each, and a pair of runs cannot show by how much: the
  test assumes a spread sigma_b of a row's median between runs (run_spread, default 2 %,
  the gate's --run-spread). SE = sqrt(SE_old^2 + SE_new^2 + 2 sigma_b^2).
* Test. d = m_new - m_old; p_slower = P(T > (d - log(1 + threshold)) / SE), p_faster =
  P(T < (d + log(1 + threshold)) / SE), Student's t with min(n_old, n_new) - 1 degrees
  of freedom (conservative: the smaller run's, not Welch's). The null holds every change
  up to the threshold: a real 3 % change is not called at 5 %.
* Detectable. exp(log(1 + threshold) + (t_{1-alpha} + t_{POWER}) SE): the smallest
  slowdown the row's test calls with 90 % probability at alpha (per row, before
  Benjamini-Hochberg).
* Effect size. The ratio of the medians new/old, with a percentile bootstrap
  interval (scipy.stats.bootstrap, the two samples resampled independently, a fixed
  seed so that one pair of files always gives the same interval).
* Multiplicity. Benjamini-Hochberg adjusted p-values (q) over the rows of one
  comparison (scipy.stats.false_discovery_control).
* Too noisy. More than half of a comparison's tested rows with a detectable ratio above
  noisy_limit(threshold): the gate cannot see the changes it is asked about.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from commbench import records

MIN_SAMPLES = 3  # fewer in either run: no test (a median of 2 is a mean)
BOOTSTRAP_RESAMPLES = 4999  # 999 past LARGE_K samples a row: the time grows with K x resamples
LARGE_K = 1000
BATCH_ELEMENTS = 4_000_000  # resampled values held at once (32 MB), whatever K
SEED = 20250101


DEFAULT_RUN_SPREAD = 0.02  # sigma_b: a row's median between back-to-back runs, quiet machine
UNTESTABLE_RHO = 0.8  # lag-1 autocorrelation from which a row is not tested
POWER = 0.90  # of the detectable ratio
NOISY_FACTOR = 4  # too noisy: most rows cannot detect 1 + NOISY_FACTOR x threshold
NOISY_FLOOR = 0.05  # ... the threshold taken as at least this (below: not noise, the test's floor)
MAD_NORMAL = 1.4826  # MAD -> standard deviation of a normal distribution
MEDIAN_SE = 1.2533  # sqrt(pi / 2): the median's standard error over the mean's


@dataclass(frozen=True)
class RunSamples:
    """One run's samples of a row, as the test sees them (module docstring)."""

    n: int
    center: float  # median of the log-values
    scale: float  # 1.4826 MAD of the log-values: about the relative spread
    rho: float  # lag-1 autocorrelation of the log-values, in the order taken
    n_eff: float  # n, or n (1 - rho) / (1 + rho) where rho is significant
    # the median's standard error from its distribution-free 95 % interval (order statistics,
    # records.median_ci) over 2 x 1.96; None below 6 samples
    spread_se: float | None = None

    @property
    def widened(self) -> bool:
        return self.n_eff < self.n

    @property
    def correlated(self) -> bool:
        """Too correlated to test: rho >= UNTESTABLE_RHO, and significant."""
        return self.rho >= UNTESTABLE_RHO and self.rho > significant_rho(self.n)

    @property
    def se(self) -> float:
        """The median log-value's standard error: 1.2533 s / sqrt(n), or where larger the one
        its order-statistic interval gives (samples split between two levels, as a job
        sharing a core makes them, leave the median between them: the MAD does not see how
        far it may jump, the interval does), widened by sqrt(n / n_eff)."""
        se = max(MEDIAN_SE * self.scale / math.sqrt(self.n), self.spread_se or 0.0)
        return se * math.sqrt(self.n / self.n_eff)


@dataclass(frozen=True)
class TwoSample:
    ratio: float  # median(new) / median(old)
    ci: tuple[float, float]  # bootstrap interval of the ratio at the confidence asked
    p_slower: float  # one-sided: new > (1 + threshold) * old, beyond the between-run spread
    p_faster: float  # one-sided: new < old / (1 + threshold)
    old_median: float
    new_median: float
    k_old: int
    k_new: int
    se: float  # of d = m_new - m_old, the between-run term included
    df: int
    detectable: float  # the smallest new/old called with probability POWER at alpha
    old: RunSamples | None = None
    new: RunSamples | None = None


def significant_rho(n: int) -> float:
    """The lag-1 autocorrelation above which n samples are taken as correlated (one-sided 5 %
    test of none: 1.645 / sqrt(n))."""
    return 1.645 / math.sqrt(n)


def lag1(x: np.ndarray) -> float:
    """The lag-1 autocorrelation of x (0 where x does not vary)."""
    c = x - x.mean()
    den = float(np.dot(c, c))
    return float(np.dot(c[:-1], c[1:])) / den if den > 0 else 0.0


def series(samples: np.ndarray) -> RunSamples:
    """One run's samples (positive, in the order taken) as the test sees them."""
    from scipy.stats import median_abs_deviation

    x = np.log(np.asarray(samples, dtype=float))
    n = len(x)
    rho = lag1(x)
    n_eff = n * (1 - rho) / (1 + rho) if significant_rho(n) < rho < 1 else float(n)
    scale = float(median_abs_deviation(x, scale=1 / MAD_NORMAL))
    ci = records.median_ci(x.tolist())
    spread_se = (ci[1] - ci[0]) / (2 * 1.96) if ci is not None else None
    return RunSamples(n, float(np.median(x)), scale, rho, n_eff, spread_se)


def usable(samples: Sequence[float] | None) -> np.ndarray | None:
    """The samples as an array when a test can use them (enough, finite, positive)."""
    if not samples or len(samples) < MIN_SAMPLES:
        return None
    a = np.asarray(samples, dtype=float)
    return a if a.ndim == 1 and np.all(np.isfinite(a)) and np.all(a > 0) else None


def _ratio_of_medians(new, old, axis=-1):
    return np.median(new, axis=axis) / np.median(old, axis=axis)


def ratio_ci(old: np.ndarray, new: np.ndarray, confidence: float) -> tuple[float, float]:
    """Percentile bootstrap interval of median(new) / median(old)."""
    from scipy.stats import bootstrap

    k = len(old) + len(new)
    with warnings.catch_warnings():  # identical samples: a degenerate (zero-width) interval, fine
        warnings.simplefilter("ignore")
        res = bootstrap(
            (new, old),
            _ratio_of_medians,
            vectorized=True,
            paired=False,
            confidence_level=confidence,
            method="percentile",
            n_resamples=BOOTSTRAP_RESAMPLES if k <= 2 * LARGE_K else 999,
            batch=max(1, BATCH_ELEMENTS // k),
            rng=np.random.default_rng(SEED),
        )
    lo, hi = res.confidence_interval
    return float(lo), float(hi)


@dataclass(frozen=True)
class Shift:
    """The test of one row (module docstring), without the ratio's interval."""

    p_slower: float
    p_faster: float
    se: float
    df: int
    detectable: float


def shift_test(
    so: RunSamples,
    sn: RunSamples,
    threshold: float,
    alpha: float = 0.05,
    run_spread: float = DEFAULT_RUN_SPREAD,
) -> Shift:
    """Both one-sided tests of d = m_new - m_old beyond log(1 + threshold), and the ratio the
    test detects with probability POWER (Student's t through scipy.special: fast enough for a
    simulation of thousands of pairs)."""
    from scipy import special

    se = math.sqrt(so.se**2 + sn.se**2 + 2 * run_spread**2)
    df = min(so.n, sn.n) - 1
    shift, d = math.log1p(threshold), sn.center - so.center
    if se > 0:
        p_slower = float(special.stdtr(df, -(d - shift) / se))
        p_faster = float(special.stdtr(df, (d + shift) / se))
        reach = float(special.stdtrit(df, 1 - alpha) + special.stdtrit(df, POWER)) * se
    else:  # identical samples and no between-run term: the sign decides
        p_slower = 0.0 if d > shift else 1.0
        p_faster = 0.0 if d < -shift else 1.0
        reach = 0.0
    return Shift(p_slower, p_faster, se, df, math.exp(shift + reach))


def compare(
    old: np.ndarray,
    new: np.ndarray,
    threshold: float,
    confidence: float = 0.95,
    alpha: float = 0.05,
    run_spread: float = DEFAULT_RUN_SPREAD,
    sides: tuple[RunSamples, RunSamples] | None = None,
) -> TwoSample:
    """Both one-sided tests (shift_test), the detectable ratio and the ratio's interval; old
    and new in the order taken (a correlated one, RunSamples.correlated: the caller's).
    sides: series(old), series(new) where the caller has them already (a gate of many rows
    made them twice)."""
    so, sn = sides if sides is not None else (series(old), series(new))
    t = shift_test(so, sn, threshold, alpha, run_spread)
    om, nm = float(np.median(old)), float(np.median(new))
    return TwoSample(
        nm / om, ratio_ci(old, new, confidence), t.p_slower, t.p_faster, om, nm, len(old),
        len(new), t.se, t.df, t.detectable, so, sn,
    )  # fmt: skip


def noisy_limit(threshold: float) -> float:
    """The detectable ratio above which a row cannot see the changes the gate is asked about:
    1 + NOISY_FACTOR x threshold, the threshold taken as at least NOISY_FLOOR (a pair of
    quiet runs cannot see 1 %: the between-run term alone keeps the detectable ratio near
    1.1, and that is not noise)."""
    return 1 + NOISY_FACTOR * max(threshold, NOISY_FLOOR)


def too_noisy(detectable: Sequence[float], threshold: float) -> bool:
    """More than half of the tested rows cannot detect noisy_limit(threshold)."""
    limit = noisy_limit(threshold)
    return bool(detectable) and 2 * sum(1 for d in detectable if d > limit) > len(detectable)


def adjust(pvalues: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values), in the given order."""
    if not pvalues:
        return []
    from scipy.stats import false_discovery_control

    return [
        float(q) for q in false_discovery_control(np.asarray(pvalues, dtype=float), method="bh")
    ]


def verdicts(results: Sequence, threshold: float, alpha: float) -> list[tuple[str, float, float]]:
    """(slower | faster | same, q_slower, q_faster) of each row of one comparison (objects with
    ratio, p_slower, p_faster: the two-file test's rows, the between-run test's results):
    Benjamini-Hochberg over the rows, slower when q_slower <= alpha and the ratio is above
    1 + threshold (the gate's regression), faster in the mirror."""
    qs = adjust([r.p_slower for r in results])
    qf = adjust([r.p_faster for r in results])
    out = []
    for r, s, f in zip(results, qs, qf):
        if s <= alpha and r.ratio > 1 + threshold:
            out.append(("slower", s, f))
        elif f <= alpha and r.ratio < 1 / (1 + threshold):
            out.append(("faster", s, f))
        else:
            out.append(("same", s, f))
    return out
