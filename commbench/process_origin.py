"""What started this process: the launcher, the Slurm job, the PMI it was given.

Read from the environment only (no MPI), so it works before MPI_Init, where
two decisions must be made: throttling MPICH's progress polling when srun put
more ranks on a node than it has cores (the self-launcher does the same for
`-n N`), and, once MPI is up, refusing a world that does not match what the
launcher started (`srun --mpi=none -n 2` gives two unrelated one-process
worlds that would both write the same results file).
"""

from __future__ import annotations

import json
import os
import re

from commbench import mpilib

SLURM_KEYS = {
    "job_id": "SLURM_JOB_ID",
    "step_id": "SLURM_STEP_ID",
    "job_name": "SLURM_JOB_NAME",
    "partition": "SLURM_JOB_PARTITION",
    "nodelist": "SLURM_JOB_NODELIST",
    "step_nodelist": "SLURM_STEP_NODELIST",
    "ntasks": "SLURM_NTASKS",
    "step_tasks": "SLURM_STEP_NUM_TASKS",
    "tasks_per_node": "SLURM_STEP_TASKS_PER_NODE",
    "cpus_on_node": "SLURM_CPUS_ON_NODE",
    "mpi_type": "SLURM_MPI_TYPE",
    "num_nodes": "SLURM_JOB_NUM_NODES",
    "step_num_nodes": "SLURM_STEP_NUM_NODES",
}
PMI_PREFIXES = ("PMI_", "PMIX_RANK", "PMIX_NAMESPACE", "OMPI_COMM_WORLD_")
# MPICH's throttled progress polling and the user's choice of it: one definition, mpilib's.
THROTTLE = mpilib.THROTTLE
throttle_chosen = mpilib.throttle_chosen

# Set by the launchers for the ranks: what they set for this MPI and why, a JSON list of
# [name, value, why] (commbench.mpilib.Setting), recorded as the run's launch_settings.
SETTINGS = "COMMBENCH_LAUNCH_SETTINGS"


def _rows(env) -> list:
    try:
        return json.loads(env.get(SETTINGS) or "[]")
    except ValueError:
        return []


def add_settings(env, rows) -> None:
    """Record (name, value, why) rows beside those already in env for the ranks."""
    env[SETTINGS] = json.dumps(_rows(env) + [list(r) for r in rows])


def launch_settings(env=os.environ) -> list[dict]:
    return [{"name": n, "value": v, "why": w} for n, v, w in _rows(env)]


def in_srun_step(env=os.environ) -> bool:
    return "SLURM_STEP_ID" in env and "SLURM_JOB_ID" in env


def launcher(env=os.environ) -> str:
    if in_srun_step(env):
        return "srun"
    if "OMPI_COMM_WORLD_SIZE" in env:
        return "Open MPI mpirun" + (" in a Slurm allocation" if "SLURM_JOB_ID" in env else "")
    if "PMI_RANK" in env or "HYDRA_CONTROL_FD" in env or "PMI_FD" in env:
        return "MPICH Hydra mpiexec" + (" in a Slurm allocation" if "SLURM_JOB_ID" in env else "")
    return "none (a singleton)"


def describe(env=os.environ) -> dict:
    """The results file's record of how the job was started."""
    out: dict = {"launcher": launcher(env)}
    slurm = {k: env[v] for k, v in SLURM_KEYS.items() if v in env}
    if slurm:
        out["slurm"] = slurm
    pmi = {k: v for k, v in sorted(env.items()) if k.startswith(PMI_PREFIXES)}
    if pmi:
        out["pmi"] = pmi
    return out


# Where the launchers put a process's world rank (Hydra and Intel MPI, Open MPI, srun).
RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID")


def first_by_launcher(env=os.environ) -> bool:
    """Whether a launcher's variables name this process rank 0 (or name none): the one
    voice of a job before, or after, MPI is there to ask."""
    return all(env.get(v, "0") == "0" for v in RANK_VARIABLES)


def slurm_node(env=os.environ) -> str | None:
    """The Slurm node this task of an srun step runs on (SLURMD_NODENAME), else None."""
    return env.get("SLURMD_NODENAME") if in_srun_step(env) else None


def started_tasks(env=os.environ) -> tuple[int, str] | None:
    """How many processes the launcher says this job step has, and who says it."""
    if in_srun_step(env):
        n = env.get("SLURM_STEP_NUM_TASKS") or env.get("SLURM_NTASKS")
        return (int(n), "srun") if n and n.isdigit() else None
    for var, who in (("OMPI_COMM_WORLD_SIZE", "mpirun"), ("PMI_SIZE", "mpiexec (PMI_SIZE)")):
        if env.get(var, "").isdigit():
            return int(env[var]), who
    return None


def world_mismatch(world_size: int, env=os.environ, library: str = "") -> str | None:
    """An error message when the launcher started more processes than MPI put in this world
    (library: the MPI library mpi4py loaded, named in it)."""
    got = started_tasks(env)
    if got is None or got[0] <= world_size:
        return None
    n, who = got
    fix = (
        "srun --mpi=pmi2 (the mpich wheel speaks PMI-2; srun --mpi=list shows what this Slurm has)"
        if who == "srun"
        else "an mpiexec of the MPI library mpi4py uses (commbench run -n N picks it; "
        "--mpiexec PATH names one)"
    )
    lib = f" (mpi4py runs on {library})" if library else ""
    return (
        f"{who} started {n} processes but MPI sees {world_size} in this one: the launcher and the "
        f"MPI library{lib} did not meet (each process would run alone and write the same "
        f"results); use {fix}"
    )


def tasks_on_this_node(env=os.environ) -> int | None:
    """srun's task count for this node (SLURM_STEP_TASKS_PER_NODE, e.g. '4' or '2(x3),1')."""
    spec = env.get("SLURM_STEP_TASKS_PER_NODE") or env.get("SLURM_TASKS_PER_NODE")
    if not spec:
        return None
    counts = []
    for part in spec.split(","):
        m = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", part.strip())
        if m:
            counts += [int(m.group(1))] * int(m.group(2) or 1)
    node = env.get("SLURM_NODEID", "0")
    i = int(node) if node.isdigit() else 0
    return counts[i] if i < len(counts) else (max(counts) if counts else None)


def throttle_if_oversubscribed(env=os.environ) -> bool:
    """Under srun with more tasks on this node than cores: MPICH's throttled progress
    polling, set before MPI_Init (the library is not known yet: once it is, job.configure
    keeps it and says so only where the library has it, `untrottle`), unless the user set
    it. True when set."""
    if not in_srun_step(env) or throttle_chosen(env):
        return False
    tasks, cores = tasks_on_this_node(env), os.cpu_count() or 1
    if tasks is None or tasks <= cores:
        return False
    env.update(THROTTLE)
    why = f"{tasks} srun tasks on {cores} cores: busy polling waits for scheduler time slices"
    add_settings(env, [(k, v, why) for k, v in THROTTLE.items()])
    return True


def untrottle(env=os.environ) -> None:
    """The library has no progress throttling: the variables set for it go (never recorded
    as if they had been applied)."""
    for k in THROTTLE:
        env.pop(k, None)
    env[SETTINGS] = json.dumps([r for r in _rows(env) if r[0] not in THROTTLE])


# Set by the self-launcher for its ranks: the family its own parse of the same
# arguments resolved. The ranks then load that family alone (the others' options
# only matter to refuse them, which the launcher did): ~30 ms less start-up.
FAMILY_HINT = "COMMBENCH_FAMILY"


def family_hint(env=os.environ) -> str:
    """The family the launcher resolved for this job ("" outside a self-launched job)."""
    return env.get(FAMILY_HINT, "")


# Set by the self-launcher when its stderr is a terminal: "<columns>", with ",stdout" when
# its stdout is that same terminal. Hydra gives the ranks pipes, not the terminal, and
# writes what they print to the launcher's terminal, so rank 0 may draw its progress line
# (views.progress) there.
TERMINAL = "COMMBENCH_STDERR_TERMINAL"


def _columns(fd: int) -> int:
    try:
        return os.get_terminal_size(fd).columns or 80
    except OSError:
        return 80


def terminal_value() -> str | None:
    """What the self-launcher passes in TERMINAL; None when its stderr is no terminal."""
    if not os.isatty(2):
        return None
    same = os.isatty(1) and os.fstat(1).st_rdev == os.fstat(2).st_rdev
    return f"{_columns(2)},stdout" if same else str(_columns(2))


def progress_terminal(env=os.environ) -> tuple[int, bool] | None:
    """(columns, through stdout) of the terminal rank 0 may draw a progress line on, or None.

    Its own stderr: drawn there (one process's two streams reach a terminal in the
    order written). The self-launcher's (TERMINAL): mpiexec forwards the ranks' stdout
    and stderr through separate pipes, in no fixed order between them, so where stdout
    is that same terminal the line travels in stdout's stream, in order with the tables
    (on a terminal they share, the bytes land on the same screen either way)."""
    if os.isatty(2):
        return _columns(2), False
    cols, _, via = env.get(TERMINAL, "").partition(",")
    if not cols.isdigit():
        return None
    return int(cols) or 80, via == "stdout"
