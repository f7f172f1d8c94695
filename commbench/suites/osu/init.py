"""OSU's init (OMB 7.4): how long MPI_Init takes, per process, min/max/avg in ms.

The binary (tests/data/osu/README.md) calls MPI_Init between two reads of a wall
clock (no MPI_Wtime before it), then three MPI_Reduce of one value to rank 0 and
prints "nprocs: P, min: A ms, max: B ms, avg: C ms" under its title; it takes no
option but -I (session initialization; "-h" is an invalid option).

A commbench job has MPI initialised long before a benchmark runs, and MPI cannot
be initialised twice in a process. So commbench times it where it can: rank 0
starts a fresh job of as many processes as the run has (`mpiexec -n P python`,
the mpiexec beside this Python, the launcher's PMI variables removed) whose
processes import mpi4py without initialising it, read time.perf_counter, call
MPI_Init (-I: MPI_Session_init, MPI_Group_from_session_pset("mpi://WORLD") and
MPI_Comm_create_from_group), read it again and reduce min, max and sum to their
rank 0, which prints them as JSON. The run's own processes wait meanwhile
without polling MPI (a nonblocking barrier tested every millisecond), so the
new job's processes get the cores. What is timed is the same call, in processes
started the same way (Hydra's PMI), with the MPI library already loaded, as in
the binary; the interpreter's start-up is outside it. One row, no size.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from commbench.suites.osu.spec import Defaults, OsuBenchmark

ONCE = Defaults(iterations=1, iterations_large=1, skip=0, skip_large=0, min_size=0, max_size=0)
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


def sizes(s, dtype: str) -> list[int]:
    return [0]


BENCHMARKS = (
    OsuBenchmark(
        "init",
        "MPI_Init's time in a fresh job of P processes started by rank 0 (-I: MPI sessions)",
        group="pt2pt_variants",
        title="MPI Init",
        metric="init",
        takes=frozenset("I"),
        defaults=ONCE,
        nprocs=lambda p: None,
        loop=loop,
        row=row,
        sizes=sizes,
        extra=extra,
        fit=False,
        buffers=0,
    ),
)
