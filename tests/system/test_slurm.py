"""commbench under a real one-node Slurm (tests/support/slurm.py): srun, sbatch, salloc, scancel
(issue "Nothing lost, nothing hung, nothing silent", item 5)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tests.support.mpirun import MPIEXEC, records_in, wait_for_records
from tests.support.slurm import Cluster, Unavailable

pytestmark = pytest.mark.needs("slurm")

PY = sys.executable
SHORT = ["PingPong", "Allreduce", "-msglog", "0:2", "-iter", "20"]


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    try:
        c = Cluster(tmp_path_factory.mktemp("slurm")).start()
    except (Unavailable, OSError, subprocess.SubprocessError) as e:
        pytest.skip(f"no Slurm here: {e}")
    yield c
    c.stop()


def _run(slurm, *cmd: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        list(cmd), capture_output=True, text=True, timeout=timeout, env=slurm.env()
    )


@pytest.mark.parametrize("n", [2, 4])
def test_srun_pmi2(slurm, tmp_path, n):
    out = tmp_path / "r.json"
    p = _run(
        slurm,
        "srun",
        "--mpi=pmi2",
        "-n",
        str(n),
        PY,
        "-m",
        "commbench",
        "run",
        *SHORT,
        "-o",
        str(out),
    )
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(out.read_text())
    meta = doc["metadata"]
    assert doc["complete"] is True and meta["world_size"] == n
    assert (
        meta["launcher"] == "srun"
        and meta["slurm"]["job_id"]
        and meta["slurm"]["step_tasks"] == str(n)
    )
    assert meta["pmi"]["PMI_SIZE"] == str(n)
    if n > 2:  # more tasks than this 2-core node has cores: throttled polling, said and recorded
        assert (
            "srun tasks on 2 cores: MPICH " in p.stderr
            and "progress throttling enabled" in p.stderr
            and meta["mpi_env"]["MPIR_CVAR_CH4_PROGRESS_THROTTLE"] == "1"
            and "MPIR_CVAR_CH4_PROGRESS_THROTTLE" in {s["name"] for s in meta["launch_settings"]}
        )


def test_srun_without_pmi_is_refused(slurm, tmp_path):
    """--mpi=none starts two unrelated one-process worlds that would both write -o."""
    out = tmp_path / "r.json"
    p = _run(
        slurm, "srun", "--mpi=none", "-n", "2", PY, "-m", "commbench", "run", *SHORT, "-o", str(out)
    )
    assert p.returncode != 0
    assert (
        p.stderr.count("srun started 2 processes but MPI sees 1") == 2
        and "srun --mpi=pmi2" in p.stderr
    )
    assert not out.exists()


def test_salloc_with_mpiexec_and_with_the_self_launcher(slurm, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    p = _run(
        slurm,
        "salloc",
        "-n",
        "2",
        MPIEXEC,
        "-n",
        "2",
        PY,
        "-m",
        "commbench",
        "run",
        *SHORT,
        "-o",
        str(a),
    )
    assert p.returncode == 0, p.stderr[-2000:]
    p = _run(
        slurm, "salloc", "-n", "2", PY, "-m", "commbench", "run", "-n", "2", *SHORT, "-o", str(b)
    )
    assert p.returncode == 0, p.stderr[-2000:]
    for f in (a, b):
        doc = json.loads(f.read_text())
        assert doc["complete"] is True and doc["metadata"]["slurm"]["job_id"]


def _sbatch(slurm, tmp_path, args: list[str]) -> str:
    script = tmp_path / "job.sh"
    script.write_text(f"#!/bin/sh\nexec srun --mpi=pmi2 {PY} -m commbench run {' '.join(args)}\n")
    p = _run(
        slurm, "sbatch", "--parsable", "-n", "2", "-o", str(tmp_path / "slurm-%j.out"), str(script)
    )
    assert p.returncode == 0, p.stderr
    return p.stdout.strip().split(";")[0]


def _gone(slurm, job: str, timeout: float = 120) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not _run(slurm, "squeue", "-h", "-j", job).stdout.strip():
            return True
        time.sleep(0.3)
    return False


def _why_not_running(slurm, tmp_path, job: str) -> str:
    """What Slurm says about a job that wrote no records: its state and reason, its output."""
    show = _run(slurm, "scontrol", "show", "job", job).stdout
    logs = "".join(f.read_text()[-2000:] for f in tmp_path.glob("slurm-*.out"))
    return f"job {job} wrote no records in 120 s\n{show}\n{logs}"


def test_sbatch(slurm, tmp_path):
    out = tmp_path / "r.json"
    job = _sbatch(slurm, tmp_path, [*SHORT, "-o", str(out)])
    assert _gone(slurm, job)
    doc = json.loads(out.read_text())
    assert doc["complete"] is True and doc["metadata"]["slurm"]["job_id"] == job


def test_scancel_mid_run_keeps_the_records(slurm, tmp_path):
    """A run of ~10 s unloaded whose first records come in milliseconds, also on a loaded
    machine (an overlap benchmark whose compute is calibrated to its communication wrote
    nothing in 120 s on a machine whose two cores were busy elsewhere)."""
    out = tmp_path / "r.json"
    job = _sbatch(
        slurm,
        tmp_path,
        [
            "PingPong",
            "-iter",
            "4000,off",
            "-msglog",
            "0:22",
            "-o",
            str(out),
        ],
    )
    if wait_for_records(out, 2, 120) < 2:
        pytest.fail(_why_not_running(slurm, tmp_path, job))
    assert _run(slurm, "scancel", job).returncode == 0
    assert _gone(slurm, job)
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and "SIGTERM" in doc["summary"]["interrupted"]
    assert records_in(out) >= 2 and doc["summary"]["running"] == "PingPong"
