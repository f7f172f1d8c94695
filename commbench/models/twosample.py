"""Two samples of one row's time, old and new: is new slower by more than a threshold?
(`commbench compare`'s regression gate; no MPI; scipy.stats throughout.)

* Test. The one-sided Mann-Whitney U test of H0 "new is not stochastically larger
  than old scaled by (1 + threshold)" against "it is": the old samples are
  multiplied by 1 + threshold before the ranks are taken, so the test asks about a
  change beyond the threshold, not about any change (a scale shift; on log-times the
  location shift whose inversion gives the Hodges-Lehmann interval). The mirror
  test (new below old / (1 + threshold)) gives "faster". Rank-based: no normality,
  one slow outlier sample moves one rank.
* Effect size. The ratio of the medians new/old, with a percentile bootstrap
  interval (scipy.stats.bootstrap, the two samples resampled independently, a fixed
  seed so that one pair of files always gives the same interval).
* Multiplicity. Benjamini-Hochberg adjusted p-values (q) over the rows of one
  comparison (scipy.stats.false_discovery_control).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MIN_SAMPLES = 3  # fewer in either run: no test (a median of 2 is a mean)
BOOTSTRAP_RESAMPLES = 4999  # 999 past LARGE_K samples a row: the time grows with K x resamples
LARGE_K = 1000
BATCH_ELEMENTS = 4_000_000  # resampled values held at once (32 MB), whatever K
SEED = 20250101


@dataclass(frozen=True)
class TwoSample:
    ratio: float  # median(new) / median(old)
    ci: tuple[float, float]  # bootstrap interval of the ratio at the confidence asked
    p_slower: float  # one-sided: new > (1 + threshold) * old
    p_faster: float  # one-sided: new < old / (1 + threshold)
    old_median: float
    new_median: float
    k_old: int
    k_new: int


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


def compare(
    old: np.ndarray, new: np.ndarray, threshold: float, confidence: float = 0.95
) -> TwoSample:
    """Both one-sided shifted Mann-Whitney tests and the ratio's interval."""
    from scipy.stats import mannwhitneyu

    f = 1.0 + threshold
    p_slower = float(mannwhitneyu(new, old * f, alternative="greater").pvalue)
    p_faster = float(mannwhitneyu(new, old / f, alternative="less").pvalue)
    om, nm = float(np.median(old)), float(np.median(new))
    return TwoSample(
        nm / om, ratio_ci(old, new, confidence), p_slower, p_faster, om, nm, len(old), len(new)
    )


def adjust(pvalues: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values), in the given order."""
    if not pvalues:
        return []
    from scipy.stats import false_discovery_control

    return [
        float(q) for q in false_discovery_control(np.asarray(pvalues, dtype=float), method="bh")
    ]


def smallest_p(k_old: int, k_new: int) -> float:
    """The smallest one-sided p-value samples of these sizes can give (completely
    separated samples): above alpha, the row can never be called significant."""
    from scipy.stats import mannwhitneyu

    return float(
        mannwhitneyu(np.arange(k_new) + k_old, np.arange(k_old), alternative="greater").pvalue
    )


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
