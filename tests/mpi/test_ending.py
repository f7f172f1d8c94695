"""A job the watchdog ends tells one story: the watchdog's.

Ctrl-C (SIGINT) reaches every rank; rank 0's watchdog writes why the run ended and
ends the other ranks, whose end makes an MPI call of rank 0's main thread fail (the net
family's Rings saw "See the MPI_ERROR field in MPI_Status"). That failure is a
consequence, not a second problem: no "MPI error on rank 0" line after the
interruption (commbench.mpi_job._unless_ending, Watchdog.ending).

The job here is a real one (2 processes, the net family's configuration, the real
watchdog and signal); only the driver is a stand-in that raises the MPI error at the
moment the real one met it, so the race is decided every time, not one run in ten.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.mpirun import ENV, MPIEXEC

RANK = """
import os, signal, sys, time
from types import SimpleNamespace
import mpi4py
mpi4py.rc.thread_level = "single"
from commbench import watchdog
watchdog.block_signals()
from mpi4py import MPI
from commbench import mpi_job

j = mpi_job.configure(MPI.COMM_WORLD, ["--suite", "net", "-o", sys.argv[1]])
assert not isinstance(j, int), j


def driver(session):
    session.comm.Barrier()
    if session.rank == 0:
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C reaches this rank: its watchdog ends the job
        while not session.watchdog.ending:
            time.sleep(0.01)
        raise MPI.Exception(MPI.ERR_OTHER)  # what the ranks it ends leave an MPI call with
    time.sleep(60)  # a peer in its own step, until rank 0's watchdog ends it


mpi_job.suites = SimpleNamespace(family=lambda name: SimpleNamespace(procedure=lambda session: None))
from commbench.harness import rows
rows.run = lambda session, procedure: driver(session)
failures = mpi_job.measure(j)
sys.exit(3 if failures is None else mpi_job.conclude(j, failures))
"""  # noqa: E501


def test_an_error_after_ctrl_c_is_not_a_second_story(tmp_path):
    out = tmp_path / "r.json"
    env = dict(os.environ, **ENV)
    p = subprocess.run(
        [MPIEXEC, "-n", "2", sys.executable, "-c", RANK, str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    err = p.stderr
    assert "interrupted by SIGINT (Ctrl-C) (rank 0:" in err, err[-2000:]
    assert "MPI error" not in err and "internal error" not in err and "Traceback" not in err, err[
        -2000:
    ]
    said = [ln for ln in err.splitlines() if ln.startswith("commbench: ")]
    assert all(
        ln.startswith(("commbench: interrupted by SIGINT", "commbench: results so far"))
        for ln in said
    ), said
    assert "# !! run ended early: interrupted by SIGINT" in p.stdout
    assert '"complete": false' in out.read_text()
