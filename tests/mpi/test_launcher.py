"""The self-launcher (`commbench run -n N`): no orphans, no silent launches (issue "Nothing lost,
nothing hung, nothing silent", items 3 and 4)."""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.support.mpirun import ENV, commbench, wait_for_records


def _procs_with(text: str) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and int(d.name) != os.getpid():
            try:
                if text in (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(
                    errors="replace"
                ):
                    out.append(int(d.name))
            except OSError:
                pass
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_sigkill_of_the_launcher_ends_the_job(tmp_path):
    """mpiexec runs in its own session; killed with -9 the launcher used to leave
    mpiexec and every rank running. Now the job ends as a cancelled one does."""
    out = tmp_path / "orphan.json"
    cmd = [
        sys.executable,
        "-m",
        "commbench",
        "run",
        "-n",
        "2",
        "-msglog",
        "0:20",
        "-time",
        "30",
        "-o",
        str(out),
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ, **ENV)
    )
    try:
        wait_for_records(out)
        assert len(_procs_with(str(out))) >= 3  # launcher, mpiexec, ranks
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.time() + 30
    while _procs_with(str(out)) and time.time() < deadline:
        time.sleep(0.2)
    assert not _procs_with(str(out)), "mpiexec or ranks outlived the launcher"
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and doc["records"]  # ended as a cancelled job: records kept
    assert "SIGTERM" in doc["summary"]["interrupted"]
    # the ranks removed the launch token the killed launcher could not (launch_token.orphaned)
    assert not glob.glob(os.path.join(tempfile.gettempdir(), f"commbench-launch-{proc.pid}-*"))


@pytest.mark.parametrize("fake", ["/bin/true", "/bin/false"])
def test_a_launch_that_runs_nothing_is_an_error(tmp_path, fake):
    p = commbench("run", "-n", "2", "--mpiexec", fake, "PingPong", "-o", str(tmp_path / "r.json"))
    assert p.returncode == 3, (p.returncode, p.stderr)
    assert f"{fake} ended with status" in p.stderr and "without running commbench" in p.stderr
    p = commbench("run", "-n", "2", "--mpiexec", fake, "PingPong", "-o", "-")  # no file to look for
    assert p.returncode == 3 and "without running commbench" in p.stderr


@pytest.mark.parametrize("last", ["--mpiexec", "--np"])
def test_a_launch_option_without_its_value_is_refused(last):
    """Not started with the default mpiexec, nor with -n's count: the parse names it."""
    p = commbench("run", "-n", "2", "PingPong", "-o", "-", last)
    assert p.returncode == 2 and last in p.stderr, (p.returncode, p.stderr[-500:])


def test_nothing_to_measure_is_refused(tmp_path):
    p = commbench("run", "-n", "1", "PingPong", "-o", str(tmp_path / "r.json"))
    assert p.returncode == 2 and "nothing to measure with 1 process: PingPong needs 2" in p.stderr
    assert not (tmp_path / "r.json").exists()


def test_a_job_stuck_in_mpi_init_is_ended(tmp_path):
    """Rank 1 never reaches MPI_Init (COMMBENCH_FAULT_INIT_HANG), so rank 0 waits inside
    it, as behind a peer that cannot be reached: the launcher's start-up deadline ends
    the whole job with a message instead of waiting forever."""
    out = tmp_path / "hang.json"
    shm = Path("/dev/shm")
    before = set(shm.glob("mpich_shm_*")) if shm.is_dir() else set()
    t0 = time.monotonic()
    p = commbench(
        "run",
        "-n",
        "2",
        "PingPong",
        "-o",
        str(out),
        timeout=120,
        env={"COMMBENCH_STARTUP_TIMEOUT": "4", "COMMBENCH_FAULT_INIT_HANG": "1"},
    )
    assert p.returncode == 3, p.stderr[-2000:]
    assert "did not get through MPI_Init in 4 s" in p.stderr
    assert time.monotonic() - t0 < 60
    assert not _procs_with(str(out))
    # rank 0 made its segment inside MPI_Init and was killed there: the launcher removed it
    assert not (set(shm.glob("mpich_shm_*")) - before if shm.is_dir() else set())


def test_the_launcher_remembers_the_family_of_an_mpiexec_until_it_changes(tmp_path):
    """`mpiexec --version` is asked once per mpiexec file (every self-launched run needs its
    family); the cache serves it until the file's stamp (mtime, size) changes."""
    mx = tmp_path / "mpiexec"
    mx.write_text("#!/bin/sh\necho 'HYDRA build details:'\necho \"$0\" >> " + f"{tmp_path}/asked\n")
    mx.chmod(0o755)
    code = "import sys; from commbench import mpilib; print(mpilib.launcher_family(sys.argv[1])[0])"
    env = dict(os.environ, COMMBENCH_CACHE_DIR=str(tmp_path / "cache"))

    def family() -> str:
        p = subprocess.run(
            [sys.executable, "-c", code, str(mx)], capture_output=True, text=True, env=env
        )
        assert p.returncode == 0, p.stderr
        return p.stdout.strip()

    asked = tmp_path / "asked"
    assert family() == "hydra" and len(asked.read_text().splitlines()) == 1
    assert family() == "hydra" and len(asked.read_text().splitlines()) == 1  # from the cache
    mx.write_text(mx.read_text().replace("HYDRA build details:", "mpiexec (Open MPI) 5.0.11"))
    assert family() == "openmpi" and len(asked.read_text().splitlines()) == 2  # asked again


def test_the_launcher_remembers_which_library_mpi4py_loads(tmp_path):
    """The launcher learns the library from a child Python once, then from the cache, until
    the library file changes (here: its recorded stamp no longer matches)."""
    code = (
        "import sys; from commbench import mpilib; lib = mpilib.of_python(sys.executable); "
        "print(lib.name, lib.flavour, lib.path)"
    )
    env = dict(os.environ, COMMBENCH_CACHE_DIR=str(tmp_path))
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert first.returncode == 0 and " mpich " in first.stdout, first.stderr
    (saved,) = (tmp_path / "mpilib").glob("*.json")
    doc = json.loads(saved.read_text())
    assert doc["stamp"].startswith(doc["path"] + ":") and doc["version"].startswith("MPICH")
    doc["version"] = "Open MPI v9.9.9, not this library"  # an answer the cache must not serve
    saved.write_text(json.dumps(doc))
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert again.stdout.startswith("Open MPI 9.9.9 openmpi")  # served from the cache
    doc["stamp"] = doc["path"] + ":0:0"  # as if the library file had changed
    saved.write_text(json.dumps(doc))
    third = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert third.stdout == first.stdout and json.loads(saved.read_text())["stamp"] != doc["stamp"]
