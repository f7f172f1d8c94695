"""A real multi-node Slurm on one machine: one network namespace per node.

    with SlurmCluster(4) as c:          # nodes h0..h3, slurmctld on h0
        c.limit("h2", rate_mbit=200)    # tbf on h2's link (tests/support/netns.py)
        subprocess.run(["srun", "-N", "4", ...], env=c.env())

The nodes are the emulated hosts of tests/support/netns.py (a namespace each, one
veth on a bridge, an address of 10.213.X.0/24, /etc/netns/<ns>/hosts naming
every node) plus a root leg: the machine's own namespace on the bridge too,
so `sinfo`, `srun`, `sbatch`, `scancel` run from it with SLURM_CONF pointing
at this cluster's slurm.conf (/etc/slurm is never read or written). Every
daemon runs in the foreground as a child of this object:

- one munged of the cluster's own (tests/support/slurm.py's Munge); its socket is a
  file, and files cross network namespaces, so it serves every node
  (`AuthInfo=socket=…`);
- slurmctld in h0's namespace under h0's hostname (`unshare --uts`: it
  refuses to start on a host that is not `SlurmctldHost`);
- one `slurmd -D -N hK` per node, in hK's namespaces. `ip netns exec` mounts a
  fresh /sys without /sys/fs/cgroup, and slurmd refuses to start without one
  ("No filesystem mounted on /sys/fs/cgroup"): a tmpfs goes there with the
  cgroup v1 `name=systemd` hierarchy in it, all inside the node's own mount
  namespace, gone with its last process; so does a /dev/shm of the node's
  own (MPICH names its shared-memory segments by job id and node index, the
  same in every cluster, so a segment that a killed job left in a shared
  /dev/shm made the next job's MPI_Init fail with "Out of memory"). Spool,
  pid and log files are per node (`%n`). Tasks inherit the node's hostname
  and mounts, so MPI_Get_processor_name names the node.

Up in about 3 s. MPICH must be told to use the network (env():
`MPIR_CVAR_CH4_NETMOD=ofi FI_PROVIDER=tcp FI_TCP_IFACE=eth0`): with UCX it
sees one machine and moves the bytes through shared memory, past the links.
stop() (also after a failed start) ends every daemon and whatever runs in
the nodes, removes the namespaces, the root leg, /etc/netns entries and the
directory; leftovers() says what of it still exists.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Self

from tests.support import netns, slurm
from tests.support.slurm import Munge, Unavailable, node_states, stop_all, wait_for

# What a node's slurmd needs in its own mount namespace (`ip netns exec` made one): a cgroup
# file system, and a /dev/shm of its own (MPICH names its segments by job and node index,
# the same in every cluster: a segment a killed job left would clash with the next).
NODE_MOUNTS = (
    "mount -t tmpfs -o size=64k,mode=755 cgroup_root /sys/fs/cgroup && mkdir /sys/fs/cgroup/systemd"
    " && mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd"
    " && mount -t tmpfs -o size=2g,mode=1777 shm /dev/shm"
)
NODE_CONF = """SlurmctldHost={ctl}({ctl_addr})
SlurmdSpoolDir={d}/spool/%n
SlurmdPidFile={d}/run/slurmd-%n.pid
SlurmdLogFile={d}/log/slurmd-%n.log
NodeName={names} NodeAddr={addrs} CPUs={cpus} State=UNKNOWN
"""
MPI_ENV = {"MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": "tcp", "FI_TCP_IFACE": "eth0"}


def available() -> str | None:
    """None when a cluster can be built here, else why not (Slurm itself: start() says)."""
    why = netns.available()
    if why is None and not Path("/sys/fs/cgroup").is_dir():
        why = "no /sys/fs/cgroup"
    return why


class SlurmCluster:
    def __init__(self, nodes: int = 4, cpus: int = 2, start_timeout: float = 30):
        self.net = netns.Cluster(nodes, root_leg=True)
        self.nodes = self.net.hosts
        self.cpus = cpus
        self.start_timeout = start_timeout
        self.dir = Path(tempfile.mkdtemp(prefix="commbench-slurm-"))
        self.conf = self.dir / "slurm.conf"
        self.munge = Munge(self.dir / "munge")
        self.slurmctld: subprocess.Popen | None = None
        self.slurmd: dict[str, subprocess.Popen] = {}

    # -- up and down ---------------------------------------------------------------
    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> Self:
        try:
            slurm.install()
            self.net.__enter__()
            self.munge.start()
            self._configure()
            self.slurmctld = self._daemon(
                self.nodes[0], "slurmctld", f"exec slurmctld -D -i -f {self.conf}"
            )
            for node in self.nodes:
                self.start_node(node, wait=False)
            if not wait_for(self._up, self.start_timeout):
                raise Unavailable(
                    f"the nodes did not all become idle in {self.start_timeout:g} s: {self.logs()}"
                )
        except BaseException:
            self.stop()
            raise
        return self

    def _up(self) -> bool:
        """Every node idle; a daemon that has ended is an error at once (its log says why)."""
        dead = [
            n
            for n, p in [("slurmctld", self.slurmctld), *self.slurmd.items()]
            if p and p.poll() is not None
        ]
        if dead:
            raise Unavailable(f"{', '.join(dead)} ended at start: {self.logs()}")
        try:  # sinfo retries for seconds while nothing listens: ask it once slurmctld does
            socket.create_connection((self.net.address(self.nodes[0]), 6817), timeout=0.5).close()
        except OSError:
            return False
        return node_states(self.env()) == ["idle"] * len(self.nodes)

    def _configure(self) -> None:
        for sub in ("state", "run", "log", *(f"spool/{n}" for n in self.nodes)):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        n = len(self.nodes)
        self.conf.write_text(
            slurm.SETTINGS.format(d=self.dir)
            + NODE_CONF.format(
                ctl=self.nodes[0],
                ctl_addr=self.net.address(self.nodes[0]),
                d=self.dir,
                cpus=self.cpus,
                names=f"h[0-{n - 1}]" if n > 1 else "h0",
                addrs=",".join(map(self.net.address, self.nodes)),
            )
            + slurm.PARTITION
        )

    def _daemon(self, node: str, name: str, shell: str) -> subprocess.Popen:
        log = open(self.dir / "log" / f"{name}-{node}.out", "a")
        with log:
            return subprocess.Popen(
                self.net.argv(node, shell),
                stdout=log,
                stderr=log,
                env=self.env(),
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def start_node(self, node: str, wait: bool = True) -> None:
        """slurmd of node (again, after kill_node); wait: until sinfo says it is idle."""
        self.slurmd[node] = self._daemon(
            node, "slurmd", f"{NODE_MOUNTS} && exec slurmd -D -N {node} -f {self.conf}"
        )
        if wait and not wait_for(
            lambda: node_states(self.env(), node) == ["idle"], self.start_timeout
        ):
            raise Unavailable(f"{node} did not become idle again: {self.logs()}")

    def stop(self) -> None:
        if self.slurmctld is not None and self.slurmctld.poll() is None:
            slurm.cancel_all(self.env(), wait=5)
        stop_all([p for p in [*self.slurmd.values(), self.slurmctld] if p is not None], grace=5)
        self.net.close()  # kills whatever still runs in the nodes (step daemons, tasks)
        slurm.kill_stragglers(self.conf)  # and clients of it outside them (an srun left behind)
        self.munge.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def leftovers(self) -> list[str]:
        """What of this cluster still exists after stop(): namespaces, links, files, processes."""
        out = self.net.leftovers()
        if self.dir.exists():
            out.append(str(self.dir))
        procs = [
            p for p in [self.slurmctld, self.munge.proc, *self.slurmd.values()] if p is not None
        ]
        return out + [f"pid {p.pid}" for p in procs if p.poll() is None]

    # -- using it --------------------------------------------------------------------
    def env(self, **extra: str) -> dict[str, str]:
        """The environment of a client in the machine's namespace: this cluster's SLURM_CONF,
        no variables of another job, MPICH on the network."""
        e = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("SLURM_", "PMI_", "PMIX_", "HYDRA_"))
        }
        e.update(SLURM_CONF=str(self.conf), **MPI_ENV)
        e.update(extra)
        return e

    def limit(self, node: str, rate_mbit: float) -> None:
        self.net.limit(node, rate_mbit)

    def unlimit(self, node: str) -> None:
        self.net.unlimit(node)

    def kill_node(self, node: str, also=lambda cmdline: "commbench" in cmdline) -> list[int]:
        """The node fails: SIGKILL to its slurmd and to every process of it whose command line
        `also` accepts (the default: commbench's ranks). The pids killed."""
        killed = []
        if node in self.slurmd:
            self.slurmd[node].kill()
            self.slurmd[node].wait(timeout=10)
            killed.append(self.slurmd[node].pid)
        for pid in self.net.pids(node):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                if also(cmdline):
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            except OSError:
                pass
        return killed

    def logs(self, tail: int = 600) -> str:
        """The end of every daemon's log, for a failure's message."""
        parts = []
        for f in sorted((self.dir / "log").glob("*")):
            text = f.read_text(errors="replace").strip()
            if text:
                parts.append(f"[{f.name}] {text[-tail:]}")
        return "\n".join(parts) or "(no daemon logged anything)"
