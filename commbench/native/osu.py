"""The osu family's native engine: one C file per group of OSU benchmarks
(osu_pt2pt.c, and osu_<group>.c for the groups to come), each built and cached by
commbench.native.build, loaded with ctypes and checked to run on mpi4py's MPI.

Every loop is `int cbosu_<group>_<name>(cbosu_args *)` (osu.h); `Runner(group)`
loads osu_<group>.c, `runner.loop(name, args)` runs one. `pack(...)` fills the
argument block from numpy buffers and mpi4py handles (untimed).
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

from commbench.native import extension

HERE = Path(__file__).parent
ABI_VERSION = 1  # CBOSU_ABI_VERSION of osu.h


class LoopArgs(ctypes.Structure):
    """cbosu_args of osu.h, field for field."""

    _fields_ = [(n, ctypes.c_int) for n in ("n", "count", "window", "peer", "timer", "root")] + [
        ("comm", ctypes.c_void_p), ("dtype", ctypes.c_void_p),
        ("sbuf", ctypes.c_void_p), ("rbuf", ctypes.c_void_p), ("abuf", ctypes.c_void_p),
        ("times", ctypes.POINTER(ctypes.c_double)),
        ("aux", ctypes.c_longlong * 4),
    ]


class Runner:
    """The loaded library of one group, checked to share mpi4py's initialised MPI."""

    def __init__(self, group: str):
        self.group = group
        self.prefix = f"cbosu_{group}_"
        self.dll, self.path, _ = extension.open_library(HERE / f"osu_{group}.c", f"libcommbench_osu_{group}.so",
                                                        self.prefix, ABI_VERSION)
        self.fns: dict[str, Any] = {}

    def fn(self, name: str) -> Any:
        if name not in self.fns:
            f = getattr(self.dll, self.prefix + name)
            f.restype, f.argtypes = ctypes.c_int, [ctypes.POINTER(LoopArgs)]
            self.fns[name] = f
        return self.fns[name]

    def loop(self, name: str, a: LoopArgs) -> None:
        if self.fn(name)(ctypes.byref(a)) != 0:
            raise MemoryError(f"osu_{self.group}.c: {name} could not allocate its requests")


def pack(comm, dtype, sbuf, rbuf, abuf, **ints) -> tuple[LoopArgs, list]:
    """The argument block (and what it points into, to keep alive beside it)."""
    from mpi4py import MPI

    keep = [ctypes.c_void_p(MPI._addressof(comm)), ctypes.c_void_p(MPI._addressof(dtype))]
    a = LoopArgs(comm=keep[0].value, dtype=keep[1].value, sbuf=sbuf.ctypes.data, rbuf=rbuf.ctypes.data,
                 abuf=abuf.ctypes.data, **ints)
    return a, keep


def with_times(a: LoopArgs, times) -> LoopArgs:
    """a with times pointing at a float64 numpy array (None: the warm-up)."""
    a.times = times.ctypes.data_as(ctypes.POINTER(ctypes.c_double)) if times is not None else None
    return a


def resolve(comm, group: str) -> tuple[Runner | None, str | None]:
    """(runner, None) when every rank of comm loaded osu_<group>.c, else (None, why). Collective."""
    return extension.resolve(comm, lambda: Runner(group), f"native osu {group} engine", "the mpi4py loops")
