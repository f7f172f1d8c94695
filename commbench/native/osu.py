"""The osu family's native engine: one C file per group of OSU benchmarks
(osu_pt2pt.c, and osu_<group>.c for the groups to come), each built, cached, loaded and
checked to run on mpi4py's MPI by commbench.native.extension.

Every loop is `int cbosu_<group>_<name>(cbosu_args *)` (osu.h); `OsuRunner(group)`
loads osu_<group>.c, `runner.loop(name, args)` runs one. `pack(...)` fills the
argument block from numpy buffers and mpi4py handles (untimed). The structs Python
fills (the argument block, -c's rounds, the groups' control blocks) are declared once,
in osu.h, whose rows give their ctypes mirrors below; `block(struct)` is one's bytes
as the numpy array a loop is handed as abuf.
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

from commbench.native import abi, extension

HERE = Path(__file__).parent
HEADER = HERE / "osu.h"
ABI_VERSION = abi.define(HEADER, "CBOSU_ABI_VERSION")


class OsuLoopArgs(ctypes.Structure):
    """cbosu_args of osu.h (CBOSU_ARGS_FIELDS)."""

    _fields_ = abi.fields(HEADER, "CBOSU_ARGS_FIELDS")


class Rounds(ctypes.Structure):
    """cbosu_rounds of osu.h: -c's rounds run in C (driver.validated_rounds)."""

    _fields_ = abi.fields(HEADER, "CBOSU_ROUNDS_FIELDS")


class CollCtl(ctypes.Structure):
    """cbosu_coll_ctl of osu.h: osu_coll.c's control block (collectives_loops.control)."""

    _fields_ = abi.fields(HEADER, "CBOSU_COLL_CTL_FIELDS")


class OverlapCtl(ctypes.Structure):
    """cbosu_overlap_ctl of osu.h: the overlap loops' control block (collective_calls.control)."""

    _fields_ = abi.fields(HEADER, "CBOSU_OVERLAP_CTL_FIELDS")


class RmaCtl(ctypes.Structure):
    """cbosu_rma_ctl of osu.h: osu_rma.c's control block (onesided_loops.control_block)."""

    _fields_ = abi.fields(HEADER, "CBOSU_RMA_CTL_FIELDS")


# The structs whose sizes every OSU library reports (CBOSU_STRUCTS), checked at load.
STRUCTS: dict[str, type] = {
    "cbosu_args": OsuLoopArgs,
    "cbosu_rounds": Rounds,
    "cbosu_coll_ctl": CollCtl,
    "cbosu_overlap_ctl": OverlapCtl,
    "cbosu_rma_ctl": RmaCtl,
}


def block(ctl: ctypes.Structure):
    """The bytes of a control block as a numpy uint8 array over the same memory (what a
    loop is handed as abuf); the array keeps ctl alive."""
    import numpy as np

    return np.frombuffer((ctypes.c_uint8 * ctypes.sizeof(ctl)).from_buffer(ctl), dtype=np.uint8)


class OsuRunner:
    """The loaded library of one group, checked to share mpi4py's initialised MPI."""

    def __init__(self, group: str):
        self.group = group
        self.prefix = f"cbosu_{group}_"
        self.dll, self.path, _ = extension.open_library(
            HERE / f"osu_{group}.c",
            f"libcommbench_osu_{group}.so",
            self.prefix,
            ABI_VERSION,
            STRUCTS,
        )
        self.fns: dict[str, Any] = {}
        self.seq: Any = None

    def fn(self, name: str) -> Any:
        if name not in self.fns:
            f = getattr(self.dll, self.prefix + name)
            f.restype, f.argtypes = ctypes.c_int, [ctypes.POINTER(OsuLoopArgs)]
            self.fns[name] = f
        return self.fns[name]

    def rounds(self, name: str, a: OsuLoopArgs, k: Rounds) -> int:
        """-c's rounds k.first … of the loop `name` (osu.h's cbosu_run_rounds): the index of the
        first whose received data differs from k.rpost (k.total: none did)."""
        f = getattr(self.dll, self.prefix + "rounds")
        f.restype, f.argtypes = (
            ctypes.c_longlong,
            [ctypes.c_void_p, ctypes.POINTER(OsuLoopArgs), ctypes.POINTER(Rounds)],
        )
        r = f(ctypes.cast(self.fn(name), ctypes.c_void_p), ctypes.byref(a), ctypes.byref(k))
        if r < 0:
            raise MemoryError(f"osu_{self.group}.c: {name} could not allocate its requests")
        return int(r)

    def loop(self, name: str, a: OsuLoopArgs, barrier: bool = False, warm: int = -1) -> None:
        """The C loop `name` on a: first an MPI_Barrier (barrier) and `warm` untimed
        iterations (warm >= 0), all in one C call (osu.h's cbosu_sequence)."""
        if self.seq is None:
            self.seq = getattr(self.dll, self.prefix + "sequence")
            self.seq.restype = ctypes.c_int
            self.seq.argtypes = [
                ctypes.c_void_p,
                ctypes.POINTER(OsuLoopArgs),
                ctypes.c_int,
                ctypes.c_int,
            ]
        fn = ctypes.cast(self.fn(name), ctypes.c_void_p)
        if self.seq(fn, ctypes.byref(a), int(barrier), int(warm)) != 0:
            raise MemoryError(f"osu_{self.group}.c: {name} could not allocate its requests")


def pack(comm, dtype, sbuf, rbuf, abuf, **ints) -> tuple[OsuLoopArgs, list]:
    """The argument block (and what it points into, to keep alive beside it)."""
    from mpi4py import MPI

    keep = [ctypes.c_void_p(MPI._addressof(comm)), ctypes.c_void_p(MPI._addressof(dtype))]
    a = OsuLoopArgs(
        comm=keep[0].value,
        dtype=keep[1].value,
        sbuf=sbuf.ctypes.data,
        rbuf=rbuf.ctypes.data,
        abuf=abuf.ctypes.data,
        **ints,
    )
    return a, keep


def with_times(a: OsuLoopArgs, times) -> OsuLoopArgs:
    """a with times pointing at a float64 numpy array (None: the warm-up)."""
    a.times = times.ctypes.data if times is not None else None
    return a


def resolve(comm, group: str) -> tuple[OsuRunner | None, str | None]:
    """(runner, None) when every rank of comm loaded osu_<group>.c, else (None, why). Collective."""
    return extension.resolve(
        comm, lambda: OsuRunner(group), f"native osu {group} engine", "the mpi4py loops"
    )
