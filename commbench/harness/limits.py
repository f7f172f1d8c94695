"""The physical limits of the run's hosts, measured once before the first row
(docs/limits.md; what they mean for a row: commbench.models.limits).

On every host its first rank (the node communicator's rank 0) measures with the C probe
commbench/native/limits.c:
- the one-copy bandwidth (memcpy) at every power of two up to the run's largest message
  (64 MiB at most; where a family plans its own buffers, half of what a rank of it holds),
  between two buffers of the run's kind (--alloc, --hugepages), on its own core;
- with the host's second rank, the round trip of one cache line between their two cores
  through a shared segment (MPI_Win_allocate_shared): half of it is the floor no message
  between two ranks of the host can beat.
The other ranks of the host wait without spinning (a nonblocking barrier tested every
millisecond), so the probe has the cores the ranks run on to itself.

Across hosts: each host's line rate of the interface its traffic to the next host takes
(the route to that host's address, /sys/class/net/IF/speed, or the InfiniBand port's rate
behind it), or --link-rate where the system cannot tell; never invented.
"""

from __future__ import annotations

import ctypes
import glob
import socket
import subprocess
from pathlib import Path

from commbench import buffers, polite
from commbench.models import limits as model
from commbench.native import abi, extension

SOURCE = Path(extension.__file__).with_name("limits.c")
ABI_VERSION = abi.define(SOURCE, "CBLIM_ABI_VERSION")  # as native.p2p's and native.mt's
CAP = 64 * 2**20  # bytes: the largest copy measured; the rate beyond it is this one's
LINE_ITERS, LINE_TRIALS, LINE_LIMIT = 500, 5, 0.5  # round trips a block, blocks, seconds


def _wait(comm) -> None:
    """A barrier that leaves the cores to whoever measures: no spinning, naps of 1 ms (every
    waiting rank wakes 1000 times a second; 16 ranks on 2 cores at 0.2 ms took a fifth of
    the cores from the two that measure)."""
    polite.wait(comm.Ibarrier(), spin=0.0, nap=1e-3)


def _probe():
    dll, _, _ = extension.open_library(SOURCE, "libcommbench_limits.so", "cblim_", ABI_VERSION, {})
    dll.cblim_copy.restype = ctypes.c_double
    dll.cblim_copy.argtypes = [
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_int
    ]  # fmt: skip
    dll.cblim_line.restype = ctypes.c_double
    dll.cblim_line.argtypes = [
        ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong, ctypes.c_int, ctypes.c_double
    ]  # fmt: skip
    return dll


def _floor(node, dll) -> tuple[float | None, str]:
    """(one-way µs of a cache line between node ranks 0 and 1, or None, why not)."""
    from mpi4py import MPI

    rank = node.Get_rank()
    win = MPI.Win.Allocate_shared(64 if rank == 0 else 0, 1, comm=node)
    try:
        addr = win.Shared_query(0)[0].address
        if rank == 0:
            ctypes.memset(addr, 0, 8)
        _wait(node)  # not MPI_Barrier: the traced runs (tests' PMPI logs) see only the run's
        got = None
        if rank < 2 and dll is not None:
            got = dll.cblim_line(addr, rank, LINE_ITERS, LINE_TRIALS, LINE_LIMIT)
        _wait(node)
        both = node.allgather(got)[:2]
    finally:
        win.Free()
    if any(v is None for v in both):
        return None, "the probe could not be built on this host"
    if min(both) <= 0:
        return None, (
            "the host's first two ranks do not each have a core (a cache line's round trip "
            f"took more than {LINE_LIMIT} s in a block): no floor is measured"
        )
    return max(both) / 2 * 1e6, ""


def _copies(dll, alloc: str, hugepages: str, biggest: int) -> list[list[float]]:
    n = max(1, min(biggest, CAP))
    src, dst = (buffers.Allocation(n, alloc, hugepages) for _ in range(2))
    try:
        src.array[:] = 1
        a, b = dst.array.ctypes.data, src.array.ctypes.data
        dll.cblim_copy(a, b, n, 1, 1)  # the pages faulted in first
        sizes = sorted({1 << k for k in range(n.bit_length()) if 1 << k <= n} | {n})
        out = []
        for x in sizes:
            reps = max(2, min(100_000, 2**20 // x))
            secs = dll.cblim_copy(a, b, x, reps, 3)
            if secs > 0:
                out.append([x, x / secs])
        return out
    finally:
        src.free()
        dst.free()


def _memory(node, cfg, biggest: int) -> dict | None:
    """This host's copy table and floor (node rank 0 gets them); collective over node."""
    dll, why = None, ""
    if node.Get_rank() < 2:
        try:
            dll = _probe()
        except extension.NativeUnavailable as e:
            why = str(e)
    floor, floor_why = _floor(node, dll) if node.Get_size() > 1 else (None, "one rank on this host")
    if node.Get_rank() != 0:
        _wait(node)
        return None
    copy = _copies(dll, cfg.alloc, cfg.hugepages, biggest) if dll is not None else []
    _wait(node)
    return {
        "machine": _boot_id(),
        "copy": copy,
        "floor_us": floor,
        "why": why or floor_why,
        "ranks": [0, 1] if floor else [0],
        "alloc": f"{cfg.alloc}, hugepages {cfg.hugepages}",
    }


def _boot_id() -> str | None:
    """This machine's boot id: hosts that share one (containers, network namespaces) share
    their memory and cores, and their limits are not independent measurements."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def _interface_rate(peer: str) -> dict:
    """The interface the route to peer takes and its line rate, or why it is not known."""
    try:
        addr = socket.getaddrinfo(peer, None, socket.AF_INET)[0][4][0]
        route = subprocess.run(
            ["ip", "-o", "route", "get", addr], capture_output=True, text=True, timeout=5
        ).stdout.split()
    except (OSError, socket.gaierror, subprocess.SubprocessError) as e:
        return {"why": f"no route to {peer} found ({e})"}
    dev = route[route.index("dev") + 1] if "dev" in route else None
    if dev is None or dev == "lo":
        return {"why": f"the route to {peer} ({addr}) leaves by no interface of a link"}
    for path in [
        f"/sys/class/net/{dev}/speed",
        *sorted(glob.glob(f"/sys/class/net/{dev}/device/infiniband/*/ports/*/rate")),
    ]:
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        rate = model.link_rate(text)
        if rate:
            return {"interface": dev, "rate": rate, "source": f"{path}: {text}"}
    return {"interface": dev, "why": f"{dev} does not say its line rate (a virtual interface?)"}


def _link(host: str, hosts: list[str], given: str | None) -> dict | None:
    if given is not None or len(hosts) < 2:
        return None
    return _interface_rate(hosts[(hosts.index(host) + 1) % len(hosts)])


def measure(comm, cfg, biggest: int) -> dict | None:
    """metadata["limits"] on world rank 0 (None elsewhere); collective over comm."""
    from mpi4py import MPI

    node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())
    try:
        host = MPI.Get_processor_name()
        hosts = sorted(set(comm.allgather(host)))
        mem = _memory(node, cfg, biggest)
        leader = node.Get_rank() == 0
        link = _link(host, hosts, cfg.link_rate) if leader else None
        found = comm.gather((host, mem, link) if leader else None, root=0)
    finally:
        node.Free()
    if comm.Get_rank() != 0:
        return None
    found = [f for f in found if f is not None]
    out: dict = {"memory": {}}
    for h, m, _ in found:  # the first rank's where several measured one host (MPIR_CVAR_NOLOCAL)
        if m is not None:
            out["memory"].setdefault(h, m)
    if cfg.link_rate is not None:
        out["link"] = {
            "rate": model.link_rate(cfg.link_rate),
            "source": f"--link-rate {cfg.link_rate}",
        }
    elif len(hosts) > 1:
        per_host = {h: k for h, _, k in found if k is not None}
        rates = [k.get("rate") for k in per_host.values()]
        known = all(rates) and len(rates) == len(hosts)
        out["link"] = {
            "rate": min(rates) if known else None,
            "source": "the slowest host's interface" if known else None,
            "why": ""
            if known
            else "; ".join(f"{h}: {k['why']}" for h, k in per_host.items() if "why" in k),
            "per_host": per_host,
        }
    return out
