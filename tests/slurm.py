"""A real one-node Slurm for the tests: Debian's slurmctld, slurmd and munge.

Installed with apt-get when missing (root only; about 10 s), configured in a
temporary directory (4 CPUs on this node whatever it has, OverSubscribe=FORCE,
proctrack/linuxproc, task/none, MpiDefault=pmi2), started in the foreground
as background processes (`slurmctld -D`, `slurmd -D`) and ready in about two
seconds. Where it cannot run the tests that need it skip, saying why.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

PACKAGES = ["slurmctld", "slurmd", "slurm-client", "munge"]

CONF = """ClusterName=cb
SlurmctldHost={host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
SlurmctldPort={port}
SlurmdPort={dport}
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
NodeName={host} CPUs=4 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
"""


class Unavailable(Exception):
    """Slurm cannot run here; the message says why."""


def _run(cmd: list[str], timeout: float = 300, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


def install() -> None:
    if all(shutil.which(t) for t in ("slurmctld", "slurmd", "srun", "munged")):
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise Unavailable("Slurm is not installed and only root with apt-get can install it")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if _run(["apt-get", "install", "-y", "-qq", *PACKAGES], env=env).returncode != 0:
        _run(["apt-get", "update", "-qq"], env=env)
        p = _run(["apt-get", "install", "-y", "-qq", *PACKAGES], env=env)
        if p.returncode != 0:
            raise Unavailable(f"apt-get install {' '.join(PACKAGES)} failed: {p.stderr[-300:]}")


MUNGE_PID = Path("/run/munge/munged.pid")


def _munge() -> bool:
    """A working munged; True when this call started it (stop() ends it again)."""
    if _run(["sh", "-c", "munge -n | unmunge"], timeout=20).returncode == 0:
        return False
    if not Path("/etc/munge/munge.key").exists():
        _run(["mungekey", "--create"])
    Path("/run/munge").mkdir(parents=True, exist_ok=True)
    shutil.chown("/run/munge", "munge", "munge")
    _run(["runuser", "-u", "munge", "--", "munged"], timeout=20)
    for _ in range(50):
        if _run(["sh", "-c", "munge -n | unmunge"], timeout=20).returncode == 0:
            return True
        time.sleep(0.1)
    raise Unavailable("munged did not start")


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
        self.own_munge = False  # munged started for these tests, ended with them

    def env(self, **extra: str) -> dict:
        return dict(os.environ, SLURM_CONF=str(self.conf), **extra)

    def start(self) -> Cluster:
        install()
        self.own_munge = _munge()
        for sub in ("state", "spool"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        self.conf.write_text(CONF.format(host=socket.gethostname().split(".")[0], d=self.dir, port=_free_port(),
                                         dport=_free_port()))
        for daemon in ("slurmctld", "slurmd"):
            log = open(self.dir / f"{daemon}.out", "w")  # noqa: SIM115 - the daemon's for its life
            self.procs.append(subprocess.Popen([daemon, "-D", "-f", str(self.conf)], stdout=log, stderr=log,
                                               env=self.env(), start_new_session=True))
        deadline = time.time() + 30
        while time.time() < deadline:
            p = _run(["sinfo", "-h", "-o", "%t"], timeout=10, env=self.env())
            if p.returncode == 0 and p.stdout.strip() in ("idle", "mix", "alloc"):
                return self
            time.sleep(0.2)
        self.stop()
        raise Unavailable(f"slurmd never became idle: {(self.dir / 'slurmctld.out').read_text()[-400:]}")

    def stop(self) -> None:
        _run(["scancel", "--full", "-u", "root"], timeout=20, env=self.env())
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        if self.own_munge:  # a daemon (it forks): its pid file says which process it is
            try:
                os.kill(int(MUNGE_PID.read_text().split()[0]), signal.SIGTERM)
            except (OSError, ValueError, IndexError):
                pass
