"""Run commbench in real MPI processes (the bundled MPICH) from the tests."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from commbench.self_launcher import find_mpiexec

MPIEXEC = find_mpiexec()
# Oversubscribed MPICH (4 processes on 2 cores) busy-polls into scheduler time
# slices; throttled polling keeps the tests fast. Timings are not asserted.
ENV = {
    "MPIR_CVAR_CH4_PROGRESS_THROTTLE": "1",
    "MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT": "64",
}
# -iter bounds the repetitions; a generous -time keeps the per-mode time budget
# (spec 5.4) from cutting rows when the machine is loaded.
FAST = ["-iter", "40", "-time", "10"]


def mpiexec(
    np_: int,
    *args: str,
    timeout: float = 180,
    env: dict | None = None,
    cwd: str | Path | None = None,
) -> subprocess.CompletedProcess:
    """`mpiexec -n np python -m commbench <args>`: commbench started by the job."""
    e = dict(os.environ, **ENV, **(env or {}))
    cmd = [MPIEXEC, "-n", str(np_), sys.executable, "-m", "commbench", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e, cwd=cwd)


def commbench(
    *args: str, timeout: float = 180, env: dict | None = None, cwd: str | Path | None = None
) -> subprocess.CompletedProcess:
    """`python -m commbench <args>` as a user types it (self-launch with -n)."""
    e = dict(os.environ, **ENV, **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "commbench", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=e,
        cwd=cwd,
    )


def run_json(
    tmp_path: Path, np_: int, *args: str, **kw
) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / f"r{np_}.json"
    p = mpiexec(np_, "run", *args, "-o", str(out), **kw)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return p, json.loads(out.read_text())


def tables(stdout: str) -> dict[tuple[str, int], list[list[str]]]:
    """(name, #processes) -> data rows split into fields, from IMB text."""
    out: dict = {}
    name = np_ = None
    rows = None
    for line in stdout.splitlines():
        if line.startswith("# Benchmarking "):
            name = line.split()[2]
        elif line.startswith("# #processes = "):
            np_ = int(line.split("=")[1].split(";")[0])
        elif line.startswith("# ( ") and "groups of" in line:
            np_ = int(line.split()[5])
        elif (
            name
            and line.strip().startswith(("#bytes", "#repetitions", "Group"))
            and not line.startswith("#")
        ):
            rows = out.setdefault((name, np_), [])
        elif rows is not None and line.strip() and not line.startswith("#") and line[0] == " ":
            rows.append(line.split())
        elif line.startswith("#") or not line.strip():
            if line.startswith("#-"):
                rows = None
    return out


def records_in(path: Path, unreadable: int | None = 0) -> int | None:
    """How many records a results file being written holds now (`unreadable` while it
    cannot be read: missing, or caught between a record's bytes and the closing ones)."""
    try:
        return len(json.loads(Path(path).read_text()).get("records", []))
    except (OSError, ValueError):
        return unreadable


def terminate(proc: subprocess.Popen) -> tuple[str, str]:
    """SIGTERM to a started run and its (stdout, stderr) once it ended (60 s at most; a
    run still there then is killed, and the timeout raised)."""
    try:
        proc.send_signal(signal.SIGTERM)
        return proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()


def wait_for_records(path: Path, n: int = 1, timeout: float = 60, proc=None) -> int:
    """Poll until the results file holds n records (or timeout, or proc ends); the count."""
    deadline = time.time() + timeout
    while records_in(path) < n and time.time() < deadline and (proc is None or proc.poll() is None):
        time.sleep(0.05)
    return records_in(path)


@contextmanager
def tiny_tmpfs(where: Path, size: str):
    """A small tmpfs at `where` (a disk that fills up);
    skips the test where it cannot be mounted."""
    import pytest

    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("a full disk is a small tmpfs, which only root can mount")
    where.mkdir(exist_ok=True)
    if (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)]
        ).returncode
        != 0
    ):
        pytest.skip("mount -t tmpfs failed here (no CAP_SYS_ADMIN in this container)")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)])


def fill(f) -> None:
    """Write to an unbuffered file (open(..., "wb", buffering=0)) until its disk is full;
    close it."""
    with f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
