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

SOURCE = Path(__file__).with_name("kernels.c")
ABI_VERSION = 5  # CB_ABI_VERSION of kernels.c
ENGINES = ("native", "mpi4py", "both")


class NativeUnavailable(Exception):
    """The native engine cannot be built or loaded here; the message says why."""


class Args(ctypes.Structure):
    """cb_args of kernels.c, field for field."""

    _fields_ = [
        ("comm", ctypes.c_void_p),
        ("sbuf", ctypes.c_void_p),
        ("rbuf", ctypes.c_void_p),
        ("sstride", ctypes.c_longlong),
        ("rstride", ctypes.c_longlong),
        ("soff2", ctypes.c_longlong),
        ("slots", ctypes.c_int),
        ("count", ctypes.c_int),
        ("peer", ctypes.c_int),
        ("source", ctypes.c_int),
        ("rank", ctypes.c_int),
        ("size", ctypes.c_int),
        ("counts", ctypes.c_void_p),
        ("displs", ctypes.c_void_p),
        ("sync", ctypes.c_int),
        ("root_shift", ctypes.c_int),
        ("window", ctypes.c_int),
        ("dtype", ctypes.c_int),
        ("imb_barrier", ctypes.c_int),
    ]


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


def build_key(mpicc: str, abi: str, library_version: str, source: Path | None = None) -> str:
    h = hashlib.sha256()
    h.update((source or SOURCE).read_bytes())  # SOURCE looked up at call time (tests replace it)
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


# ---------------------------------------------------------------- wiring

# cb_datatype's codes of IMB 2021's type names (commbench.buffers.DATA_TYPES).
TYPE_CODES = {"byte": 0, "char": 1, "int": 2, "float": 3, "double": 4}


def _base(ctx, count: int, red: bool = False) -> tuple[Args, list]:
    """The common arguments; count in elements of the datatype, the message type
    (ctx.data_type) or, for a reduction, ctx.red_type."""
    from mpi4py import MPI

    a = Args()
    a.dtype = TYPE_CODES[ctx.red_type if red else ctx.data_type]
    a.comm = MPI._addressof(ctx.comm)
    a.sbuf = ctx.sbuf.ctypes.data if ctx.sbuf.nbytes else None
    a.rbuf = ctx.rbuf.ctypes.data if ctx.rbuf.nbytes else None
    a.sstride = ctx.bufs.send_stride
    a.rstride = ctx.bufs.recv_stride
    a.slots = max(ctx.slots, 1)
    a.count = count
    a.rank = ctx.rank
    a.size = ctx.size
    a.peer = 1 - ctx.rank if ctx.size == 2 else -1
    a.source = -1
    a.sync = ctx.sync
    a.root_shift = ctx.root_shift
    a.imb_barrier = int(ctx.imb_barrier)
    return a, []


def _with_counts(a: Args, keep: list, counts: list[int], displs: list[int] | None = None) -> None:
    import numpy as np

    c = np.asarray(counts, dtype=np.intc)
    keep.append(c)
    a.counts = c.ctypes.data
    if displs is not None:
        d = np.asarray(displs, dtype=np.intc)
        keep.append(d)
        a.displs = d.ctypes.data


def _p2p(specific: bool) -> Callable:
    def args(ctx):
        a, keep = _base(ctx, ctx.x // ctx.width)
        if specific:
            a.source = 1 - ctx.rank
        return a, keep

    return args


def _p2p_select(ctx):
    a, keep = _base(ctx, ctx.x // ctx.width)
    if not ctx.any_source:  # the methodology's source (Context.any_source)
        a.source = 1 - ctx.rank
    return a, keep


def _exchange(ctx):
    a, keep = _base(ctx, ctx.x // ctx.width)
    a.soff2 = max(ctx.x, 4)  # the second send block, at mpi1.xp(X)
    return a, keep


def _floats(ctx):
    return _base(ctx, ctx.x // ctx.red_width, red=True)  # a reduction's elements (-red_data_type)


def _reduce_scatter(ctx):
    from commbench import policy

    a, keep = _base(ctx, 0, red=True)
    _with_counts(a, keep, policy.even_counts(ctx.x // ctx.red_width, ctx.size))
    return a, keep


def _window(ctx):
    a, keep = _base(ctx, ctx.x // ctx.width)
    pairs = ctx.size // 2  # rank r < NP/2 pairs with r + NP/2; the last of an odd NP idles
    me = ctx.rank
    a.peer = -1 if me >= 2 * pairs else (me + pairs if me < pairs else me - pairs)
    a.window = ctx.params.get("mpi1_window_size", 256)
    return a, keep


def _bytes(ctx):
    return _base(ctx, ctx.x // ctx.width)


def _vbytes(ctx):
    c = ctx.x // ctx.width
    a, keep = _base(ctx, c)
    _with_counts(a, keep, [c] * ctx.size, [j * c for j in range(ctx.size)])
    return a, keep


# The argument builders a row of kernels.c's table names: (Args, keep) from the
# harness's Context, keep holding the arrays that must outlive the call.
ARGS: dict[str, Callable] = {
    "p2p": _p2p(False),  # X bytes, receive from MPI_ANY_SOURCE
    "p2p_specific": _p2p(True),  # X bytes, receive from the partner
    "p2p_select": _p2p_select,  # X bytes, receive as the methodology says (PingPong, PingPing)
    "bytes": _bytes,  # X bytes
    "floats": _floats,  # X/4 floats
    "exchange": _exchange,  # X bytes, second send block at max(X, 4)
    "reduce_scatter": _reduce_scatter,  # counts: X/4 floats spread evenly over the ranks
    "vbytes": _vbytes,  # X bytes per rank, counts X, displacements j*X
    "window": _window,  # X bytes, -window_size messages to the peer r ± NP/2
}


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

    def kernel(ctx, n):
        a, keep = make_args(ctx)  # keep: arrays that must outlive the call
        t = fn(ctypes.byref(a), n)
        del keep
        return t

    return kernel


def describe(requested: str, engines: list[str], note: str | None) -> dict:
    """The engine part of the run metadata."""
    lib = library() if "native" in engines else None
    return {"requested": requested, "engines": engines, "note": note,
            "library": str(lib.path) if lib else None, "mpi_abi": mpi_abi(),
            "native_patterns": sorted(PATTERNS)}
