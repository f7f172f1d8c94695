"""The watchdog's channel to rank 0 (commbench.peers): a rank that ends without finishing is
lost and named with its host; rank 0's word ends the others.

Real sockets and processes, no MPI: the watchdogs of rank 0 and rank 1 in two
processes, one of them killed. (MPICH's mpiexec -disable-auto-cleanup, which
would leave the other ranks running as srun without --kill-on-bad-exit does,
crashed its own proxy here: "HYDU_sock_write … Bad file descriptor".) In real
jobs across nodes the same is proven under Slurm by tests/system/test_slurm_cluster.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from commbench import peers
from tests.support.waiting import until as _until

ROOT = str(Path(__file__).resolve().parents[2])


def test_lost_rank_and_bye():
    """Rank 1 (another process) is SIGKILLed: lost, on its host; rank 2 says bye: not lost."""
    hub = peers.Hub(3)
    info = hub.open()
    assert info is not None and info[2] is True  # room for the connections: they are held
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time; from commbench import peers; "
                f"link = peers.Link(1, 'nodeA', ({info[0]!r}, {info[1]}, True)); "
                "print(link.conn is not None, flush=True); time.sleep(60)"
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=ROOT),
    )
    try:
        assert child.stdout.readline().strip() == "True"
        two = peers.Link(2, "nodeB", info)
        assert _until(lambda: (hub.poll(0.05), len(hub.known) == 2)[1])
        assert hub.host(1) == "nodeA" and hub.host(2) == "nodeB"
        two.close(bye=True)
        child.send_signal(signal.SIGKILL)
        assert _until(lambda: (hub.poll(0.05), 1 in hub.lost)[1])
        assert _until(lambda: (hub.poll(0.05), 2 not in {p.rank for p in hub.peers.values()})[1])
        assert set(hub.lost) == {1} and hub.lost_at is not None
    finally:
        child.kill()
        child.wait()
        hub.close()


RANK0 = """
import json, sys, time
from commbench.watchdog import Watchdog
wd = Watchdog(float(sys.argv[2]), 0, 2, host="node0", on_end=lambda why: open(sys.argv[1], "w").write(why))
info = wd.listen()
wd.start(info)
print(json.dumps(info), flush=True)
wd.progress(benchmark="Allreduce", np=2, bytes=8, phase="the timed kernel")
time.sleep(60)
"""  # noqa: E501
RANK1 = """
import json, sys, time
from commbench.watchdog import Watchdog
info = json.loads(sys.stdin.readline())
wd = Watchdog(float(sys.argv[1]), 1, 2, host="nodeA")
wd.start(info)
wd.progress(benchmark="Allreduce", np=2, bytes=8, phase="the timed kernel")
print("joined", flush=True)
time.sleep(60)
"""


def _pair(tmp_path: Path, timeout: float = 60) -> tuple[subprocess.Popen, subprocess.Popen, Path]:
    """Two watchdogs in two processes (no MPI): rank 0 and rank 1, joined."""
    why = tmp_path / "why"
    env = dict(os.environ, PYTHONPATH=ROOT)
    r0 = subprocess.Popen(
        [sys.executable, "-c", RANK0, str(why), str(timeout)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    info = r0.stdout.readline()
    r1 = subprocess.Popen(
        [sys.executable, "-c", RANK1, str(timeout)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    r1.stdin.write(info)
    r1.stdin.flush()
    assert r1.stdout.readline().strip() == "joined"
    return r0, r1, why


def _ended(p: subprocess.Popen, limit: float) -> tuple[float, str]:
    t0 = time.monotonic()
    try:
        _, err = p.communicate(timeout=limit)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    return time.monotonic() - t0, err


def test_rank0_ends_the_job_when_a_rank_is_lost(tmp_path):
    """Rank 1 SIGKILLed, nothing else ends the job (srun without --kill-on-bad-exit): rank 0
    ends it after LOST_GRACE, status 3, naming rank 1 and its host in the results' reason."""
    r0, r1, why = _pair(tmp_path)
    try:
        time.sleep(0.6)  # a tick: rank 0 has the hello
        r1.kill()
        took, err = _ended(r0, 20)
    finally:
        for p in (r0, r1):
            p.kill()
            p.wait()
    assert r0.returncode == 3 and 2.5 < took < 8, (took, err)
    assert "commbench: lost rank 1 on nodeA: ended without finishing the run" in err
    assert (
        why.read_text().startswith("lost rank 1 on nodeA:")
        and "Allreduce, NP 2, 8 bytes" in why.read_text()
    )


def test_the_others_leave_at_rank0s_word_or_end(tmp_path):
    """Rank 0's watchdog fires (--timeout 1): rank 1 leaves with 124 at its word, at once, not
    15 s later. Rank 0 SIGKILLed: rank 1 leaves after LOST_GRACE, status 3, saying why."""
    r0, r1, _ = _pair(tmp_path, timeout=1.0)
    try:
        took, _ = _ended(r1, 20)
    finally:
        for p in (r0, r1):
            p.kill()
            p.wait()
    assert r1.returncode == 124 and took < 8, took
    r0, r1, _ = _pair(tmp_path)
    try:
        r0.kill()
        took, err = _ended(r1, 20)
    finally:
        for p in (r0, r1):
            p.kill()
            p.wait()
    assert r1.returncode == 3 and took < 8 and "rank 0 is gone" in err, (took, err)
