"""The mt family's native engine: mt.c (POSIX threads, one communicator each), built,
cached, loaded and checked by commbench.native.extension like kernels.c.

`load()` builds (or finds) the library and checks it runs on mpi4py's MPI;
`MtRunner.run(...)` measures one benchmark at one count on T threads and returns
every thread's seconds, whether it took part, and its check failures.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

from commbench.native import abi, extension

SOURCE = Path(__file__).with_name("mt.c")
ABI_VERSION = abi.define(SOURCE, "CBMT_ABI_VERSION")
LIB_NAME = "libcommbench_mt.so"

# The C enums of mt.c, by IMB-MT's names and the options' values, read from its tables.
BENCH_CODES = abi.codes(SOURCE, "CBMT_BENCHMARKS")
BARRIER_CODES = abi.codes(SOURCE, "CBMT_BARRIERS")
ALLOC_CODES = abi.codes(SOURCE, "CBMT_ALLOCS")


class RunArgs(ctypes.Structure):
    """cbmt_args of mt.c (CBMT_ARGS_FIELDS)."""

    _fields_ = abi.fields(SOURCE, "CBMT_ARGS_FIELDS")


STRUCTS: dict[str, type] = {"cbmt_args": RunArgs}  # checked at load


class MtRunner:
    """The loaded library, checked to share mpi4py's initialised MPI."""

    def __init__(self):
        self.dll, self.path, self.provided = extension.open_library(
            SOURCE, LIB_NAME, "cbmt_", ABI_VERSION, STRUCTS, ("-pthread",)
        )
        self.fn = self.dll.cbmt_run
        self.fn.restype = ctypes.c_int
        self.fn.argtypes = [ctypes.POINTER(RunArgs)]

    def run(self, comms: list, world, **settings: int) -> tuple[list[float], list[int], list[int]]:
        """(seconds, took part, check failures) per thread; comms: one mpi4py communicator a thread.

        settings: the int fields of RunArgs but comms/world/outputs (bench, count, …)."""
        from mpi4py import MPI

        n = len(comms)
        handles = (ctypes.c_void_p * n)(*[MPI._addressof(c) for c in comms])
        times, results, fails = (
            (ctypes.c_double * n)(),
            (ctypes.c_int * n)(),
            (ctypes.c_longlong * n)(),
        )
        a = RunArgs(
            threads=n,
            comms=ctypes.addressof(handles),
            world=MPI._addressof(world),
            times=ctypes.addressof(times),
            results=ctypes.addressof(results),
            failures=ctypes.addressof(fails),
            **settings,
        )
        if self.fn(ctypes.byref(a)) != 0:
            raise MemoryError("mt.c: could not start its threads or allocate its buffers")
        if any(f < 0 for f in fails):
            raise MemoryError("mt.c: a thread could not allocate its buffers")
        return list(times), list(results), list(fails)


def load() -> MtRunner:
    """Build (or find in the cache) and load mt.c; raises NativeUnavailable."""
    return MtRunner()


def resolve(comm) -> tuple[MtRunner | None, str | None]:
    """(runner, None) when every rank of comm loaded mt.c, else (None, why). Collective."""
    return extension.resolve(comm, load, "native mt engine", "the mpi4py engine (Python threads)")
