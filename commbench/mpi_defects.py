"""Defects of MPI libraries that commbench names where a check fails because of the library,
and the benchmarks it does not run where the defect hangs or aborts the job.

A check that fails on these libraries fails because of the library: a C program of a few
dozen lines in repro/, built with that library's mpicc, shows the same wrong data
(docs/mpis.md gives its output). The check stays FAILED (that is the check doing its
job); the output names the defect. Where the defect also hangs or aborts the job above
some process count, the benchmark is not run there (records.LIBRARY_DEFECT) unless
--force. Each was seen on the versions its pattern names and no others.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from commbench.mpilib import short_name


@dataclass(frozen=True)
class Defect:
    family: str
    benchmarks: str  # a regular expression of the benchmark names it touches
    libraries: str  # a regular expression of the library names (short_name) that have it
    what: str
    repro: str
    breaks_above: int | None = None  # hangs or aborts at more processes than this
    # the rows it touches: at most this many bytes (None: every size); a failure at a larger
    # size is not this defect, and is not excused by it
    max_bytes: int | None = None


KNOWN_DEFECTS = (
    Defect(
        "mpi4",
        r"Scatter_persist",
        r"Intel MPI 2021\.18\.|MPICH 4\.0\.",
        "the second and later MPI_Start of an MPI_Scatter_init request deliver nothing to the "
        "non-root ranks, and with more than 2 processes they hang or abort",
        "repro/scatter_init_restart.c",
        2,
    ),
    Defect(
        "pgas",
        r"(Put|Get)\w*_(latency|bw)",
        r"MPICH 4\.0\.",
        "RMA reaches a node-local MPI_Win_allocate window at its base rounded down to 16 "
        "bytes, so small windows overlap their neighbours' and puts and gets miss",
        "repro/win_allocate_offset.c",
        max_bytes=8,  # windows of 1-8 B segments; 16 B and up are multiples of 16
    ),
    Defect(
        "io",
        r"[PC]_I?(Read|Write)_Indv",
        r"MPICH 4\.0\.",
        "ROMIO aborts the job in MPI_File_set_view (out of memory in adio/common/flatten.c) on "
        "a file type made with MPI-4's large-count constructors, as mpi4py 4 makes them",
        "repro/romio_large_count_view.c",
        1,
    ),
)


def _defect(family: str, benchmark: str, library_version: str):
    name = short_name(library_version)
    for d in KNOWN_DEFECTS:
        if d.family == family and re.fullmatch(d.benchmarks, benchmark):
            if re.match(d.libraries, name):
                return name, d
    return None, None


def known_defect(family: str, benchmark: str, library_version: str, failed_bytes=()) -> str | None:
    """The note on a FAILED check of `benchmark` (its rows of failed_bytes) that a known defect
    of the library explains; None where none does, or a failed row lies beyond its sizes."""
    name, d = _defect(family, benchmark, library_version)
    if d is None or (d.max_bytes is not None and any(b > d.max_bytes for b in failed_bytes)):
        return None
    return (
        f"{benchmark}: a known defect of {name}: {d.what} ({d.repro} shows it without "
        "commbench; docs/mpis.md)"
    )


def known_hang(family: str, benchmark: str, library_version: str, np_: int) -> str | None:
    """Why `benchmark` is not run at np_ processes on this library, or None."""
    name, d = _defect(family, benchmark, library_version)
    if d is None or d.breaks_above is None or np_ <= d.breaks_above:
        return None
    return (
        f"not run: a known defect of {name} hangs or aborts it at more than {d.breaks_above} "
        f"process{'es' if d.breaks_above > 1 else ''} ({d.repro}; docs/mpis.md; --force runs it)"
    )
