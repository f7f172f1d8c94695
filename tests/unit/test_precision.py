"""The confidence interval of a median that --precision P stops on (commbench.records): the
exact binomial ranks, the ranks past exact sums against scipy, the relative precision as the
wider side of the interval. The runs are tests/mpi/test_precision.py."""

from __future__ import annotations

import math

import pytest

from commbench import records


def _binomial_rank(k: int, confidence: float = 0.95) -> int | None:
    """l of the order-statistic CI from exact binomial sums (the definition median_ci keeps)."""
    half, cdf, best = (1 - confidence) / 2, 0.0, None
    for j in range(k + 1):  # cdf = P(B <= j - 1) before adding term j
        if cdf > half:
            break
        best = j if j >= 1 else best
        cdf += math.comb(k, j) / 2**k
    return None if best is None or best > k + 1 - best else best


def test_median_ci_keeps_the_exact_binomial_ranks():
    for k in range(1, 400):
        xs = [float(i) for i in range(1, k + 1)]
        ci, rank = records.median_ci(xs), _binomial_rank(k)
        assert ci == (None if rank is None else (xs[rank - 1], xs[k - rank])), k
    assert records.median_ci(list(range(1, 21)), 0.99) == (4, 17)  # the textbook 99% table


def test_ci_rank_beyond_exact_sums_agrees_with_scipy():
    """Past K = 1000 records.ci_rank sums floating-point terms (no scipy in a rank):
    the same l as scipy.stats.binom's quantile, up to a million samples."""
    from scipy.stats import binom

    for k in [1000, 1001, 1002, 1500, 2047, 4999, 10_000, 123_457, 10**6]:
        for conf in (0.95, 0.99):
            half = (1 - conf) / 2
            j = int(binom.ppf(half, k, 0.5))
            j = j if binom.cdf(j, k, 0.5) <= half else j - 1  # the largest j with cdf <= half
            assert records.ci_rank(k, conf) == j + 1, (k, conf)


def test_relative_precision_is_the_wider_side_of_the_ci():
    xs = [10.0, 10.1, 9.9, 10.0, 10.4, 9.8, 10.0]  # CI (9.8, 10.4) around 10.0
    assert records.relative_precision(xs) == pytest.approx(0.04)
    assert records.relative_precision(xs[:5]) is None  # fewer than 6: no 95% CI
    assert records.relative_precision([0.0] * 8) is None
