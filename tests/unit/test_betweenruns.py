"""The between-run prediction test (commbench.models.betweenruns) against its own model: under
the model its false alarm rate is what it claims, it finds a shift it should, and its band holds
the runs it says it holds. Simulated draws (numpy, a fixed seed): no MPI, each a few ms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import stdtrit

from commbench.models import betweenruns, twosample


def _draws(rng, n: int, sd: float, trials: int) -> np.ndarray:
    return np.exp(rng.normal(0.0, sd, size=(trials, n + 1)))


def test_false_alarms_under_the_model_are_alpha():
    rng = np.random.default_rng(1)
    for n in (2, 5, 10):
        draws = _draws(rng, n, 0.1, 4000)
        p = [betweenruns.test(d[:-1], d[-1], threshold=0.0).p_slower for d in draws]
        rate = np.mean(np.array(p) <= 0.05)
        assert 0.04 <= rate <= 0.06, (n, rate)  # exact under the model: 0.05


def test_the_threshold_is_a_margin_not_a_test_of_any_change():
    rng = np.random.default_rng(2)
    draws = _draws(rng, 5, 0.02, 2000)
    # a real 4% slowdown, within a 5% threshold: (almost) never called
    p = [betweenruns.test(d[:-1], d[-1] * 1.04, threshold=0.05).p_slower for d in draws]
    assert np.mean(np.array(p) <= 0.05) < 0.05
    # 20%: called nearly always when runs spread by 2%
    p = [betweenruns.test(d[:-1], d[-1] * 1.2, threshold=0.05).p_slower for d in draws]
    assert np.mean(np.array(p) <= 0.05) > 0.95


def test_the_band_is_what_the_test_calls_and_holds_one_more_run_as_often_as_it_says():
    """A new value is called slower (p <= alpha) exactly above the band and faster exactly
    below it (issue 46: a row was called slower inside a two-sided 95 % band printed beside a
    one-sided test); with no threshold the band holds one more run 1 - 2 alpha of the time;
    detectable is the slowdown called 9 times in 10, beyond the band's upper end."""
    rng = np.random.default_rng(3)
    inside = 0
    draws = _draws(rng, 5, 0.3, 4000)
    for i, d in enumerate(draws):
        threshold = 0.0 if i % 2 else 0.1
        t = betweenruns.test(d[:-1], d[-1], threshold, alpha=0.025)
        lo, hi = t.band
        assert (t.p_slower <= 0.025) == (d[-1] > hi) and (t.p_faster <= 0.025) == (d[-1] < lo)
        # detectable: the band's end (called half the time) moved on to 90 % power
        half = math.log(hi / t.center) - math.log1p(threshold)
        scale = half / stdtrit(len(d) - 2, 1 - 0.025)
        assert t.detectable == pytest.approx(
            hi / t.center * math.exp(stdtrit(len(d) - 2, 0.9) * scale)
        )
        if not threshold:
            inside += lo <= d[-1] <= hi
    assert 0.94 <= inside / (len(draws) / 2) <= 0.96


def test_identical_baselines_and_edges():
    t = betweenruns.test([2.0, 2.0, 2.0], 2.2, threshold=0.05)
    assert t.p_slower == 0.0 and t.ratio == pytest.approx(1.1)
    assert t.band == pytest.approx((2.0 / 1.05, 2.0 * 1.05)) and t.detectable == pytest.approx(1.05)
    # its own samples' spread (new_se) widens the prediction: a value that was called is not
    t = betweenruns.test([1.0, 1.02, 0.98, 1.01, 0.99], 1.3, threshold=0.05, min_spread=0.03)
    assert t.p_slower < 0.01
    wide = betweenruns.test([1.0, 1.02, 0.98, 1.01, 0.99], 1.3, 0.05, min_spread=0.03, new_se=0.4)
    assert wide.p_slower > 0.2 and wide.detectable > 2 * t.detectable - 1
    t = betweenruns.test([2.0, 2.0, 2.0], 2.05, threshold=0.05)
    assert t.p_slower == 1.0 and t.p_faster == 1.0
    with pytest.raises(ValueError):
        betweenruns.test([1.0], 1.0, 0.05)
    with pytest.raises(ValueError):
        betweenruns.test([1.0, 1.1], 0.0, 0.05)


def test_verdicts_adjust_over_the_rows():
    base = [1.0, 1.02, 0.98, 1.01, 0.99]
    rows = [betweenruns.test(base, x, 0.05) for x in (1.0, 1.5, 0.6)]
    assert [v for v, _, _ in twosample.verdicts(rows, 0.05, 0.05)] == ["same", "slower", "faster"]
    # one borderline row among many unchanged ones: Benjamini-Hochberg keeps it from passing alpha
    rng = np.random.default_rng(4)
    many = [betweenruns.test(base, float(math.exp(rng.normal(0, 0.01))), 0.05) for _ in range(30)]
    p_one = betweenruns.test(base, 1.09, 0.05)
    assert p_one.p_slower < 0.05
    judged = twosample.verdicts([*many, p_one], 0.05, 0.05)
    assert judged[-1][1] >= p_one.p_slower
