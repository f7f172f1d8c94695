"""Emulated hosts on one machine: Linux network namespaces joined by veth pairs.

    with Cluster(3) as c:            # namespaces cbNNNh0..h2, a bridge in cbNNNsw
        c.limit("h1", rate_mbit=400)  # tbf on h1's link (both directions)
        p = c.mpiexec(["-n", "2", "-ppn", "1", ...])

Each emulated host is a network namespace with one interface, eth0, whose
veth peer sits on a bridge in a "switch" namespace; nothing is routed to or
from the machine's own network: the addresses (10.213.X.0/24, private) exist
only inside these namespaces. Every process of a host runs in that
namespace and in its own UTS namespace with the host's name, so
MPI_Get_processor_name() and the results' metadata see distinct hosts.

MPICH's Hydra starts its proxies through `-launcher ssh -launcher-exec
<script>`: the script takes the place of ssh and runs the proxy with
`ip netns exec <host> unshare --uts` after setting the hostname. mpiexec
itself runs in host h0. Name resolution uses /etc/netns/<ns>/hosts, which
`ip netns exec` mounts over /etc/hosts inside the namespace. The traffic
crosses the veths because MPIR_CVAR_NOLOCAL=1 forbids shared memory and the
netmod is UCX over TCP (UCX_TLS=tcp), or OFI with FI_PROVIDER=tcp.

With `root_leg=True` the machine's own namespace gets one more veth on the
bridge (address .254 of the subnet, named after the machine in every host's
/etc/hosts), so programs run from it (Slurm's clients, tests/support/slurm_cluster.py)
reach the hosts; the subnet is then one the machine does not route yet.
`argv(host, shell)` is the command line that runs a shell command as that host.

Everything created (namespaces, veths, bridge, /etc/netns files, the script)
is removed on exit, also after a failure; `available()` says why the harness
cannot run where namespaces are not permitted.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from commbench.self_launcher import find_mpiexec
from tests.support.closing import Closing

LAUNCHER = r"""#!/bin/sh
# Stands in for ssh: [ssh options] HOST COMMAND... -> run COMMAND inside HOST's namespaces.
while [ $# -gt 0 ]; do
  case "$1" in
    -*) shift ;;
    *) break ;;
  esac
done
host="$1"; shift
ns="__PREFIX__$host"
exec ip netns exec "$ns" unshare --uts sh -c "hostname $host && exec $*"
"""


def _run(*cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=60)


def available() -> str | None:
    """None when namespaces can be built here, else the reason they cannot."""
    if sys.platform != "linux":
        return "network namespaces need Linux"
    for tool in ("ip", "unshare", "tc"):
        if shutil.which(tool) is None:
            return f"{tool} not found"
    if os.geteuid() != 0:
        return "creating network namespaces needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN)"
    probe = f"cbprobe{os.getpid() % 100000}"
    r = _run("ip", "netns", "add", probe, check=False)
    if r.returncode != 0:
        return f"ip netns add is not permitted here: {r.stderr.strip()}"
    try:
        r = _run("ip", "netns", "exec", probe, "unshare", "--uts", "true", check=False)
        if r.returncode != 0:
            return f"unshare --uts is not permitted here: {r.stderr.strip()}"
    finally:
        _run("ip", "netns", "del", probe, check=False)
    if find_mpiexec() is None:
        return "no mpiexec"
    return None


def _routed_subnets() -> set[int]:
    """The X of every 10.213.X.0/24 the machine's own namespace routes already."""
    out = _run("ip", "-4", "route", "show", check=False).stdout
    return {
        int(w.split(".")[2])
        for w in out.split()
        if w.startswith("10.213.") and w.count(".") == 3 and w.split(".")[2].isdigit()
    }


class Cluster(Closing):
    made = 0  # clusters made by this process

    def __init__(
        self, nhosts: int, subnet: int | None = None, mtu: int = 9000, root_leg: bool = False
    ):
        # jumbo frames: header bytes are <1% of what tbf counts, so its rate is the payload rate
        self.mtu = mtu
        self.n = nhosts
        Cluster.made += (
            1  # a second cluster of one process (beside the first) gets names of its own
        )
        self.prefix = f"cb{os.getpid() % 10000}" + (
            "" if Cluster.made == 1 else "abcdefg"[(Cluster.made - 2) % 7]
        )
        self.hosts = [f"h{i}" for i in range(nhosts)]
        self.subnet = subnet if subnet is not None else 100 + os.getpid() % 100
        self.root_leg = root_leg
        if root_leg and subnet is None:  # a route of its own in the machine's namespace: a free one
            taken = _routed_subnets()
            self.subnet = next(
                x for x in [*range(self.subnet, 200), *range(100, self.subnet)] if x not in taken
            )
        self.created_ns: list[str] = []
        self.leg_made = False
        self.dir = Path(tempfile.mkdtemp(prefix="commbench-netns-"))
        self.script = self.dir / "netns-ssh"

    def ns(self, host: str) -> str:
        return self.prefix + host

    def address(self, host: str) -> str:
        return f"10.213.{self.subnet}.{self.hosts.index(host) + 1}"

    @property
    def leg(self) -> str:
        """The machine's own end of the root leg (its address is root_address)."""
        return self.prefix + "r"

    @property
    def root_address(self) -> str:
        return f"10.213.{self.subnet}.254"

    # -- build and tear down -----------------------------------------------------
    def _open(self) -> None:  # tests.support.closing.Closing: `with` builds it whole or not at all
        self._build()

    def _add_ns(self, name: str) -> None:
        _run("ip", "netns", "add", name)
        self.created_ns.append(name)
        _run("ip", "-n", name, "link", "set", "lo", "up")

    def _build(self) -> None:
        sw = self.prefix + "sw"
        self._add_ns(sw)
        _run("ip", "-n", sw, "link", "add", "br0", "type", "bridge")
        _run("ip", "-n", sw, "link", "set", "br0", "up")
        hosts_file = "127.0.0.1 localhost\n" + "".join(
            f"{self.address(h)} {h}\n" for h in self.hosts
        )
        if self.root_leg:
            self._add_root_leg(sw)
            me = socket.gethostname()
            if me not in self.hosts and me != "localhost":
                hosts_file += f"{self.root_address} {me}\n"
        for h in self.hosts:
            ns = self.ns(h)
            self._add_ns(ns)
            a, b = f"{ns}a", f"{ns}b"  # <= 15 characters
            # created inside the switch namespace, so nothing ever appears in the machine's own
            _run("ip", "-n", sw, "link", "add", a, "type", "veth", "peer", "name", b, "netns", ns)
            _run("ip", "-n", sw, "link", "set", a, "mtu", str(self.mtu), "master", "br0", "up")
            _run("ip", "-n", ns, "link", "set", b, "name", "eth0", "mtu", str(self.mtu))
            _run("ip", "-n", ns, "addr", "add", f"{self.address(h)}/24", "dev", "eth0")
            _run("ip", "-n", ns, "link", "set", "eth0", "up")
            etc = Path("/etc/netns") / ns
            etc.mkdir(parents=True, exist_ok=True)
            (etc / "hosts").write_text(hosts_file)
            (etc / "hostname").write_text(h + "\n")
        self.script.write_text(LAUNCHER.replace("__PREFIX__", self.prefix))
        self.script.chmod(0o755)

    def _add_root_leg(self, sw: str) -> None:
        self.leg_made = True
        _run(
            "ip",
            "link",
            "add",
            self.leg,
            "type",
            "veth",
            "peer",
            "name",
            self.leg + "b",
            "netns",
            sw,
        )
        _run(
            "ip",
            "-n",
            sw,
            "link",
            "set",
            self.leg + "b",
            "mtu",
            str(self.mtu),
            "master",
            "br0",
            "up",
        )
        _run("ip", "link", "set", self.leg, "mtu", str(self.mtu))
        _run("ip", "addr", "add", f"{self.root_address}/24", "dev", self.leg)
        _run("ip", "link", "set", self.leg, "up")

    def close(self) -> None:
        if self.leg_made:  # it would go with the switch namespace too
            _run("ip", "link", "del", self.leg, check=False)
            self.leg_made = False
        for ns in reversed(self.created_ns):
            # killing what still runs there first: a namespace with processes outlives `del`
            pids = _run("ip", "netns", "pids", ns, check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), 9)
                except (OSError, ValueError):
                    pass
            _run("ip", "netns", "del", ns, check=False)
            shutil.rmtree(Path("/etc/netns") / ns, ignore_errors=True)
        self.created_ns.clear()
        shutil.rmtree(self.dir, ignore_errors=True)

    def leftovers(self) -> list[str]:
        """What of this cluster still exists (should be nothing after close)."""
        mine = {self.prefix + "sw", *map(self.ns, self.hosts)}
        out = [n for n in _run("ip", "netns", "list", check=False).stdout.split() if n in mine]
        out += [
            str(Path("/etc/netns") / n) for n in sorted(mine) if (Path("/etc/netns") / n).exists()
        ]
        if self.root_leg and _run("ip", "link", "show", self.leg, check=False).returncode == 0:
            out.append(f"link {self.leg}")
        return out

    def pids(self, host: str) -> list[int]:
        """The processes running in host's namespace."""
        out = _run("ip", "netns", "pids", self.ns(host), check=False).stdout.split()
        return [int(p) for p in out if p.isdigit()]

    # -- shaping ---------------------------------------------------------------
    def limit(self, host: str, rate_mbit: float, burst_kb: int = 64, latency_ms: int = 50) -> None:
        """Token-bucket limit on host's link,
        both directions (eth0 egress and its bridge port's egress)."""
        rate = f"{rate_mbit}mbit"
        for ns, dev in ((self.ns(host), "eth0"), (self.prefix + "sw", f"{self.ns(host)}a")):
            _run(
                "ip",
                "netns",
                "exec",
                ns,
                "tc",
                "qdisc",
                "replace",
                "dev",
                dev,
                "root",
                "tbf",
                "rate",
                rate,
                "burst",
                f"{burst_kb}kb",
                "latency",
                f"{latency_ms}ms",
            )

    def unlimit(self, host: str) -> None:
        """host's link at full speed again (limit() undone)."""
        for ns, dev in ((self.ns(host), "eth0"), (self.prefix + "sw", f"{self.ns(host)}a")):
            _run("ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", dev, "root", check=False)

    # -- running ---------------------------------------------------------------
    def argv(self, host: str, shell: str) -> list[str]:
        """The command line that runs `shell` (sh -c) as host: in its network namespace and
        a UTS namespace of its own named after it (with a mount namespace of its own too:
        `ip netns exec` makes one, with a fresh /sys)."""
        return [
            "ip",
            "netns",
            "exec",
            self.ns(host),
            "unshare",
            "--uts",
            "sh",
            "-c",
            f"hostname {host} && {shell}",
        ]

    def env(self, netmod: str = "ucx") -> dict[str, str]:
        e = dict(os.environ)
        for k in list(e):
            if k.startswith(("PMI_", "PMIX_", "HYDRA_", "OMPI_", "SLURM_")):
                del e[k]
        e.update(MPIR_CVAR_NOLOCAL="1", MPIR_CVAR_CH4_NETMOD=netmod)
        if netmod == "ucx":
            e.update(UCX_TLS="tcp", UCX_NET_DEVICES="eth0")
        else:
            e.update(FI_PROVIDER="tcp", FI_TCP_IFACE="eth0")
        return e

    def mpiexec(
        self, args: list[str], netmod: str = "ucx", timeout: float = 300, env: dict | None = None
    ) -> subprocess.CompletedProcess:
        """mpiexec (run in h0) across the hosts: `-hosts` and the launcher are added here."""
        mpiexec = find_mpiexec()
        cmd = [
            mpiexec,
            "-launcher",
            "ssh",
            "-launcher-exec",
            str(self.script),
            "-hosts",
            ",".join(self.hosts),
            *args,
        ]
        e = self.env(netmod)
        e.update(env or {})
        full = self.argv("h0", "exec " + " ".join(_quote(c) for c in cmd))
        return subprocess.run(
            full, capture_output=True, text=True, timeout=timeout, env=e, check=False
        )


def _quote(s: str) -> str:
    return shlex.quote(s)
