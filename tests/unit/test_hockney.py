"""The Hockney model and piecewise fits: pure mathematics, no MPI."""

import json
import math

import numpy as np
import pytest

from commbench.models import hockney
from commbench.models.linear import fit_line

SIZES = np.array([0] + [2**k for k in range(23)], dtype=float)  # the standard sweep, 0 .. 4 MiB


def hockney_times(n, r_inf, n_half, noise, rng):
    """t in µs for r_inf in bytes/µs, with relative Gaussian noise."""
    return (n + n_half) / r_inf * (1 + rng.normal(0, noise, n.size))


def test_exact_data_gives_exact_parameters():
    t = (SIZES + 2000.0) / 5000.0  # r_inf = 5000 B/µs = 5 GB/s, n_1/2 = 2000 B
    seg = hockney.fit(SIZES, t).segments[0]
    assert seg.r_inf.value == pytest.approx(5e9, rel=1e-9)
    assert seg.n_half.value == pytest.approx(2000, rel=1e-9)
    assert seg.t0.value == pytest.approx(0.4, rel=1e-9)
    assert seg.pi0.value == pytest.approx(2.5e6, rel=1e-9)  # 1/t0
    assert seg.r_inf.unit == "B/s" and seg.n_half.unit == "B" and seg.t0.unit == "usec"
    assert seg.rms_relative == pytest.approx(0, abs=1e-9)


def test_noisy_data_recovered_within_ci():
    rng = np.random.default_rng(3)
    t = hockney_times(SIZES, 5000.0, 2000.0, 0.03, rng)
    seg = hockney.fit(SIZES, t).segments[0]
    for est, true in ((seg.r_inf, 5e9), (seg.n_half, 2000), (seg.t0, 0.4), (seg.pi0, 2.5e6)):
        assert est.ci[0] <= true <= est.ci[1], (est, true)
        assert est.ci[0] < est.value < est.ci[1]
    assert len(seg.residuals) == SIZES.size
    assert abs(np.mean([r["relative"] for r in seg.residuals])) < 0.02


def test_interval_coverage_is_nominal():
    """Over many noisy data sets the 95% intervals hold the true values ~95% of the time."""
    rng = np.random.default_rng(11)
    trials, hits = 300, {"r_inf": 0, "n_half": 0, "t0": 0}
    for _ in range(trials):
        seg = hockney.fit_segment(SIZES, hockney_times(SIZES, 800.0, 6000.0, 0.05, rng))
        hits["r_inf"] += seg.r_inf.ci[0] <= 8e8 <= seg.r_inf.ci[1]
        hits["n_half"] += seg.n_half.ci[0] <= 6000 <= seg.n_half.ci[1]
        hits["t0"] += seg.t0.ci[0] <= 7.5 <= seg.t0.ci[1]
    for k, h in hits.items():
        assert 0.89 <= h / trials <= 0.99, (k, h / trials)


def test_relative_weighting_beats_ordinary_least_squares_on_t0():
    """OLS is decided by the largest messages; the relative fit keeps t0 accurate."""
    rng = np.random.default_rng(5)
    err_rel, err_ols = [], []
    for _ in range(50):
        t = hockney_times(SIZES, 5000.0, 2000.0, 0.03, rng)
        err_rel.append(abs(hockney.fit_segment(SIZES, t).t0.value - 0.4))
        err_ols.append(abs(hockney.fit_segment(SIZES, t, weighting="uniform").t0.value - 0.4))
    assert np.median(err_rel) * 10 < np.median(err_ols)


def test_turnover_scales_rate_not_length():
    t = (SIZES + 2000.0) / 5000.0
    one = hockney.fit_segment(SIZES, t).n_half.value
    seg = hockney.fit_segment(SIZES, t, turnover=2.0)
    assert seg.r_inf.value == pytest.approx(1e10)
    assert seg.n_half.value == pytest.approx(one)
    assert seg.pi0.value == pytest.approx(seg.r_inf.value / seg.n_half.value)


def two_regimes(rng, noise=0.02):
    eager = (SIZES + 500.0) / 2000.0
    rendezvous = (SIZES + 40000.0) / 8000.0
    return np.where(SIZES <= 65536, eager, rendezvous) * (1 + rng.normal(0, noise, SIZES.size))


def test_breakpoint_found_automatically():
    # One fixed data set (a chance split happens in ~5% of them: test_detection_rates)
    rng = np.random.default_rng(1)
    f = hockney.fit(SIZES, two_regimes(rng), auto=True)
    assert f.breakpoints == [65536] and f.breakpoint_source == "auto"
    assert f.criterion["chosen"] == 2
    assert [r["segments"] for r in f.criterion["tried"]] == [1, 2, 3, 4]
    lo, hi = f.segments
    assert lo.sizes == (0, 65536) and hi.sizes == (131072, 4194304)
    assert lo.r_inf.ci[0] <= 2e9 <= lo.r_inf.ci[1] and lo.n_half.ci[0] <= 500 <= lo.n_half.ci[1]
    assert hi.r_inf.ci[0] <= 8e9 <= hi.r_inf.ci[1] and hi.n_half.ci[0] <= 40000 <= hi.n_half.ci[1]


def test_detection_rates():
    """The penalty keeps chance splits rare and still finds a real switch."""
    rng = np.random.default_rng(8)
    trials = 40
    false_split = sum(
        bool(hockney.detect_breakpoints(SIZES, hockney_times(SIZES, 5000.0, 2000.0, 0.03, rng))[0])
        for _ in range(trials)
    )
    found = sum(
        hockney.detect_breakpoints(SIZES, two_regimes(rng, 0.05))[0] == [65536]
        for _ in range(trials)
    )
    assert false_split <= 0.2 * trials
    assert found >= 0.8 * trials


def test_user_breakpoints_split_regions():
    rng = np.random.default_rng(4)
    t = two_regimes(rng)
    f = hockney.fit(SIZES, t, breakpoints=[65536])
    assert f.breakpoint_source == "user" and len(f.segments) == 2
    assert f.segments[0].sizes == (0, 65536) and f.segments[1].sizes == (131072, 4194304)
    f3 = hockney.fit(SIZES, t, breakpoints=[100, 65536])  # like the iPSC/860's 100 bytes
    assert [s.sizes for s in f3.segments] == [(0, 64), (128, 65536), (131072, 4194304)]
    assert hockney.region_text(f3.segments[1]) == "100 < n <= 65536"


def test_bad_regions_and_inputs_are_refused():
    t = (SIZES + 1.0) / 2.0
    with pytest.raises(ValueError, match="holds 1 measured size"):
        hockney.fit(SIZES, t, breakpoints=[0])
    with pytest.raises(ValueError, match="not both"):
        hockney.fit(SIZES, t, breakpoints=[64], auto=True)
    with pytest.raises(ValueError, match="times must be > 0"):
        hockney.fit([0, 1, 2], [1.0, 0.0, 2.0])
    with pytest.raises(ValueError, match="2 distinct sizes"):
        hockney.fit_segment([8, 8, 8], [1.0, 1.1, 0.9])
    with pytest.raises(ValueError, match="model"):
        hockney.fit(SIZES, t, model="loggp")


def test_two_points_have_no_interval_and_json_is_valid():
    seg = hockney.fit_segment([0, 100], [1.0, 2.0])
    assert seg.line.dof == 0 and seg.warnings
    assert seg.r_inf.ci == (-math.inf, math.inf)
    d = hockney.fit([0, 100], [1.0, 2.0]).to_dict()
    text = json.dumps(d, allow_nan=False)  # unbounded ends become null
    assert json.loads(text)["segments"][0]["r_inf"]["ci"] == [None, None]


def test_fieller_interval():
    # a, b well determined: close to the delta-method interval and contains a/b
    lo, hi = hockney.fieller(10.0, 2.0, 0.01, 0.0001, 0.0, 1.96)
    assert lo < 5 < hi and hi - lo == pytest.approx(
        2 * 1.96 * math.sqrt(0.01 / 4 + 25 * 0.0001 / 4), rel=0.02
    )
    # slope not significantly non-zero: unbounded
    assert hockney.fieller(10.0, 0.1, 0.01, 0.01, 0.0, 1.96) == (-math.inf, math.inf)


def test_seed_002_table_1_e_row_gives_table_3():
    """Seed 002: E of Table 1 fitted as a line is Table 3's 220 + 1.285 n."""
    n = [16, 500, 1000, 1500, 2000]
    e = [242, 864, 1506, 2149, 2792]
    for weighting in ("uniform", "relative"):
        f = hockney.fit(n, e, model="linear", weighting=weighting)
        line = f.segments[0].line
        assert round(line.a, -1) == 220  # "220": two significant digits
        assert round(line.b, 3) == 1.285
    direct = fit_line(n, e)  # the plain least squares the seed used
    assert round(direct.a, -1) == 220 and round(direct.b, 3) == 1.285
