"""What IMB-MT's threads ask of this MPI library and this host.

validate(cfg, size): MPI_THREAD_MULTIPLE, and a thread count within what the MPI
library (MPICH's context ids) and the host (RLIMIT_NPROC, threads-max) allow:
refused, naming the limit, before MPI would abort on it. An MPI whose limit is not
known here meets commbench.suites.mt.driver.thread_comms, which ends the run naming it.

Part of the family's catalog (commbench.suites.mt): it imports no MPI, and asks the
MPI library only where this process has loaded it (the ranks).
"""

from __future__ import annotations

import os
import resource

from commbench import process_origin
from commbench.option_types import ConfigError
from commbench.suites.base import mpi_initialized
from commbench.suites.mt.spec import MtSettings

# MPICH keeps 2048 context ids per process (MPIR_MAX_CONTEXT_MASK, 64 words of 32 bits: its
# "Too many communicators (0/2048 free on this process)"). MPI_COMM_WORLD and MPI_COMM_SELF
# hold two and mpi4py's duplicate of the world for its object collectives (comm.allreduce …)
# one; each thread needs one more (with this wheel's MPICH 5.0.2 2045 threads run, 2046 end
# in that abort). Other libraries' limits are not known here: their ranks meet thread_comms
# (commbench.suites.mt.driver).
MPICH_CONTEXT_IDS = 2048
HELD_COMMS = 3


def _limits() -> list[tuple[int, str]]:
    """(most threads per rank, why) that this MPI library and this host allow."""
    out = []
    MPI = mpi_initialized()
    if MPI is not None and "MPICH" in MPI.Get_library_version():
        out.append(
            (
                MPICH_CONTEXT_IDS - HELD_COMMS,
                (
                    "each thread needs a communicator of its own (MPI_Comm_dup) and MPICH has "
                    f"{MPICH_CONTEXT_IDS} per process (context ids), {HELD_COMMS} of them held by "
                    "MPI_COMM_WORLD, MPI_COMM_SELF and mpi4py's copy of the world"
                ),
            )
        )
    local = process_origin.tasks_on_this_node() or int(
        os.environ.get("MPI_LOCALNRANKS") or os.environ.get("OMPI_COMM_WORLD_LOCAL_SIZE") or 1
    )
    for cap, what in (
        (
            resource.getrlimit(resource.RLIMIT_NPROC)[0],
            "RLIMIT_NPROC (ulimit -u), the threads one user may run",
        ),
        (_threads_max(), "the kernel's threads-max"),
    ):
        if 0 < cap != resource.RLIM_INFINITY:
            out.append(
                (
                    max(1, cap // local),
                    f"{local} rank{'s' * (local > 1)} on this host may start at most "
                    f"{cap} threads together ({what})",
                )
            )
    return out


def _threads_max() -> int:
    try:
        with open("/proc/sys/kernel/threads-max", encoding="ascii") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 0


def validate(cfg, size: int) -> None:
    """MPI_THREAD_MULTIPLE (a -thread_level below it: commbench.suites.option_use); without
    -thread_level the ranks (MPI initialised) refuse what MPI_Init_thread provided. The
    thread count within what this MPI and this host allow: refused, naming the limit,
    before MPI would abort on it."""
    s = MtSettings.of(cfg.params)
    need = (
        f"the mt family (IMB-MT) calls MPI from {s.threads} thread{'s' * (s.threads != 1)} per "
        "rank at once and needs MPI_THREAD_MULTIPLE"
    )
    for most, why in _limits():
        if s.threads > most:
            raise ConfigError(f"--mt-threads {s.threads}: {why} (accepted: --mt-threads 1..{most})")
    MPI = mpi_initialized()
    if MPI is not None and MPI.Query_thread() < MPI.THREAD_MULTIPLE:
        got = "MPI_THREAD_" + ("SINGLE", "FUNNELED", "SERIALIZED")[MPI.Query_thread()]
        if cfg.thread_level is None:
            raise ConfigError(
                f"{need}; without -thread_level MPI was initialised with {got} (accepted: "
                "-thread_level multiple)"
            )
        raise ConfigError(
            f"{need}, but this MPI provides only {got} (accepted: an MPI library built with thread "
            "support, e.g. the mpich wheel, and -thread_level multiple)"
        )
    if cfg.check and s.datatype != "int":
        raise ConfigError(
            "-check verifies int data only, as IMB-MT (accepted: -check with -datatype int)"
        )
