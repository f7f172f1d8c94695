"""The native engine: timed loops compiled in C, called through ctypes.

`kernels.c` holds one C function per communication pattern; it is compiled at
first use with the mpicc of the MPI that mpi4py loaded (the mpich wheel's,
beside Python) into a per-user cache directory keyed by the source, the
compiler and the MPI library, and loaded with ctypes, by the loader of every
native library (commbench.native.extension). A kernel receives the
communicator as the address of mpi4py's MPI_Comm handle (MPI._addressof) and
the buffers as numpy addresses, so it runs the same pattern on the same memory
as the mpi4py kernel; only the loop between the two timestamps leaves Python.

The patterns are the rows of one table, CB_PATTERNS at the top of kernels.c:
each row names the pattern (the C function is cb_<pattern>), the builder of its
arguments (ARGS below) and its loop and MPI calls. The C preprocessor expands
the rows into the kernels; this module reads the same rows from the source at
import (PATTERNS: pattern -> argument builder), so it knows the patterns
without building, and checks them against the built library's cb_patterns().
The argument block, cb_args, is declared once there too (CB_ARGS_FIELDS, read by
commbench.native.args for its mirror NativeArgs), as is the ABI number (abi.py).

A benchmark opts in by naming its pattern: Benchmark.native = "pingpong".
Engine selection happens once, in `resolve`. The environment the build reads:
commbench.native.extension.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from pathlib import Path
from typing import Any

from commbench import policy
from commbench.native import abi, extension

# The cb_args of the kernels and their builders (what they read of the row's Context: args.py).
from commbench.native.args import ARGS, KERNELS, TYPE_CODES, NativeArgs  # noqa: F401

# The loader, one for every native library (re-exported: the names this package had).
from commbench.native.extension import (  # noqa: F401
    NativeUnavailable,
    build,
    build_key,
    find_mpicc,
    local_includes,
    mpi_abi,
)

SOURCE = KERNELS
LIB_NAME = "libcommbench_native.so"
ABI_VERSION = abi.define(SOURCE, "CB_ABI_VERSION")
STRUCTS: dict[str, type] = {"cb_args": NativeArgs}  # the structs whose sizes are checked at load
ENGINES = ("native", "mpi4py", "both")


# ---------------------------------------------------------------- loading


class NativeLibrary:
    """The loaded kernels, checked to run on the very MPI that mpi4py initialised."""

    def __init__(self, path: Path):
        self.dll, _ = extension.open_built(path, "cb_", ABI_VERSION, STRUCTS)
        self.path = path
        self.dll.cb_patterns.restype = ctypes.c_char_p
        built = self.dll.cb_patterns().decode().split()
        if built != [f"{name}:{args}" for name, args in TABLE]:
            raise NativeUnavailable(
                f"{path}: its pattern table differs from the one read from {SOURCE.name}"
            )
        self.kernels: dict[str, Any] = {}
        for name in PATTERNS:
            fn = getattr(self.dll, "cb_" + name)
            fn.restype = ctypes.c_double
            fn.argtypes = [ctypes.POINTER(NativeArgs), ctypes.c_longlong]
            self.kernels[name] = fn


def load() -> NativeLibrary:
    """Build (or find in the cache) and load the kernels; raises NativeUnavailable."""
    return NativeLibrary(extension.build_library(SOURCE, LIB_NAME))


# ---------------------------------------------------------------- selection

_resolved: dict[str, tuple[list[str], str | None, NativeLibrary | None]] = {}


def resolve(requested: str, comm) -> tuple[list[str], str | None]:
    """(engines to run, note) for `--engine requested`, agreed by every rank of comm.

    Collective. 'native' and 'both' try to build/load the kernels on every rank;
    unless all succeed everyone falls back to mpi4py, and the note says why.
    The answer is kept, so later calls are free.
    """
    if requested in _resolved:
        engines, note, _ = _resolved[requested]
        return engines, note
    lib, note = None, None
    if requested in ("native", "both"):
        lib, note = extension.resolve(comm, load, "native engine", "the mpi4py engine")
    if lib is None:
        engines = ["mpi4py"]
    else:
        engines = ["native", "mpi4py"] if requested == "both" else ["native"]
    _resolved[requested] = (engines, note, lib)
    return engines, note


def library() -> NativeLibrary | None:
    for _, _, lib in _resolved.values():
        if lib is not None:
            return lib
    return None


# ---------------------------------------------------------------- the overlap loops


def calibrate_cpu(matrix: int = 100) -> None:
    """Calibrate the C CPU kernel of the overlap loops (order `matrix`, the methodology's)
    once per process, when the native engine is loaded (the setups of the overlap
    benchmarks call it, outside any timing)."""
    lib = library()
    if lib is not None:
        lib.dll.cb_cpu_calibrate.restype = ctypes.c_double
        lib.dll.cb_cpu_calibrate.argtypes = [ctypes.c_int]
        lib.dll.cb_cpu_calibrate(matrix)


def read_table(source: Path = SOURCE) -> list[tuple[str, str]]:
    """(pattern, argument builder) of each row of CB_PATTERNS in `source`, in order.

    The rows are `P(name, args, loop, calls...)` in the body of `#define
    CB_PATTERNS(P)`; like the C preprocessor this joins the continued lines and
    drops the comments first. [] when the source is missing (no native engine).
    """
    return abi.rows(source, "CB_PATTERNS", r"(\w+)\s*,\s*(\w+)\s*,")


def _patterns(table: list[tuple[str, str]]) -> dict[str, Callable]:
    missing = sorted({args for _, args in table} - ARGS.keys())
    if missing:
        raise RuntimeError(
            f"{SOURCE.name} names argument builders that commbench.native.ARGS lacks: {missing}"
        )
    return {name: ARGS[args] for name, args in table}


# The table, and pattern -> builder of its arguments: what benchmarks may name.
TABLE: list[tuple[str, str]] = read_table()
PATTERNS: dict[str, Callable] = _patterns(TABLE)


def pattern_of(bench) -> str | None:
    """bench's native pattern (its descriptor's `native` field), or None."""
    p = bench.native
    return p if p in PATTERNS else None


def kernel_for(bench, lib: NativeLibrary | None = None) -> Callable | None:
    """A kernel(ctx, n) running bench's pattern natively, or None when it has none."""
    lib = lib or library()
    pat = pattern_of(bench)
    if lib is None or pat is None:
        return None
    fn = lib.kernels[pat]
    make_args = PATTERNS[pat]
    ncomp = len(bench.components)  # 3: the overlap benchmarks, Truly_passive_put

    def kernel(ctx, n):
        a, keep = make_args(ctx)  # keep: arrays that must outlive the call
        a.ncomp = ncomp
        if ncomp > 1:
            a.cpu_factor, a.cpu_cap = ctx.cpu_target
            a.n_barr = policy.N_BARR
        t = fn(ctypes.byref(a), n)
        del keep
        return t if ncomp == 1 else tuple(a.out[:ncomp])

    return kernel


def describe(requested: str, engines: list[str], note: str | None) -> dict:
    """The engine part of the run metadata."""
    lib = library() if "native" in engines else None
    return {
        "requested": requested,
        "engines": engines,
        "note": note,
        "library": str(lib.path) if lib else None,
        # the wrapper, what commbench set for it, and the MPI library it was built for
        "build": extension.BUILT.get(str(lib.path)) if lib else None,
        "mpi_abi": mpi_abi(),
        "native_patterns": sorted(PATTERNS),
    }
