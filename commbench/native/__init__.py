"""The native engine: timed loops compiled in C, called through ctypes.

`kernels.c` holds one C function per communication pattern; it is compiled at
first use with the mpicc of the MPI that mpi4py loaded (the mpich wheel's,
beside Python) into a per-user cache directory keyed by the source, the
compiler and the MPI library, and loaded with ctypes. A kernel receives the
communicator as the address of mpi4py's MPI_Comm handle (MPI._addressof) and
the buffers as numpy addresses, so it runs the same pattern on the same memory
as the mpi4py kernel; only the loop between the two timestamps leaves Python.

The patterns are the rows of one table, CB_PATTERNS at the top of kernels.c:
each row names the pattern (the C function is cb_<pattern>), the builder of its
arguments (ARGS below) and its loop and MPI calls. The C preprocessor expands
the rows into the kernels; this module reads the same rows from the source at
import (PATTERNS: pattern -> argument builder), so it knows the patterns
without building, and checks them against the built library's cb_patterns().

A benchmark opts in by naming its pattern: Benchmark.native = "pingpong".
Engine selection happens once, in `resolve`.

Environment:
  COMMBENCH_MPICC       compiler to build with (default: mpicc beside Python)
  COMMBENCH_CACHE_DIR   where built libraries are kept (default ~/.cache/commbench)
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The cb_args of the kernels and their builders (what the one-sided and overlap
# setups leave for them in ctx.state: args.WIN, DISPS, USES, REQUESTS, CPU_TARGET).
from commbench.native.args import ARGS, CPU_TARGET, REQUESTS, TYPE_CODES, Args  # noqa: F401

SOURCE = Path(__file__).with_name("kernels.c")
ABI_VERSION = 8  # CB_ABI_VERSION of kernels.c
ENGINES = ("native", "mpi4py", "both")


class NativeUnavailable(Exception):
    """The native engine cannot be built or loaded here; the message says why."""


# ---------------------------------------------------------------- building

def mpi_abi() -> str:
    """The MPI ABI mpi4py runs on: 'mpich', 'openmpi', 'mpiabi', or '' (built from source)."""
    from mpi4py import MPI

    name = os.path.basename(MPI.__file__)  # MPI.mpich.cpython-311-….so
    parts = name.split(".")
    return parts[1] if len(parts) > 2 and parts[1] in ("mpich", "openmpi", "mpiabi", "impi", "msmpi") else ""


def find_mpicc(abi: str | None = None) -> str | None:
    """The C compiler wrapper of mpi4py's MPI: COMMBENCH_MPICC, else beside Python, else PATH.

    Looked up like commbench.launch.find_mpiexec. For the MPI standard ABI
    (mpi4py's 'mpiabi' variant) MPICH names its wrapper mpicc_abi.
    """
    given = os.environ.get("COMMBENCH_MPICC")
    if given:
        return shutil.which(given) or (given if os.path.isfile(given) else None)
    names = ("mpicc_abi", "mpicc") if abi == "mpiabi" else ("mpicc",)
    for d in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        for name in names:
            p = os.path.join(d, name)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
    for name in names:
        p = shutil.which(name)
        if p:
            return p
    return None


def cache_dir() -> Path:
    base = os.environ.get("COMMBENCH_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "commbench"


def local_includes(source: Path) -> list[Path]:
    """The files beside `source` that it includes (`#include "loops.h"`), in order."""
    names = re.findall(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', source.read_text(), re.M)
    return [source.with_name(n) for n in names if source.with_name(n).is_file()]


def build_key(mpicc: str, abi: str, library_version: str, source: Path | None = None) -> str:
    h = hashlib.sha256()
    source = source or SOURCE  # SOURCE looked up at call time (tests replace it)
    for part in (source, *local_includes(source)):  # the source and what it includes
        h.update(part.read_bytes())
    real = os.path.realpath(mpicc)
    st = os.stat(real)
    for part in (real, str(st.st_mtime_ns), str(st.st_size), abi, library_version,
                 platform.machine(), str(ABI_VERSION)):
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:16]


def build(mpicc: str, abi: str, library_version: str, source: Path | None = None,
          lib_name: str = "libcommbench_native.so", flags: tuple[str, ...] = ()) -> Path:
    """The compiled library of `source` (kernels.c; commbench.native.mt: mt.c), built now
    unless the cache has it; raises NativeUnavailable."""
    source = source or SOURCE
    key = build_key(mpicc, abi, library_version, source)
    target_dir = cache_dir() / "native" / key
    lib = target_dir / lib_name
    if lib.is_file():
        return lib
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise NativeUnavailable(f"cannot create cache directory {target_dir} ({e.strerror})") from None
    # Every rank may get here at once: one builds under the lock, the others wait
    # and find the library; a rename makes it appear whole.
    with open(target_dir / ".lock", "w") as lock:
        try:
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)
        except (ImportError, OSError):
            pass
        if lib.is_file():
            return lib
        fd, tmp = tempfile.mkstemp(prefix=".build-", suffix=".so", dir=target_dir)
        os.close(fd)
        cmd = [mpicc, "-O2", "-fPIC", "-shared", *flags, "-o", tmp, str(source)]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            os.unlink(tmp)
            raise NativeUnavailable(f"cannot run {mpicc} ({e})") from None
        if p.returncode != 0:
            os.unlink(tmp)
            err = (p.stderr or p.stdout).strip().splitlines()
            raise NativeUnavailable(f"{mpicc} failed: {err[-1] if err else 'exit ' + str(p.returncode)}")
        os.replace(tmp, lib)
    return lib


# ---------------------------------------------------------------- loading

class Library:
    """The loaded kernels, checked to run on the very MPI that mpi4py initialised."""

    def __init__(self, path: Path):
        from mpi4py import MPI

        try:
            self.dll = ctypes.CDLL(str(path))
        except OSError as e:
            raise NativeUnavailable(f"cannot load {path} ({e})") from None
        if self.dll.cb_abi_version() != ABI_VERSION:
            raise NativeUnavailable(f"{path} is from another commbench version")
        self.path = path
        comm = MPI.COMM_WORLD
        init, rank, size = ctypes.c_int(0), ctypes.c_int(-1), ctypes.c_int(-1)
        version = ctypes.create_string_buffer(8192)
        vlen = ctypes.c_int(0)
        self.dll.cb_probe(ctypes.c_void_p(MPI._addressof(comm)), ctypes.byref(init), ctypes.byref(rank),
                          ctypes.byref(size), version, ctypes.byref(vlen))
        # A second MPI library in the process would not be initialised, or would
        # see another world: refuse it rather than mix two MPIs.
        if not init.value:
            raise NativeUnavailable(f"{path} links an MPI library other than mpi4py's")
        if (rank.value, size.value) != (comm.Get_rank(), comm.Get_size()):
            raise NativeUnavailable(f"{path}: MPI_COMM_WORLD handle mismatch (ABI differs from mpi4py's)")
        self.dll.cb_patterns.restype = ctypes.c_char_p
        built = self.dll.cb_patterns().decode().split()
        if built != [f"{name}:{args}" for name, args in TABLE]:
            raise NativeUnavailable(f"{path}: its pattern table differs from the one read from {SOURCE.name}")
        self.kernels: dict[str, Any] = {}
        for name in PATTERNS:
            fn = getattr(self.dll, "cb_" + name)
            fn.restype = ctypes.c_double
            fn.argtypes = [ctypes.POINTER(Args), ctypes.c_longlong]
            self.kernels[name] = fn


def load() -> Library:
    """Build (or find in the cache) and load the kernels; raises NativeUnavailable."""
    from mpi4py import MPI

    if not SOURCE.is_file():
        raise NativeUnavailable(f"{SOURCE} is missing from the installation")
    abi = mpi_abi()
    mpicc = find_mpicc(abi)
    if mpicc is None:
        given = os.environ.get("COMMBENCH_MPICC")
        raise NativeUnavailable(f"COMMBENCH_MPICC={given!r} not found" if given
                                else "no mpicc beside Python or on PATH")
    return Library(build(mpicc, abi, MPI.Get_library_version()))


# ---------------------------------------------------------------- selection

_resolved: dict[str, tuple[list[str], str | None, Library | None]] = {}


def resolve(requested: str, comm) -> tuple[list[str], str | None]:
    """(engines to run, note) for `--engine requested`, agreed by every rank of comm.

    Collective. 'native' and 'both' try to build/load the kernels on every rank;
    unless all succeed everyone falls back to mpi4py, and the note says why.
    The answer is kept, so later calls are free.
    """
    from mpi4py import MPI

    if requested in _resolved:
        engines, note, _ = _resolved[requested]
        return engines, note
    lib, reason = None, None
    if requested in ("native", "both"):
        try:
            lib = load()
        except NativeUnavailable as e:
            reason = str(e)
        except Exception as e:  # noqa: BLE001 -- a broken toolchain must never stop a run
            reason = f"{type(e).__name__}: {e}"
    ok = comm.allreduce(lib is not None, op=MPI.LAND) if requested != "mpi4py" else False
    reasons = comm.allgather(reason)
    note = None
    if requested == "mpi4py":
        engines = ["mpi4py"]
    elif ok:
        engines = ["native", "mpi4py"] if requested == "both" else ["native"]
    else:
        engines = ["mpi4py"]
        why = next((r for r in reasons if r), "not available on every rank")
        note = f"native engine unavailable ({why}); using the mpi4py engine"
        lib = None
    _resolved[requested] = (engines, note, lib)
    return engines, note


def library() -> Library | None:
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
    try:
        text = source.read_text()
    except OSError:
        return []
    text = re.sub(r"/\*.*?\*/", " ", text.replace("\\\n", " "), flags=re.S)
    m = re.search(r"^[ \t]*#[ \t]*define[ \t]+CB_PATTERNS\(P\)(.*)$", text, re.M)
    if m is None:
        raise RuntimeError(f"{source}: no CB_PATTERNS table")
    return re.findall(r"\bP\(\s*(\w+)\s*,\s*(\w+)\s*,", m.group(1))


def _patterns(table: list[tuple[str, str]]) -> dict[str, Callable]:
    missing = sorted({args for _, args in table} - ARGS.keys())
    if missing:
        raise RuntimeError(f"{SOURCE.name} names argument builders that commbench.native.ARGS lacks: {missing}")
    return {name: ARGS[args] for name, args in table}


# The table, and pattern -> builder of its arguments: what benchmarks may name.
TABLE: list[tuple[str, str]] = read_table()
PATTERNS: dict[str, Callable] = _patterns(TABLE)


def pattern_of(bench) -> str | None:
    """bench's native pattern (its descriptor's `native` field), or None."""
    p = bench.native
    return p if p in PATTERNS else None


def kernel_for(bench, lib: Library | None = None) -> Callable | None:
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
            from commbench import policy

            a.cpu_factor, a.cpu_cap = ctx.state.get(CPU_TARGET, (1.0, 0.0))
            a.n_barr = policy.N_BARR
        t = fn(ctypes.byref(a), n)
        del keep
        return t if ncomp == 1 else tuple(a.out[:ncomp])

    return kernel


def describe(requested: str, engines: list[str], note: str | None) -> dict:
    """The engine part of the run metadata."""
    lib = library() if "native" in engines else None
    return {"requested": requested, "engines": engines, "note": note,
            "library": str(lib.path) if lib else None, "mpi_abi": mpi_abi(),
            "native_patterns": sorted(PATTERNS)}
