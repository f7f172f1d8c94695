"""The gpcnet family's native engine: gpcnet.c, network_test's timed iterations in C, built,
cached, loaded and checked by commbench.native.extension like kernels.c.

`load()` builds (or finds) the library and checks it runs on mpi4py's MPI;
`GpcnetRunner.loop(kind, ...)` runs warm-up and timed iterations of one test's operation
and returns (each timed iteration's seconds, the MPI_Wtime span of them together).
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from commbench.native import abi, extension

SOURCE = Path(__file__).with_name("gpcnet.c")
ABI_VERSION = abi.define(SOURCE, "CBG_ABI_VERSION")
LIB_NAME = "libcommbench_gpcnet.so"

# The C enum of gpcnet.c, by the gpcnet family's test kinds (CBG_KINDS).
KIND_CODES = abi.codes(SOURCE, "CBG_KINDS")


class GpcnetLoopArgs(ctypes.Structure):
    """cbg_args of gpcnet.c (CBG_ARGS_FIELDS)."""

    _fields_ = abi.fields(SOURCE, "CBG_ARGS_FIELDS")


STRUCTS: dict[str, type] = {"cbg_args": GpcnetLoopArgs}  # checked at load


def _at(a: np.ndarray | None) -> int | None:
    return None if a is None else a.ctypes.data


class GpcnetRunner:
    """The loaded library, checked to share mpi4py's initialised MPI."""

    def __init__(self):
        self.dll, self.path, _ = extension.open_library(
            SOURCE, LIB_NAME, "cbg_", ABI_VERSION, STRUCTS
        )
        self.fn = self.dll.cbg_loop
        self.fn.restype = ctypes.c_int
        self.fn.argtypes = [ctypes.POINTER(GpcnetLoopArgs)]

    def loop(
        self,
        kind: str,
        comm,
        warm: int,
        iters: int,
        send: np.ndarray,
        recv: np.ndarray,
        *,
        count: int = 1,
        flight: int = 1,
        sync: bool = False,
        left: int = 0,
        right: int = 0,
        stride: int = 0,
        win=None,
        origin: np.ndarray | None = None,
    ) -> tuple[np.ndarray, float]:
        """warm untimed, then iters timed iterations of kind's operation (gpcnet.c):
        (each timed iteration's seconds, the MPI_Wtime span of the timed ones)."""
        from mpi4py import MPI

        samples = np.empty(max(iters, 1))
        a = GpcnetLoopArgs(
            kind=KIND_CODES[kind],
            warm=warm,
            iters=iters,
            count=count,
            flight=flight,
            sync=int(sync),
            left=left,
            right=right,
            stride=stride,
            comm=MPI._addressof(comm),
            win=MPI._addressof(win) if win is not None else None,
            send=_at(send),
            recv=_at(recv),
            origin=_at(origin),
            samples=_at(samples),
        )
        if self.fn(ctypes.byref(a)) != 0:
            raise ValueError(f"gpcnet.c: kind {kind!r} with {flight} in flight is not one it runs")
        return samples[:iters], a.span


def load() -> GpcnetRunner:
    """Build (or find in the cache) and load gpcnet.c; raises NativeUnavailable."""
    return GpcnetRunner()


def resolve(comm) -> tuple[GpcnetRunner | None, str | None]:
    """(runner, None) when every rank of comm loaded gpcnet.c, else (None, why). Collective."""
    return extension.resolve(comm, load, "native gpcnet engine", "the mpi4py loops")
