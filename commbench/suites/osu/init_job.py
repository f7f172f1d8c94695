"""init's fresh job: `mpiexec -n P python` whose processes time MPI_Init (or MPI sessions, -I)
and reduce it to their rank 0; the loop that starts it on rank 0, the row and extras (the
descriptor and the procedure: init.py, which names these as base.Lazy)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

CHILD = r"""
import array, json, sys, time
import mpi4py
mpi4py.rc.initialize = False
mpi4py.rc.finalize = False
from mpi4py import MPI
session = sys.argv[1] == "1"
t0 = time.perf_counter()
if session:
    s = MPI.Session.Init()
    comm = MPI.Intracomm.Create_from_group(s.Create_group("mpi://WORLD"), "commbench.osu.init")
else:
    MPI.Init()
    comm = MPI.COMM_WORLD
ms = array.array("d", [(time.perf_counter() - t0) * 1e3])
got = [array.array("d", [0.0]) for _ in range(3)]
for out, op in zip(got, (MPI.MIN, MPI.MAX, MPI.SUM)):
    comm.Reduce(ms, out, op=op, root=0)  # buffers: mpi4py's pickled reduce needs MPI_COMM_SELF (no sessions)
if comm.Get_rank() == 0:
    print(json.dumps({"np": comm.Get_size(), "min": got[0][0], "max": got[1][0], "avg": got[2][0] / comm.Get_size()}))
if session:
    comm.Free()
    s.Finalize()
else:
    MPI.Finalize()
"""  # noqa: E501


LAUNCHER_VARS = (
    "PMI_",
    "PMIX_",
    "HYDRA_",
    "HYDI_",
    "MPI_LOCALNRANKS",
    "MPI_LOCALRANKID",
    "OMPI_",
    "SLURM_STEP",
)


def mpiexec() -> str | None:
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


def fresh_job(p: int, session: bool) -> dict:
    """Start `mpiexec -n p python -c CHILD`; its JSON, or {"error": why}."""
    exe = mpiexec()
    if exe is None:
        return {"error": "no mpiexec beside Python or on PATH"}
    env = {k: v for k, v in os.environ.items() if not k.startswith(LAUNCHER_VARS)}
    cmd = [exe, "-n", str(p), sys.executable, "-c", CHILD, "1" if session else "0"]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": f"{type(e).__name__}: {e}"}
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        return {"error": f"exit {out.returncode}: {(out.stderr or out.stdout).strip()[-300:]}"}
    return {**json.loads(lines[-1]), "command": f"mpiexec -n {p} python -c <MPI_Init timer>"}


def loop(ctx, n: int, times) -> None:
    """The timed call (times set) starts the fresh job on rank 0; the warm-up does nothing."""
    if times is None:
        return
    if ctx.rank == 0:
        got = fresh_job(ctx.p, ctx.s.session)
        ctx.own = got  # the fresh job's report (min, max, avg ms; np; command) or its error
        times[:] = got.get("avg", 0.0) / 1e3
    done = ctx.comm.Ibarrier()
    while not done.Test():
        time.sleep(0.001)
    err = ctx.comm.bcast(ctx.own.get("error") if ctx.rank == 0 else None, root=0)
    if err:
        raise RuntimeError(f"osu init: the fresh job failed: {err}")


def row(ctx, s, times) -> dict:
    got = ctx.own
    us = {k: got[k] * 1e3 for k in ("min", "max", "avg")}
    return {"t": us["avg"], "t_avg": us["avg"], "t_min": us["min"], "t_max": us["max"]}


def extra(ctx, s, ex) -> dict:
    got = ctx.own or {}
    return {
        "init_np": got.get("np", ctx.p),
        "init_ms": {k: got.get(k, 0) for k in ("min", "max", "avg")},
        "session_init": s.session,
        "command": got.get("command", ""),
    }
