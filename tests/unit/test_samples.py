"""--samples K's statistics (commbench.records): the median's confidence interval from order
statistics, fast for many samples, and each sample's time as its slowest rank's. The runs
are tests/mpi/test_samples.py."""

from __future__ import annotations

import time

import pytest

from commbench import records


def test_median_ci_of_many_samples_is_fast():
    t0 = time.monotonic()
    lo, hi = records.median_ci([float(i) for i in range(200_000)])
    assert time.monotonic() - t0 < 5  # was O(K^2) in exact big integers: minutes
    assert lo < 100_000 < hi and hi - lo < 2000


def test_median_ci_order_statistics():
    assert records.median_ci([1, 2, 3, 4, 5]) is None  # K < 6: no 95% interval exists
    assert records.median_ci([6, 5, 4, 3, 2, 1]) == (1, 6)
    assert records.median_ci(list(range(1, 21))) == (6, 15)  # the textbook table
    assert records.median_ci(list(range(1, 101))) == (40, 61)


def test_sample_stats_use_the_slowest_rank_per_sample():
    st = records.sample_stats([[1e-6, 4e-6], [3e-6, 2e-6], None, [-1.0, -1.0]], factor=0.5)
    assert st["k"] == 2 and st["t_max_samples"] == pytest.approx([1.5, 2.0])
