"""No /dev/shm segment of a run survives a bad end (issue "No false success in any family", item 6).

MPICH keeps its node segments (/dev/shm/mpich_shm_*) until MPI_Finalize. Each
case starts a real run, waits for its segment to appear, ends the run badly
(SIGTERM, the watchdog, a rank killed with SIGKILL, a failure that aborts)
and checks that the segment is gone. Tests run one at a time, so a segment
that appears during a case is that case's.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.mpirun import ENV

SHM = Path("/dev/shm")
pytestmark = pytest.mark.skipif(not SHM.is_dir(), reason="no /dev/shm on this system")


def _segments() -> set[str]:
    return {p.name for p in SHM.glob("mpich_shm_*")}


def _rank_pids(segment: str) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if segment in (d / "maps").read_text():
                    out.append(int(d.name))
            except OSError:
                pass
    return out


def _run_and_end(
    tmp_path, args: list[str], end, env: dict | None = None
) -> tuple[int, str, set[str]]:
    before = _segments()
    cmd = [
        sys.executable,
        "-m",
        "commbench",
        "run",
        "-n",
        "2",
        *args,
        "-o",
        str(tmp_path / "r.json"),
    ]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, **ENV, **(env or {})),
    )
    try:
        deadline = time.time() + 60
        mine: set[str] = set()
        while not mine and time.time() < deadline and proc.poll() is None:
            mine = _segments() - before
            time.sleep(0.05)
        assert mine, "no segment appeared"
        time.sleep(1.0)  # inside the measurements
        end(proc, sorted(mine)[0])
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.time() + 10  # a killed rank's guardian removes them once the rank is gone
    while mine & _segments() and time.time() < deadline:
        time.sleep(0.1)
    return proc.returncode, err, mine & _segments()


LONG = ["-msglog", "0:20", "-time", "30"]


def test_sigterm_leaves_no_segment(tmp_path):
    rc, err, left = _run_and_end(tmp_path, LONG, lambda p, s: p.send_signal(signal.SIGTERM))
    assert rc == 143, err[-2000:]
    assert not left, left


def test_killed_rank_leaves_no_segment(tmp_path):
    def kill_one(_proc, seg):
        os.kill(max(_rank_pids(seg)), signal.SIGKILL)

    rc, err, left = _run_and_end(tmp_path, LONG, kill_one)
    assert rc != 0
    assert not left, left


def test_watchdog_stop_leaves_no_segment(tmp_path):
    args = [
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
        "4",
    ]
    rc, err, left = _run_and_end(tmp_path, args, lambda p, s: None)
    assert rc == 124, err[-2000:]
    assert not left, left


def test_failure_that_aborts_leaves_no_segment(tmp_path):
    d = tmp_path / "io"
    d.mkdir()
    args = ["--suite", "io", "P_Write_Priv", "P_Read_Indv", "-msglog", "0:16", "--iodir", str(d)]
    rc, err, left = _run_and_end(
        tmp_path, args, lambda p, s: None, env={"COMMBENCH_FAULT_IO_FAIL": "1"}
    )
    assert rc == 3 and "injected failure" in err, err[-2000:]
    assert not left, left
