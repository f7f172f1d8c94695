"""The p2p family's native engine: p2p.c, IMB-P2P's timed loops in C, built, cached,
loaded and checked by commbench.native.extension like kernels.c.

`load()` builds (or finds) the library and checks it runs on mpi4py's MPI;
`P2pRunner.args(...)` packs one pattern's buffers and partners for a size (untimed),
`P2pRunner.loop(args, reps)` runs that many steps and returns (seconds, messages).
"""

from __future__ import annotations

import ctypes
from pathlib import Path

from commbench.native import abi, extension

SOURCE = Path(__file__).with_name("p2p.c")
ABI_VERSION = abi.define(SOURCE, "CBP2P_ABI_VERSION")
LIB_NAME = "libcommbench_p2p.so"

# The C enum of p2p.c, by IMB-P2P's names, read from its table (CBP2P_PATTERNS).
PATTERN_CODES = abi.codes(SOURCE, "CBP2P_PATTERNS")


class P2pLoopArgs(ctypes.Structure):
    """cbp2p_args of p2p.c (CBP2P_ARGS_FIELDS)."""

    _fields_ = abi.fields(SOURCE, "CBP2P_ARGS_FIELDS")


STRUCTS: dict[str, type] = {"cbp2p_args": P2pLoopArgs}  # checked at load


def _ints(values) -> ctypes.Array:
    values = [int(v) for v in values]
    return (ctypes.c_int * max(len(values), 1))(*values)


def _pointers(arrays) -> ctypes.Array:
    return (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])


class P2pRunner:
    """The loaded library, checked to share mpi4py's initialised MPI."""

    def __init__(self):
        self.dll, self.path, _ = extension.open_library(
            SOURCE, LIB_NAME, "cbp2p_", ABI_VERSION, STRUCTS
        )
        self.fn = self.dll.cbp2p_loop
        self.fn.restype = ctypes.c_int
        self.fn.argtypes = [ctypes.POINTER(P2pLoopArgs)]

    def args(
        self,
        comm,
        pattern: str,
        size: int,
        sends: list,
        recvs: list,
        msgwr: bool,
        msgrd: bool,
        peers=(),
        firsts=(),
        first: bool = False,
    ) -> tuple[P2pLoopArgs, list]:
        """The packed call (and the objects it points into, to keep alive alongside it)."""
        from mpi4py import MPI

        keep = [_pointers(sends), _pointers(recvs), _ints(peers), _ints(firsts)]
        s, r, p, f = (ctypes.addressof(k) for k in keep)
        a = P2pLoopArgs(
            pattern=PATTERN_CODES[pattern],
            size=size,
            msgwr=int(msgwr),
            msgrd=int(msgrd),
            links=len(sends),
            first=int(first),
            comm=MPI._addressof(comm),
            sends=s,
            recvs=r,
            peers=p,
            firsts=f,
        )
        return a, keep

    def loop(self, a: P2pLoopArgs, reps: int) -> tuple[float, int]:
        """Run reps steps; (seconds of the loop, messages sent plus received)."""
        a.reps = reps
        if self.fn(ctypes.byref(a)) != 0:
            raise ValueError(f"p2p.c: pattern {a.pattern} with {a.links} links is not one it runs")
        return a.seconds, a.msgs


def load() -> P2pRunner:
    """Build (or find in the cache) and load p2p.c; raises NativeUnavailable."""
    return P2pRunner()


def resolve(comm) -> tuple[P2pRunner | None, str | None]:
    """(runner, None) when every rank of comm loaded p2p.c, else (None, why). Collective."""
    return extension.resolve(comm, load, "native p2p engine", "the mpi4py loops")
