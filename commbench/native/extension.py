"""The native extensions beside kernels.c (mt.c, p2p.c): each built and cached by
commbench.native.build, loaded with ctypes, and checked to run on the very MPI that
mpi4py initialised, with one probe function of the same signature in each
(`<prefix>probe(comm, &initialized, &provided, &rank, &size)`) and an ABI number
(`<prefix>abi_version()`)."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from commbench import native
from commbench.native import NativeUnavailable


def open_library(source: Path, lib_name: str, prefix: str, abi_version: int,
                 flags: tuple[str, ...] = ()) -> tuple[ctypes.CDLL, Path, int]:
    """(library, its path, the thread level MPI provides); raises NativeUnavailable."""
    from mpi4py import MPI

    if not source.is_file():
        raise NativeUnavailable(f"{source} is missing from the installation")
    abi = native.mpi_abi()
    mpicc = native.find_mpicc(abi)
    if mpicc is None:
        given = os.environ.get("COMMBENCH_MPICC")
        raise NativeUnavailable(f"COMMBENCH_MPICC={given!r} not found" if given
                                else "no mpicc beside Python or on PATH")
    path = native.build(mpicc, abi, MPI.Get_library_version(), source=source, lib_name=lib_name, flags=flags)
    try:
        dll = ctypes.CDLL(str(path))  # CDLL: the GIL is released during every call
    except OSError as e:
        raise NativeUnavailable(f"cannot load {path} ({e})") from None
    if getattr(dll, prefix + "abi_version")() != abi_version:
        raise NativeUnavailable(f"{path} is from another commbench version")
    comm = MPI.COMM_WORLD
    init, provided, rank, size = (ctypes.c_int(-1) for _ in range(4))
    getattr(dll, prefix + "probe")(ctypes.c_void_p(MPI._addressof(comm)), ctypes.byref(init),
                                   ctypes.byref(provided), ctypes.byref(rank), ctypes.byref(size))
    # A second MPI library in the process would not be initialised, or would see another world.
    if not init.value:
        raise NativeUnavailable(f"{path} links an MPI library other than mpi4py's")
    if (rank.value, size.value) != (comm.Get_rank(), comm.Get_size()):
        raise NativeUnavailable(f"{path}: MPI_COMM_WORLD handle mismatch (ABI differs from mpi4py's)")
    return dll, path, provided.value


def resolve(comm, load: Callable[[], Any], what: str, fallback: str) -> tuple[Any | None, str | None]:
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
