"""Unbounded and mislabelled runs (issue "No false success in any family", item 5).

--samples is bounded by the time budget; the watchdog tells slow progress
(steps still being made) from none, says early that a measurement is overdue,
and names where every rank is (a computation is not called a deadlock).
"""

from __future__ import annotations

import json
import time

from tests.support.mpirun import commbench


def test_samples_are_bounded_by_the_time_budget(tmp_path):
    out = tmp_path / "s.json"
    t0 = time.monotonic()
    p = commbench(
        "run",
        "-n",
        "2",
        "--suite",
        "comms",
        "COMMS1",
        "--samples",
        "1000000",
        "-iter",
        "1,off",
        "-time",
        "1",
        "-msglog",
        "0:1",
        "-o",
        str(out),
        timeout=120,
    )
    took = time.monotonic() - t0
    assert p.returncode == 0, p.stderr[-2000:]
    assert took < 60, took
    rows = [r for r in json.loads(out.read_text())["records"] if r["status"] == "ok"]
    assert rows
    s = rows[0]["extra"]["samples"]
    assert 6 <= s["k"] < 1_000_000 and s["k_requested"] == 1_000_000  # cut by -time, and says so
    assert len(s["t_max_samples"]) == s["k"] and s["t_max_median_ci95"] is not None


def test_slow_but_moving_is_not_ended(tmp_path):
    """msgrate iterations are steps: past --timeout the watchdog says so and waits on."""
    p = commbench(
        "run",
        "-n",
        "4",
        "--suite",
        "msgrate",
        "--peers",
        "2",
        "--iters",
        "400",
        "--timeout",
        "1",
        "all_start",
        "-o",
        str(tmp_path / "m.json"),
        timeout=240,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert "is slow but moving" in p.stderr and "not ending the job" in p.stderr
    assert "made no progress" not in p.stderr
    assert json.loads((tmp_path / "m.json").read_text())["complete"] is True


def test_a_long_computation_is_named_not_called_a_deadlock(tmp_path):
    # The mpi4py engine: its computation is Python's (cpu.py); the native engine's runs
    # inside the C loop, named by the line that called it (native/__init__.py).
    p = commbench(
        "run",
        "-n",
        "2",
        "--suite",
        "nbc",
        "Ibcast",
        "-msglog",
        "0:1",
        "--nbc-cpu-factor",
        "1e6",
        "-iter",
        "5,off",
        "--timeout",
        "8",
        "--engine",
        "mpi4py",
        "-o",
        str(tmp_path / "n.json"),
        timeout=120,
    )
    assert p.returncode == 124, p.stderr[-3000:]
    err = p.stderr
    # early: overdue after a quarter of --timeout, long before the end
    assert (
        "no progress for 2 s in Ibcast" in err
        and "the job is ended at --timeout 8 s unless it moves" in err
    )
    assert "deadlock" not in err
    assert "answered: Ibcast, NP 2" in err and "at cpu.py:" in err  # where each rank was: computing
    doc = json.loads((tmp_path / "n.json").read_text())
    assert (
        doc["complete"] is False
        and "none moved (rank 0 at cpu.py:" in doc["summary"]["interrupted"]
    )
