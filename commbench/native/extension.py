"""The one loader of commbench's native libraries (kernels.c, osu_<group>.c, p2p.c, mt.c):
each is compiled at first use with the mpicc of the MPI that mpi4py loaded (`find_mpicc`;
with the settings the wrapper needs, `wrapper_env`) into a per-user cache directory keyed
by the source, what it includes, the compiler and the MPI library's version and file, so
a cached library serves only the MPI it was built for (`build_library`), loaded with ctypes and
checked (`open_built`): its ABI number (<prefix>abi_version()), the size of every struct
Python fills against its ctypes mirror (<prefix>sizeof(name), abi.h), and that it runs
on the very MPI that mpi4py initialised (<prefix>probe). Whatever fails raises
NativeUnavailable, and `resolve` turns that, agreed by every rank, into the note with
which the engine falls back to its mpi4py loops.

Environment:
  COMMBENCH_MPICC       compiler to build with (default: the mpicc mpi4py was built with,
                        else the loaded MPI library's own: commbench.mpilib)
  COMMBENCH_CACHE_DIR   where built libraries are kept (default ~/.cache/commbench)
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
import re
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from commbench import mpilib


class NativeUnavailable(Exception):
    """The native engine cannot be built or loaded here; the message says why."""


# ---------------------------------------------------------------- building


def mpi_abi() -> str:
    """The MPI ABI mpi4py runs on: 'mpich', 'openmpi', 'mpiabi', or '' (built from source)."""
    from mpi4py import MPI

    name = os.path.basename(MPI.__file__)  # MPI.mpich.cpython-311-….so
    parts = name.split(".")
    return (
        parts[1]
        if len(parts) > 2 and parts[1] in ("mpich", "openmpi", "mpiabi", "impi", "msmpi")
        else ""
    )


def find_mpicc(abi: str | None = None, lib=None) -> str | None:
    """The C compiler wrapper of mpi4py's MPI: COMMBENCH_MPICC; else the one mpi4py was
    built with (a source build records it); else the library's own (commbench.mpilib:
    beside it, under a distribution's name such as mpicc.mpich, beside Python, on PATH).

    For the MPI standard ABI (mpi4py's 'mpiabi' variant) MPICH names its wrapper mpicc_abi.
    Looked up once a process for the same question (a rank builds two libraries).
    """
    env = os.environ
    return _find_mpicc(abi, lib, env.get("COMMBENCH_MPICC"), env.get("PATH"))


@functools.lru_cache(maxsize=8)
def _find_mpicc(abi: str | None, lib, given: str | None, _path: str | None) -> str | None:
    if given:
        return mpilib.given_tool(given)
    built_with = None
    try:
        import mpi4py

        # get_config reads the package's mpi.cfg (mpi4py 4: {} without one; a source build
        # writes it) with configparser: ~2 ms a rank, asked only where the file is
        if os.path.exists(os.path.join(os.path.dirname(mpi4py.__file__), "mpi.cfg")):
            built_with = (mpi4py.get_config() or {}).get("mpicc")
    except (ImportError, AttributeError):
        pass
    if built_with and (found := mpilib.given_tool(built_with)):
        return found
    names = ("mpicc_abi", "mpicc") if abi == "mpiabi" else ("mpicc",)
    return next(mpilib.tool_candidates(lib, names, mpilib.python_dirs()), None)


def wrapper_env(mpicc: str, lib) -> dict[str, str]:
    """What the wrapper needs in its environment that the user did not set: Intel MPI's
    wheel ships mpicc with its install folder left as a placeholder, so without I_MPI_ROOT
    it finds no mpi.h; its own prefix is that folder."""
    if os.environ.get("I_MPI_ROOT") or lib is None or lib.flavour != "intel":
        return {}
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(mpicc)))
    if os.path.isfile(os.path.join(prefix, "include", "mpi.h")):
        return {"I_MPI_ROOT": prefix}
    return {}


def first_error(output: str, status: int) -> str:
    """The compiler's first error line (not its last: 'compilation terminated.')."""
    lines = [ln.strip() for ln in output.strip().splitlines() if ln.strip()]
    for ln in lines:
        if re.search(r"\berror\b", ln, re.I):
            return ln
    return lines[0] if lines else f"exit {status}"


# What each library loaded in this process was built with: path -> {mpicc, env, library}.
BUILT: dict[str, dict] = {}


def local_includes(source: Path) -> list[Path]:
    """The files beside `source` that it includes (`#include "loops.h"`), and those they
    include, each once, in the order found."""
    found: list[Path] = []
    todo = [source]
    while todo:
        text = todo.pop(0).read_text()
        for name in re.findall(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', text, re.M):
            p = source.with_name(name)
            if p.is_file() and p != source and p not in found:
                found.append(p)
                todo.append(p)
    return found


def build_key(mpicc: str, abi: str, library_version: str, source: Path, library_path="") -> str:
    """The built library's name in the cache: the source and what it includes, the compiler
    wrapper's file, the ABI, the MPI it runs on (a cached library serves that one only), the
    machine (mpilib.zlib_key: a cache name, not a cryptographic hash; every rank computes it)."""
    real = os.path.realpath(mpicc)
    st = os.stat(real)
    parts = [p.read_text(errors="replace") for p in (source, *local_includes(source))]
    parts += [real, str(st.st_mtime_ns), str(st.st_size), abi, library_version, library_path]
    return mpilib.zlib_key("\0".join([*parts, platform.machine()]))


def _compile(mpicc: str, cmd: list[str], env: dict[str, str]) -> None:
    """Run the compiler; raises NativeUnavailable naming the wrapper and its first error."""
    try:
        p = subprocess.run(
            cmd, capture_output=True, text=True, timeout=120, check=False, env={**os.environ, **env}
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise NativeUnavailable(f"cannot run {mpicc} ({e})") from None
    if p.returncode != 0:
        told = " ".join(f"{k}={v}" for k, v in env.items())
        raise NativeUnavailable(
            f"{mpicc}{' with ' + told if told else ''} failed: "
            f"{first_error(p.stderr or p.stdout, p.returncode)} (COMMBENCH_MPICC names another "
            "compiler wrapper)"
        )


def build(
    mpicc: str,
    abi: str,
    library_version: str,
    source: Path,
    lib_name: str,
    flags: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    library_path: str = "",
) -> Path:
    """The compiled library of `source`, built now unless the cache has it;
    raises NativeUnavailable."""
    key = build_key(mpicc, abi, library_version, source, library_path)
    target_dir = Path(mpilib.cache_dir()) / "native" / key
    lib = target_dir / lib_name
    if lib.is_file():
        return lib
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise NativeUnavailable(
            f"cannot create cache directory {target_dir} ({e.strerror})"
        ) from None
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
        try:
            _compile(
                mpicc, [mpicc, "-O2", "-fPIC", "-shared", *flags, "-o", tmp, str(source)], env or {}
            )
        except NativeUnavailable:
            os.unlink(tmp)
            raise
        os.replace(tmp, lib)
    return lib


def build_library(source: Path, lib_name: str, flags: tuple[str, ...] = ()) -> Path:
    """`source` built (or found in the cache) with the mpicc of mpi4py's MPI;
    raises NativeUnavailable."""
    if not source.is_file():
        raise NativeUnavailable(f"{source} is missing from the installation")
    abi = mpi_abi()
    here = mpilib.here()
    mpicc = find_mpicc(abi, here)
    if mpicc is None:
        given = os.environ.get("COMMBENCH_MPICC")
        raise NativeUnavailable(
            f"COMMBENCH_MPICC={given!r} not found"
            if given
            else f"no mpicc of {here.describe()} found beside it, beside Python or on PATH "
            "(COMMBENCH_MPICC names one)"
        )
    env = wrapper_env(mpicc, here)
    path = build(mpicc, abi, here.version, source, lib_name, flags, env, here.path or "")
    BUILT[str(path)] = {"mpicc": mpicc, "env": env, "for": here.describe()}
    return path


# ---------------------------------------------------------------- loading


def check_sizes(dll: ctypes.CDLL, path: Path, prefix: str, structs: dict[str, type]) -> None:
    """Each struct's sizeof in the library (<prefix>sizeof) equals its ctypes mirror's;
    else NativeUnavailable naming the struct and both sizes."""
    sizeof = getattr(dll, prefix + "sizeof")
    sizeof.restype, sizeof.argtypes = ctypes.c_longlong, [ctypes.c_char_p]
    for name, mirror in structs.items():
        in_c, in_py = sizeof(name.encode()), ctypes.sizeof(mirror)
        if in_c < 0:
            raise NativeUnavailable(
                f"{path.name}: the library has no struct {name} (its Python mirror "
                f"{mirror.__module__}.{mirror.__qualname__} does)"
            )
        if in_c != in_py:
            raise NativeUnavailable(
                f"{path.name}: struct {name} is {in_c} bytes in C but {in_py} in its Python "
                f"mirror {mirror.__module__}.{mirror.__qualname__}: the two declarations "
                "differ"
            )


def open_built(
    path: Path, prefix: str, abi_version: int | None, structs: dict[str, type]
) -> tuple[ctypes.CDLL, int]:
    """(library, the thread level MPI provides) of the built `path`, checked;
    raises NativeUnavailable."""
    from mpi4py import MPI

    try:
        dll = ctypes.CDLL(str(path))  # CDLL: the GIL is released during every call
    except OSError as e:
        raise NativeUnavailable(f"cannot load {path} ({e})") from None
    if getattr(dll, prefix + "abi_version")() != abi_version:
        raise NativeUnavailable(f"{path} is from another commbench version")
    check_sizes(dll, path, prefix, structs)
    comm = MPI.COMM_WORLD
    init, provided, rank, size = (ctypes.c_int(-1) for _ in range(4))
    getattr(dll, prefix + "probe")(
        ctypes.c_void_p(MPI._addressof(comm)),
        ctypes.byref(init),
        ctypes.byref(provided),
        ctypes.byref(rank),
        ctypes.byref(size),
    )
    # A second MPI library in the process would not be initialised, or would see another world.
    if not init.value:
        made = BUILT.get(str(path), {})
        raise NativeUnavailable(
            f"{path}, built with {made.get('mpicc', 'an mpicc')}, links an MPI library other "
            f"than mpi4py's ({made.get('for', 'unknown')}): COMMBENCH_MPICC names the "
            "compiler wrapper of mpi4py's library"
        )
    if (rank.value, size.value) != (comm.Get_rank(), comm.Get_size()):
        raise NativeUnavailable(
            f"{path}: MPI_COMM_WORLD handle mismatch (ABI differs from mpi4py's)"
        )
    return dll, provided.value


def open_library(
    source: Path,
    lib_name: str,
    prefix: str,
    abi_version: int | None,
    structs: dict[str, type],
    flags: tuple[str, ...] = (),
) -> tuple[ctypes.CDLL, Path, int]:
    """(library, its path, the thread level MPI provides): build_library, then open_built."""
    path = build_library(source, lib_name, flags)
    dll, provided = open_built(path, prefix, abi_version, structs)
    return dll, path, provided


def resolve(
    comm, load: Callable[[], Any], what: str, fallback: str
) -> tuple[Any | None, str | None]:
    """(load(), None) when every rank of comm loaded it, else (None, why). Collective."""
    from mpi4py import MPI

    runner, reason = None, None
    try:
        runner = load()
    except NativeUnavailable as e:
        reason = str(e)
    except Exception as e:  # noqa: BLE001 -- a broken toolchain must never stop a run
        reason = f"{type(e).__name__}: {e}"
    if comm.allreduce(runner is not None, op=MPI.LAND):
        return runner, None
    why = next((r for r in comm.allgather(reason) if r), "not available on every rank")
    return None, f"{what} unavailable ({why}); using {fallback}"
