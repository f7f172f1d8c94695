"""Faults in real MPI jobs: a stalled rank, a killed rank, Ctrl-C.

Each run is long enough (many sizes, -time 0.3 per size) to be interrupted in
the middle; the tests wait until the results file holds records, inject the
fault, and then require: the job ends promptly with a useful message and a
non-zero status, and the results file is valid JSON, marked incomplete with a
reason, holding every record measured before the fault.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from commbench.views import results_file
from tests.support.mpirun import ENV, MPIEXEC, records_in

ROOT = str(Path(__file__).resolve().parents[2])  # this checkout's commbench, whatever the cwd
# ~0.2 s per size (the cap bounds the ~1 s preparatory run of the dynamic policy), ~12 s in all
LONG = [
    "-iter",
    "20000,100000",
    "-time",
    "0.15",
    "-msglog",
    "20",
    "PingPong",
    "PingPing",
    "Sendrecv",
]


def job_env() -> dict:
    return dict(
        os.environ,
        **ENV,
        PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])),
    )


def start(args: list[str], direct: bool, np_: int = 2) -> subprocess.Popen:
    env = job_env()
    if direct:
        cmd = [MPIEXEC, "-n", str(np_), sys.executable, "-m", "commbench", "run", *args]
    else:
        cmd = [sys.executable, "-m", "commbench", "run", "-n", str(np_), *args]
    return subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_terminal_signals,
    )


def _terminal_signals() -> None:
    """The run gets Ctrl-C as from a terminal, also when the suite itself was started in the
    background of a shell (which ignores SIGINT there, and an ignored signal is inherited)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_records(path: Path, proc: subprocess.Popen, n: int, limit: float = 120) -> None:
    end = time.monotonic() + limit
    while records_in(path) < n:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the run made no records"
        time.sleep(0.1)


def rank_pid(marker: str, rank: int) -> int:
    """The pid of the commbench process of `rank` whose command line holds marker."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
            env = (d / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in cmd and b"commbench" in cmd and f"PMI_RANK={rank}".encode() in env:
            return int(d.name)
    raise AssertionError(f"no process of rank {rank} for {marker}")


def finish(proc: subprocess.Popen, limit: float) -> tuple[int, str, str, float]:
    t0 = time.monotonic()
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the job did not end within {limit} s:\n{err[-3000:]}")
    return proc.returncode, out, err, time.monotonic() - t0


def check_file(path: Path, before: int) -> dict:
    doc = results_file.load(str(path))  # valid JSON, a results file
    assert doc["complete"] is False
    assert doc["summary"]["interrupted"]
    assert len(doc["records"]) >= before
    assert all(r["status"] == "time-out" or r["values"]["t_max"] > 0 for r in doc["records"])
    return doc


def test_stalled_rank_ends_by_watchdog(tmp_path):
    out = tmp_path / "stall.json"
    # 3 ranks on 2 cores: ~1 ms per repetition, so cap the repetitions (a size then
    # takes at most ~1.2 s, well inside --timeout 5) and let rank 2 idle beside PingPong.
    stall = ["-iter", "1000", "-time", "0.2", "-msglog", "16", "PingPong", "PingPing", "Sendrecv"]
    proc = start([*stall, "--timeout", "5", "-o", str(out)], direct=True, np_=3)
    try:
        wait_records(out, proc, 3)
        victim = rank_pid(str(out), 1)
        before = records_in(out)
        os.kill(victim, signal.SIGSTOP)
        rc, stdout, err, _ = finish(proc, 60)
    finally:
        if proc.poll() is None:
            proc.kill()
    # Hydra reports the first status it sees: 124 from rank 0, or 9 from a rank it killed
    assert rc in (124, 9), err[-3000:]
    assert "no progress for 5 s (--timeout)" in err
    assert "rank 1 did not answer" in err  # the stopped rank is named
    assert "rank 2 (" in err and "answered" in err  # the idle rank reported where it waited
    assert "PingPong" in err or "PingPing" in err or "Sendrecv" in err
    doc = check_file(out, before)
    why = doc["summary"]["interrupted"]
    assert why.startswith("watchdog:") and "ranks not answering: 1" in why
    assert "# !! run ended early: watchdog" in stdout


@pytest.mark.parametrize("signo", [signal.SIGKILL, signal.SIGSEGV])
def test_killed_rank_direct_mpiexec(tmp_path, signo):
    out = tmp_path / "kill.json"
    proc = start([*LONG, "-o", str(out)], direct=True)
    try:
        wait_records(out, proc, 2)
        before = records_in(out)
        os.kill(rank_pid(str(out), 1), signo)
        rc, stdout, err, _ = finish(proc, 30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert rc != 0
    assert "BAD TERMINATION" in stdout + err  # Hydra names the failed process
    doc = check_file(out, before)
    # rank 0 was killed by the process manager: the provisional reason says so
    assert "did not finish" in doc["summary"]["interrupted"]


def test_killed_rank_launcher_marks_file(tmp_path):
    out = tmp_path / "kill.json"
    proc = start([*LONG, "-o", str(out)], direct=False)
    try:
        wait_records(out, proc, 2)
        before = records_in(out)
        os.kill(rank_pid(str(out), 1), signal.SIGKILL)
        rc, _, err, _ = finish(proc, 30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert rc == 9
    assert "the MPI job ended with status 9" in err and "SIGKILL" in err
    doc = check_file(out, before)
    assert "status 9" in doc["summary"]["interrupted"]
    assert not doc["summary"].get("provisional")


def test_ctrl_c_at_launcher(tmp_path):
    out = tmp_path / "int.json"
    proc = start([*LONG, "-o", str(out)], direct=False)
    try:
        wait_records(out, proc, 2)
        before = records_in(out)
        proc.send_signal(signal.SIGINT)
        rc, stdout, err, _ = finish(proc, 30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert rc == 130
    assert "interrupted by SIGINT (Ctrl-C)" in err
    doc = check_file(out, before)
    assert "SIGINT" in doc["summary"]["interrupted"] and "rank 0:" in doc["summary"]["interrupted"]
    assert "# !! run ended early: interrupted by SIGINT" in stdout
    assert "Traceback" not in err


def test_default_output_is_finished_by_launcher(tmp_path):
    """Without -o the launcher still knows the file (it picks the name) and marks it."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "commbench", "run", "-n", "2", *LONG],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=job_env(),
        cwd=tmp_path,
    )
    try:
        end = time.monotonic() + 120
        files: list[Path] = []
        while not files or records_in(files[0]) < 1:
            assert proc.poll() is None and time.monotonic() < end, proc.communicate()
            files = list((tmp_path / "results").glob("commbench-mpi1-*.json"))
            time.sleep(0.1)
        os.kill(_rank_in(tmp_path, 1), signal.SIGKILL)
        rc, _, _, _ = finish(proc, 30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert rc == 9
    doc = check_file(files[0], 1)
    assert "status 9" in doc["summary"]["interrupted"]


def _rank_in(cwd: Path, rank: int) -> int:
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if Path(os.readlink(d / "cwd")) != cwd:
                continue
            env = (d / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"PMI_RANK={rank}".encode() in env:
            return int(d.name)
    raise AssertionError(f"no rank {rank} running in {cwd}")
