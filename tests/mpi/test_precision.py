"""--precision P: each row's samples until the 95% CI of its median is within +-P, or its budget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from commbench.harness import precision
from tests.support.mpirun import ENV, mpiexec, run_json, tables, terminate


def test_the_row_reports_its_least_precise_group():
    a = {
        "target": 0.1,
        "achieved": 0.05,
        "reached": True,
        "stopped": "reached",
        "k": 9,
        "secs": 0.1,
    }
    b = dict(a, achieved=0.2, reached=False, stopped="time budget")
    assert precision.worst([None, (0, a), (0, a)]) == a
    row = precision.worst([(0, a), (0, a), (1, b), (1, b)])
    assert row["achieved"] == 0.2 and row["stopped"] == "time budget"
    assert [g["group"] for g in row["groups"]] == [0, 1]
    assert precision.worst([None, None]) is None


def _prec_column(stdout: str) -> list[str]:
    rows = tables(stdout)[("PingPong", 2)]
    return [r[-1] for r in rows]


def test_a_reachable_target_is_reached_and_recorded(tmp_path):
    p, doc = run_json(
        tmp_path, 2, "PingPong", "-msglog", "0:3", "-iter", "20", "--precision", "50%"
    )
    assert doc["config"]["measuring"]["precision"] == 0.5
    recs = [r for r in doc["records"] if r["benchmark"] == "PingPong"]
    assert [r["bytes"] for r in recs] == [0, 1, 2, 4, 8]
    for r in recs:
        pr, st = r["extra"]["precision"], r["extra"]["samples"]
        assert pr["reached"] is True and pr["stopped"] == "reached", pr
        assert pr["achieved"] <= 0.5 and pr["target"] == 0.5
        assert pr["k"] == st["k"] >= 6 and len(st["t_max_samples"]) == pr["k"]
        assert (
            pr["budget_secs"] == 10 and pr["budget_samples"] == 1000
        )  # -time 10 s (default), 1000 samples
        lo, hi = st["t_max_median_ci95"]  # the stored CI says the same
        med = st["t_max_median"]
        assert max(med - lo, hi - med) / med == pytest.approx(pr["achieved"], rel=1e-6)
        assert all(len(s) == pr["k"] for s in r["extra"]["rank_samples"])
    assert "# Precision target               :   +-50% (95% CI of the median t_max)" in p.stdout
    assert all(c != "-" and not c.endswith("*") for c in _prec_column(p.stdout))
    assert "# precision: 5 of 5 rows reached +-50%" in p.stdout and "did not" not in p.stdout


def test_an_impossible_target_stops_by_its_budget_and_says_so(tmp_path):
    p, doc = run_json(
        tmp_path,
        2,
        "PingPong",
        "-msglog",
        "0:2",
        "-iter",
        "20",
        "--precision",
        "0.001%",
        "--precision-budget",
        "1,8",
        "--samples",
        "7",
    )
    recs = doc["records"]
    assert len(recs) == 4
    for r in recs:
        pr = r["extra"]["precision"]
        assert pr["reached"] is False and pr["stopped"] in ("sample budget", "time budget"), pr
        assert 1 <= pr["k"] <= 8 and pr["budget_samples"] == 8 and pr["budget_secs"] == 1
        if pr["stopped"] == "sample budget":
            assert pr["k"] == 8 and pr["achieved"] > 1e-5
        else:
            assert pr["secs"] >= 1
    assert all(c.endswith("*") for c in _prec_column(p.stdout)), p.stdout
    assert (
        "# precision: 0 of 4 rows reached +-0.001% (95% CI of the median t_max); 4 did not (*):"
        in p.stdout
    )
    assert (
        "#   PingPong 2 processes, 4 bytes: +-" in p.stdout
        or "#   PingPong 2 processes, 4 bytes: no CI" in p.stdout
    )
    again = subprocess.run(
        [sys.executable, "-m", "commbench", "report", str(tmp_path / "r2.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        again.returncode == 0 and "4 did not (*)" in again.stdout
    )  # the marks come from the records


def test_samples_k_is_the_least_number_of_samples(tmp_path):
    _, doc = run_json(
        tmp_path,
        2,
        "PingPong",
        "-msglog",
        "0:1",
        "-iter",
        "10",
        "--precision",
        "90%",
        "--samples",
        "15",
    )
    assert all(
        r["extra"]["precision"]["k"] >= 15 and r["extra"]["precision"]["reached"]
        for r in doc["records"]
    )


def test_a_long_row_keeps_the_watchdog_content(tmp_path):
    """A row of 5 s of samples under --timeout 2: every sample beats, the watchdog waits."""
    lens = tmp_path / "lens"
    lens.write_text("4\n")
    p, doc = run_json(
        tmp_path,
        2,
        "PingPong",
        "-msglen",
        str(lens),
        "-iter",
        "50",
        "--precision",
        "0.001%",
        "--precision-budget",
        "5,1000000",
        "--timeout",
        "2",
        timeout=120,
    )
    assert "is slow but moving" in p.stderr and "not ending the job" in p.stderr
    assert "made no progress" not in p.stderr
    (r,) = doc["records"]
    assert r["status"] == "ok" and r["extra"]["precision"]["stopped"] == "time budget"
    assert r["extra"]["precision"]["secs"] >= 5


def test_a_signal_keeps_the_samples_of_a_precision_row(tmp_path):
    out = tmp_path / "stop.json"
    cmd = [
        sys.executable,
        "-m",
        "commbench",
        "run",
        "-n",
        "2",
        "PingPong",
        "-msglog",
        "0:2",
        "-iter",
        "50",
        "--precision",
        "0.001%",
        "--precision-budget",
        "60,100000",
        "-o",
        str(out),
    ]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, **ENV),
    )
    try:
        deadline = time.monotonic() + 60
        while (
            not (out.exists() and out.stat().st_size)
            and time.monotonic() < deadline
            and proc.poll() is None
        ):
            time.sleep(0.1)  # the header is written: the first row is being measured
        time.sleep(2.0)
    finally:
        _, err = terminate(proc)
    doc = json.loads(out.read_text())
    assert doc["complete"] is False, err[-2000:]
    (r,) = [r for r in doc["records"] if r["status"] == "interrupted"]
    pr = r["extra"]["precision"]
    assert (
        pr["stopped"] == "signal" and pr["reached"] is False and pr["target"] == pytest.approx(1e-5)
    )
    assert pr["k"] == r["extra"]["samples"]["k"] >= 1 and pr["budget_samples"] == 100_000


BAD = [
    (["--precision", "0"], "--precision must lie between 0 and 100%"),
    (["--precision", "150%"], "--precision must lie between 0 and 100%"),
    (["--precision", "tight"], "--precision needs a relative precision such as 2% or 0.02"),
    (["--precision-budget", "5"], "--precision-budget bounds --precision"),
    (["--precision", "2%", "--precision-budget", "0"], "secs > 0 and samples >= 2"),
    (
        ["--precision", "2%", "--precision-budget", "1,x"],
        "--precision-budget needs <secs>[,<samples>]",
    ),
    (
        ["--precision", "2%", "--precision-budget", "1,3"],
        "3 samples cannot give a 95% CI of the median",
    ),
    (
        ["--precision", "2%", "--precision-budget", "1,10", "--samples", "20"],
        "--samples 20 with --precision is the least number of samples of a row, more than the 10",
    ),
    (
        ["--suite", "overhead", "--precision", "2%"],
        "--precision: the overhead family does not use it",
    ),
]


@pytest.mark.parametrize("np_", [1, 2])
def test_bad_precision_values_exit_2_on_every_rank(np_):
    def case(item):
        argv, want = item
        return item, mpiexec(np_, "run", *argv, "-o", "-", timeout=60)

    with ThreadPoolExecutor(max_workers=3) as pool:
        for (argv, want), p in pool.map(case, BAD):
            assert p.returncode == 2, (argv, p.stdout[-500:], p.stderr[-1000:])
            assert want in p.stderr, (argv, p.stderr)
            assert "Traceback" not in p.stderr and "Traceback" not in p.stdout, argv


def test_a_precision_plan_too_large_for_the_results_file_is_refused(tmp_path):
    out = tmp_path / "big.json"
    p = mpiexec(
        2,
        "run",
        "PingPong",
        "-msglog",
        "0:3",
        "--precision",
        "1%",
        "--precision-budget",
        "60,2000000",
        "-o",
        str(out),
        timeout=60,
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert "--precision 1%: 5 rows, each at most 2000000 samples in 60 s" in p.stderr
    assert (
        "(accepted: --precision-budget 60,711111 for this run, or fewer rows)" in p.stderr
        and not out.exists()
    )
