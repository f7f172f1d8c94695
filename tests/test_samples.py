"""--samples K: repeated measurements, their median and its confidence interval."""

import csv

import pytest

from commbench import records
from tests.mpirun import run_json


def test_median_ci_order_statistics():
    assert records.median_ci([1, 2, 3, 4, 5]) is None  # K < 6: no 95% interval exists
    assert records.median_ci([6, 5, 4, 3, 2, 1]) == (1, 6)
    assert records.median_ci(list(range(1, 21))) == (6, 15)  # the textbook table
    assert records.median_ci(list(range(1, 101))) == (40, 61)


def test_sample_stats_use_the_slowest_rank_per_sample():
    st = records.sample_stats([[1e-6, 4e-6], [3e-6, 2e-6], None, [-1.0, -1.0]], factor=0.5)
    assert st["k"] == 2 and st["t_max_samples"] == pytest.approx([1.5, 2.0])


def test_samples_in_a_real_run(tmp_path):
    out = tmp_path / "s.csv"
    p, doc = run_json(tmp_path, 2, "-iter", "50", "-msglog", "2", "--samples", "6", "--csv", str(out),
                      "PingPong", "Allreduce")
    for r in doc["records"]:
        st = r["extra"]["samples"]
        assert st["k"] == 6 and len(st["t_max_samples"]) == 6
        lo, hi = st["t_max_median_ci95"]
        assert lo <= st["t_max_median"] <= hi
        assert len(r["extra"]["rank_samples"]) == 2 and all(len(s) == 6 for s in r["extra"]["rank_samples"])
    with open(out) as f:
        rows = list(csv.DictReader(f))
    assert all(row["samples"] == "6" and row["t_max_ci95_low_usec"] for row in rows)
    assert doc["config"]["samples"] == 6
