"""A real one-node Slurm for the tests: Debian's slurmctld, slurmd and munge.

Installed with apt-get when missing (root only; about 10 s), configured in a
temporary directory (4 CPUs on this node whatever it has, OverSubscribe=FORCE,
proctrack/linuxproc, task/none, MpiDefault=pmi2), started in the foreground
as background processes (`slurmctld -D`, `slurmd -D`) and ready in about two
seconds. Where it cannot run the tests that need it skip, saying why.

Authentication is a munged of the cluster's own (`Munge`: its key, socket,
pid and seed files in the cluster's directory, `AuthInfo=socket=…`), so
/etc/munge and a munged the machine may run are left alone and two clusters
never share one. stop() cancels the jobs, ends the daemons, then kills what
they left (step daemons and tasks carry the cluster's SLURM_CONF). The pieces
(install, Munge, SETTINGS, node_states, cancel_all, kill_stragglers …) serve
the multi-node cluster of tests/support/slurm_cluster.py too.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from tests.support import apt
from tests.support.once import once

PACKAGES = ["slurmctld", "slurmd", "slurm-client", "munge"]

# What every test cluster has: root daemons, its own munged, files in its directory
# ({d}), no cgroups, PMI-2 (the mpich wheel's), more tasks than CPUs allowed.
SETTINGS = """ClusterName=cb
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={d}/munge/munge.socket
StateSaveLocation={d}/state
SlurmctldPidFile={d}/slurmctld.pid
SlurmctldLogFile={d}/slurmctld.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=pmi2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
"""
PARTITION = (
    "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE\n"
)

CONF = (
    SETTINGS
    + """SlurmctldHost={host}
SlurmdSpoolDir={d}/spool
SlurmdPidFile={d}/slurmd.pid
SlurmdLogFile={d}/slurmd.log
SlurmctldPort={port}
SlurmdPort={dport}
NodeName={host} CPUs=4 State=UNKNOWN
"""
    + PARTITION
)


class Unavailable(Exception):
    """Slurm cannot run here; the message says why."""


def _run(cmd: list[str], timeout: float = 300, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


@once
def install() -> None:
    if all(shutil.which(t) for t in ("slurmctld", "slurmd", "srun", "munged")):
        return
    why = apt.install(PACKAGES)
    if why:
        raise Unavailable(f"Slurm is not installed and cannot be: {why}")


class Munge:
    """A munged of one cluster's own, in the foreground: key, socket, pid and seed files in
    d (created 0700). A filesystem socket crosses network namespaces, so one serves them all."""

    def __init__(self, d: Path):
        self.dir = d
        self.socket = d / "munge.socket"
        self.proc: subprocess.Popen | None = None

    def start(self) -> Munge:
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        key = self.dir / "munge.key"
        p = _run(["mungekey", "--create", "--force", "--keyfile", str(key)], timeout=20)
        if p.returncode != 0:
            raise Unavailable(f"mungekey failed: {p.stderr.strip()[-300:]}")
        with open(self.dir / "munged.out", "w") as log:  # the daemon keeps its own copy
            self.proc = subprocess.Popen(
                [
                    "munged",
                    "--foreground",
                    "--force",
                    f"--socket={self.socket}",
                    f"--key-file={key}",
                    f"--pid-file={self.dir / 'munged.pid'}",
                    f"--seed-file={self.dir / 'munged.seed'}",
                    f"--log-file={self.dir / 'munged.log'}",
                ],
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        probe = f"munge -S {self.socket} -n | unmunge -S {self.socket}"
        if wait_for(lambda: _run(["sh", "-c", probe], timeout=20).returncode == 0, 10):
            return self
        self.stop()
        raise Unavailable(f"munged did not start: {(self.dir / 'munged.out').read_text()[-300:]}")

    def stop(self) -> None:
        stop_all([self.proc] if self.proc else [])
        self.proc = None


def wait_for(ready, timeout: float, every: float = 0.2) -> bool:
    """Poll ready() until it is true (True) or timeout seconds pass (False)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if ready():
            return True
        time.sleep(every)
    return False


def stop_all(procs: list[subprocess.Popen], grace: float = 10) -> None:
    """SIGTERM to each, SIGKILL to what is still running after grace seconds; reaped."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=10)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


class Cluster:
    """A running one-node Slurm; env() is what a client needs (SLURM_CONF)."""

    def __init__(self, d: Path):
        self.dir = d
        self.procs: list[subprocess.Popen] = []
        self.conf = d / "slurm.conf"
        self.munge = Munge(d / "munge")

    def env(self, **extra: str) -> dict:
        return dict(os.environ, SLURM_CONF=str(self.conf), **extra)

    def start(self) -> Cluster:
        install()
        self.munge.start()
        for sub in ("state", "spool"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        self.conf.write_text(
            CONF.format(
                host=socket.gethostname().split(".")[0],
                d=self.dir,
                port=_free_port(),
                dport=_free_port(),
            )
        )
        for daemon in ("slurmctld", "slurmd"):
            log = open(self.dir / f"{daemon}.out", "w")  # noqa: SIM115 - the daemon's for its life
            self.procs.append(
                subprocess.Popen(
                    [daemon, "-D", "-f", str(self.conf)],
                    stdout=log,
                    stderr=log,
                    env=self.env(),
                    start_new_session=True,
                )
            )
        if wait_for(lambda: node_states(self.env()) in (["idle"], ["mix"], ["alloc"]), 30):
            return self
        self.stop()
        raise Unavailable(
            f"slurmd never became idle: {(self.dir / 'slurmctld.out').read_text()[-400:]}"
        )

    def stop(self) -> None:
        cancel_all(self.env())
        stop_all(self.procs)
        kill_stragglers(self.conf)
        self.munge.stop()


def cancel_all(env: dict, wait: float = 10) -> None:
    """scancel every job, and wait (a while) until the queue is empty."""
    _run(["scancel", "--full", "-u", "root"], timeout=20, env=env)
    wait_for(lambda: not _run(["squeue", "-h"], timeout=10, env=env).stdout.strip(), wait, 0.3)


def kill_stragglers(conf: Path) -> list[int]:
    """SIGKILL to what a cluster's daemons left running: step daemons and tasks outlive
    slurmd, and they carry its SLURM_CONF in their environment. The pids."""
    mark = f"SLURM_CONF={conf}".encode()
    killed = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            if mark in (d / "environ").read_bytes().split(b"\0"):
                os.kill(int(d.name), 9)
                killed.append(int(d.name))
        except OSError:
            continue
    return killed


def node_states(env: dict, nodes: str | None = None) -> list[str]:
    """sinfo's state of every node (or of those named), in node order; [] while slurmctld
    does not answer."""
    p = _run(
        ["sinfo", "-h", "-N", "-o", "%t", *(["-n", nodes] if nodes else [])], timeout=10, env=env
    )
    return p.stdout.split() if p.returncode == 0 else []
