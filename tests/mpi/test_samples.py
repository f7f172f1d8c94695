"""--samples K: repeated measurements, their median and its confidence interval."""

import csv
import json
import os
import signal
import subprocess
import sys
import time

from tests.support.mpirun import ENV, commbench, run_json, terminate, wait_for_records


def test_samples_in_a_real_run(tmp_path):
    out = tmp_path / "s.csv"
    p, doc = run_json(
        tmp_path,
        2,
        "-iter",
        "50",
        "-msglog",
        "2",
        "--samples",
        "6",
        "--csv",
        str(out),
        "PingPong",
        "Allreduce",
    )
    for r in doc["records"]:
        st = r["extra"]["samples"]
        assert st["k"] == 6 and len(st["t_max_samples"]) == 6
        lo, hi = st["t_max_median_ci95"]
        assert lo <= st["t_max_median"] <= hi
        assert len(r["extra"]["rank_samples"]) == 2 and all(
            len(s) == 6 for s in r["extra"]["rank_samples"]
        )
    with open(out) as f:
        rows = list(csv.DictReader(f))
    assert all(row["samples"] == "6" and row["t_max_ci95_low_usec"] for row in rows)
    assert doc["config"]["samples"] == 6


def test_an_absurd_samples_plan_is_refused_unless_forced(tmp_path):
    out = tmp_path / "r.json"
    args = ("run", "-n", "2", "PingPong", "-msglog", "0:3", "-o", str(out))
    p = commbench(*args, "--samples", "2000000")
    assert p.returncode == 2, p.stderr
    assert (
        "--samples 2000000: 5 rows, each cut at -time 10 s: at most about 30 s and 720 MB"
        in p.stderr
    )
    assert (
        "--force" in p.stderr
        and "--samples <= 711111 for this run" in p.stderr
        and not out.exists()
    )
    p = commbench(*args, "--samples", "2000000", "--force", "-time", "0.2", "-iter", "1,off")
    assert p.returncode == 0, p.stderr[-2000:]
    assert "commbench: --samples 2000000: 5 rows, each cut at -time 0.2 s" in p.stderr
    rows = [r for r in json.loads(out.read_text())["records"] if r["status"] == "ok"]
    assert rows and all(r["extra"]["samples"]["k_requested"] == 2_000_000 for r in rows)
    p = commbench("run", "-n", "2", "PingPong", "--force", "-o", "-")
    assert p.returncode == 2 and "--force only lifts the limit of a --samples plan" in p.stderr


def _start_samples_run(out, *args: str) -> subprocess.Popen:
    """A 2-rank PingPong with --samples 100000 (rows last their -time), in the background."""
    cmd = [
        sys.executable,
        "-m",
        "commbench",
        "run",
        "-n",
        "2",
        "PingPong",
        "--samples",
        "100000",
        "-iter",
        "1000,off",
        *args,
        "-o",
        str(out),
    ]
    return subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, **ENV),
    )


def test_a_stopped_samples_row_keeps_every_completed_sample(tmp_path):
    """SIGTERM in the middle of a row of --samples taken one after another: its samples so far
    are one record (status interrupted) with every rank's samples; --engine both's held rows
    survive."""
    out = tmp_path / "stop.json"
    proc = _start_samples_run(
        out, "-msglog", "0:6", "--engine", "both", "-time", "1", "--consecutive-samples"
    )
    try:
        assert (
            wait_for_records(out, 2, proc=proc) == 2
        )  # sizes 0 and 1 natively; mpi4py's size 0 held
    finally:
        _, err = terminate(proc)
    doc = json.loads(out.read_text())
    assert doc["complete"] is False, err
    recs = doc["records"]
    held = [r for r in recs if r["extra"]["engine"] == "mpi4py" and r["status"] == "ok"]
    assert held and held[0]["bytes"] == 0, [
        (r["bytes"], r["status"], r["extra"]["engine"]) for r in recs
    ]
    stopped = [r for r in recs if r["status"] == "interrupted"]
    assert len(stopped) == 1, [(r["bytes"], r["status"], r["extra"]["engine"]) for r in recs]
    r = stopped[0]
    per_rank = r["extra"]["rank_samples"]
    assert len(per_rank) == 2 and all(per_rank) and abs(len(per_rank[0]) - len(per_rank[1])) <= 1
    st = r["extra"]["samples"]
    assert st["k"] == min(map(len, per_rank)) >= 1 and st["k_requested"] == 100000
    assert r["values"]["t_max"] > 0 and "every completed sample is kept" in r["message"]


def test_a_row_the_watchdog_ends_keeps_the_samples_of_the_ranks_that_answer(tmp_path):
    """A rank stops (SIGSTOP) in the middle of --samples taken in rounds: at --timeout the
    watchdog ends the job, and every row keeps rank 0's completed samples, in the sweep's
    order, naming the rank whose samples are missing."""
    from tests.mpi.test_faults import rank_pid

    out = tmp_path / "stuck.json"
    proc = _start_samples_run(out, "-msglog", "0:3", "-time", "30", "--timeout", "4")
    try:
        deadline = time.monotonic() + 60
        while (
            not (out.exists() and out.stat().st_size)
            and time.monotonic() < deadline
            and proc.poll() is None
        ):
            time.sleep(0.1)  # the run has started: its header is written
        time.sleep(5.0)  # well inside the first row's samples (-time 30), also on a loaded machine
        os.kill(rank_pid(str(out), 1), signal.SIGSTOP)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and "watchdog" in doc["summary"]["interrupted"], err[-2000:]
    stopped = [r for r in doc["records"] if r["status"] == "interrupted"]
    assert [r["bytes"] for r in stopped] == [0, 1, 2, 4, 8], err[-2000:]
    ks = [len(r["extra"]["rank_samples"][0]) for r in stopped]
    assert min(ks) >= 1 and max(ks) - min(ks) <= 1, ks  # rounds: no row ahead of another
    for r in stopped:
        per_rank = r["extra"]["rank_samples"]
        assert per_rank[0] and per_rank[1] is None and "(none from rank 1)" in r["message"]
        assert r["extra"]["samples"]["taken"] == "rounds"


def test_samples_are_taken_in_rounds_unless_asked_one_after_another(tmp_path):
    """--samples K takes each row's samples in K rounds over the run, said in the text and in
    every row; --consecutive-samples keeps the form before rounds; it needs --samples K."""
    for extra, taken, said in (
        ((), "rounds", "3 per row, in 3 rounds over the run"),
        (("--consecutive-samples",), "consecutive", "3 per row, one after another"),
    ):
        out = tmp_path / f"{taken}.json"
        p = commbench(
            "run", "-n", "2", "PingPong", "Allreduce", "-msglog", "0:2", "--samples", "3",
            "-iter", "50,off", *extra, "-o", str(out), "--no-progress",
        )  # fmt: skip
        assert p.returncode == 0, p.stderr
        assert f"# Samples                        :   {said}" in p.stdout
        recs = json.loads(out.read_text())["records"]
        sweep = [("PingPong", x) for x in (0, 1, 2, 4)] + [("Allreduce", x) for x in (0, 4)]
        assert [(r["benchmark"], r["bytes"]) for r in recs] == sweep  # the sweep's order
        assert all(r["extra"]["samples"]["taken"] == taken for r in recs)
        assert all(len(s) == 3 for r in recs for s in r["extra"]["rank_samples"])
    p = commbench("run", "-n", "2", "PingPong", "--consecutive-samples", "-o", "-")
    assert p.returncode == 2 and "--consecutive-samples orders the samples of --samples K" in (
        p.stderr
    )
