"""Line fits with confidence intervals: pure mathematics, no MPI."""

import numpy as np
import pytest

from commbench.models.linear import fit_line, t_quantile


def test_exact_line():
    x = np.array([0, 1, 2, 3, 4.0])
    f = fit_line(x, 3 + 2 * x)
    assert f.a == pytest.approx(3) and f.b == pytest.approx(2)
    assert f.ci_a[0] == pytest.approx(3) and f.ci_b[1] == pytest.approx(2)


def test_noisy_line_covered_by_ci():
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(200):
        x = np.linspace(0, 100, 20)
        y = 5 + 0.5 * x + rng.normal(0, 1.0, x.size)
        f = fit_line(x, y)
        hits += f.ci_b[0] <= 0.5 <= f.ci_b[1]
    assert 0.88 <= hits / 200 <= 0.99  # nominal 95%


def test_t_quantile():
    assert t_quantile(0.975, 10) == pytest.approx(2.228, abs=2e-3)
    assert t_quantile(0.975, 1000) == pytest.approx(1.962, abs=2e-3)


def test_errors():
    with pytest.raises(ValueError):
        fit_line([1], [1])
    with pytest.raises(ValueError):
        fit_line([1, 1], [1, 2])
