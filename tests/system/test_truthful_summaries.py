"""Summaries that tell the truth (issue "No false success in any family", item 2).

A run that ended early never says "ALL BENCHMARKS SUCCESSFUL": the check
trailer names the benchmark the run ended in and the ones it never reached,
after a signal and after a full disk. The terminal and the results file agree
on whether a run completed, whichever of "completed" and "interrupted" comes
first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from mpi4py import MPI

from commbench import run_config
from commbench.mpi_job import Finisher
from commbench.session import Session
from commbench.views.results_file import JsonResults
from tests.support.mpirun import ENV, fill, terminate, tiny_tmpfs, wait_for_records
from tests.support.results_schema import run_header


def _trailer(stdout: str) -> dict[str, str]:
    """benchmark -> its line in the check trailer."""
    out = {}
    trailer = stdout[stdout.rindex("!!!!  ") :]
    for line in trailer.splitlines():
        if "    : " in line:
            name, word = line.split("    : ", 1)
            out[name.strip()] = word
    return out


def test_sigterm_mid_nbc_check_run_says_where_it_ended(tmp_path):
    out = tmp_path / "r.json"
    cmd = [
        sys.executable,
        "-m",
        "commbench",
        "run",
        "-n",
        "2",
        "--suite",
        "nbc",
        "-check",
        "-msglog",
        "0:14",
        "-o",
        str(out),
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, **ENV)
    )
    try:
        wait_for_records(out, 20, 120, proc)
        assert proc.poll() is None, "the run ended before it could be interrupted"
    finally:
        stdout, stderr = terminate(proc)
    assert proc.returncode == 143, stderr[-2000:]
    assert "ALL BENCHMARKS SUCCESSFUL" not in stdout and "ALL CHECKED" not in stdout
    assert "!!!!  RUN ENDED EARLY: NOT EVERY BENCHMARK WAS CHECKED !!!! " in stdout
    doc = json.loads(out.read_text())
    assert doc["complete"] is False
    running = doc["summary"]["running"]
    verdicts = _trailer(stdout)
    assert verdicts[running] == "interrupted (the run ended in it)", verdicts
    order = list(verdicts)
    assert order[-1] == "Ibarrier" and verdicts["Ibarrier"] == "not run (the run ended before it)"
    after = order[order.index(running) + 1 :]
    assert after and all(verdicts[b].startswith("not run") for b in after), verdicts
    assert all(verdicts[b] == "Successful" for b in order[: order.index(running)]), verdicts
    # said once, by rank 0, where the results are: not again by the launcher
    assert stderr.count("results so far (complete: false)") == 1, stderr


def test_full_disk_mid_io_check_run_is_not_a_success(tmp_path):
    with tiny_tmpfs(tmp_path / "tiny", "40m") as d:
        out = tmp_path / "io.json"
        cmd = [
            sys.executable,
            "-m",
            "commbench",
            "run",
            "-n",
            "2",
            "--suite",
            "io",
            "-check",
            "--iodir",
            str(d),
            "-msglog",
            "0:22",
            "-o",
            str(out),
        ]
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, **ENV),
        )
        deadline = time.time() + 120
        while not [n for n in os.listdir(d) if n.startswith("IMB_out")] and time.time() < deadline:
            time.sleep(0.05)
        fill(open(d / "filler", "wb", buffering=0))  # the disk fills up under the run
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 3, stderr[-2000:]
        assert "No space left on device" in stderr
        assert "ALL BENCHMARKS SUCCESSFUL" not in stdout
        assert "!!!!  RUN ENDED EARLY: NOT EVERY BENCHMARK WAS CHECKED !!!! " in stdout
        verdicts = _trailer(stdout)
        assert "interrupted (the run ended in it)" in verdicts.values()
        assert verdicts["Open_Close"].startswith("not run")
        doc = json.loads(out.read_text())
        assert doc["complete"] is False and "No space left" in doc["summary"]["interrupted"]
        assert not [n for n in os.listdir(d) if n != "filler"]  # no IO file left


def _finisher(tmp_path: Path) -> tuple[Finisher, Path]:
    out = tmp_path / "f.json"
    cfg = run_config.parse_run_args(["Allreduce", "-o", str(out)], world_size=1)
    sink = JsonResults(str(out))
    sink.start(dict(run_header(), config=cfg.resolved()))  # a run's header: the file validates
    return Finisher(Session(cfg, MPI.COMM_SELF, [sink]), time.time(), str(out)), out


def test_completed_then_signal_keeps_complete_and_says_so(tmp_path, capsys):
    fin, out = _finisher(tmp_path)
    fin.completed(0)
    fin.interrupted("terminated by SIGTERM")
    err = capsys.readouterr().err
    assert json.loads(out.read_text())["complete"] is True
    assert "complete: false" not in err
    assert (
        f"terminated by SIGTERM after the run completed; its results (complete: true) are in {out}"
        in err
    )


def test_signal_then_completed_stays_interrupted(tmp_path, capsys):
    fin, out = _finisher(tmp_path)
    fin.interrupted("terminated by SIGTERM")
    fin.completed(0)
    err = capsys.readouterr().err
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and doc["summary"]["interrupted"] == "terminated by SIGTERM"
    assert "results written" not in err and "results so far (complete: false) written" in err


def test_full_disk_under_the_results_file_keeps_it_valid(tmp_path):
    """The results file's own disk fills up: the file stays valid with the records it
    had (no partial record, no .tmp beside it), the message says what was not saved,
    and the exit status is not 0."""
    with tiny_tmpfs(tmp_path / "tiny", "1m") as d:
        out = d / "r.json"
        # ~0.3 s per row: the disk is full long before the run could end
        cmd = [
            sys.executable,
            "-m",
            "commbench",
            "run",
            "-n",
            "2",
            "--suite",
            "nbc",
            "Ibcast",
            "--nbc-cpu-factor",
            "100",
            "-iter",
            "500,off",
            "-msglog",
            "0:12",
            "-o",
            str(out),
        ]
        filler = open(d / "filler", "wb", buffering=0)  # noqa: SIM115 - created now, filled once records are in
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, **ENV),
        )
        wait_for_records(out, 3, 60, proc)
        fill(filler)  # the rest of the disk goes
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 3, stderr[-2000:]
        assert "No space left on device" in stderr
        assert "results written to" not in stderr
        doc = json.loads(out.read_text())  # valid JSON, every whole record
        assert doc["complete"] is False and len(doc["records"]) >= 3
        assert sorted(os.listdir(d)) == ["filler", "r.json"]  # no .tmp left
