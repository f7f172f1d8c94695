"""OSU's latency_mt (OMB 7.4): latency with sender threads on rank 0 and receiver
threads on rank 1, all calling MPI at once (MPI_THREAD_MULTIPLE).

Read off the binary (tests/data/osu/trace_pt2pt.c logs the calling thread): -t
RECV (1 sender) or -t SEND:RECV, default 1:2, each 1 .. 127; iteration i belongs
to sender thread i mod S and receiver thread i mod R (skip + iterations in all);
with one sender the message goes with tag 1 and comes back with tag 2, so any
waiting receiver thread may take it; with several the tag is the iteration, so
each message meets its own thread. The sender thread times every round trip
(latency = their mean / 2, as osu_latency: 0.50 us under the made-up clock of
tests/data/osu/wtime_steps.c, for the binary and for commbench). Counts as
latency. OSU prints "# Number of Sender threads: S " and "# Number of Receiver
threads: R" before its title (and with S > 1 its header twice, garbled; commbench
prints it once).

Engines: native (default) runs POSIX threads in C (osu_pt2pt_variants.c: no GIL);
mpi4py runs Python threads, which hold the GIL between MPI calls (mpi4py
releases it inside each blocking call): their round trips include waiting for
the GIL, as the mt family says of IMB-MT. The ranks ask MPI_Init_thread for
MPI_THREAD_MULTIPLE when latency_mt is named (suites.threaded); an MPI that
gives less is refused with its level.

The descriptor, -t's threads and the process and thread-level check are here, imported by
the catalog (neither MPI nor numpy); the threads' loop, its row and extras are
latency_mt_loops.py, named as base.Lazy.
"""

from __future__ import annotations

from commbench.suites.base import Lazy, mpi_initialized
from commbench.suites.osu.pt2pt import COMMON, LAT
from commbench.suites.osu.pt2pt import LOOPS as PT2PT
from commbench.suites.osu.pt2pt_variants import MAX_PROCS, check_t
from commbench.suites.osu.spec import OsuBenchmark

LOOPS = "commbench.suites.osu.latency_mt_loops"
LEVELS = (
    "single",
    "funneled",
    "serialized",
    "multiple",
)  # by MPI.THREAD_* (0-3 in every MPI and mpi4py)


def threads(s) -> tuple[int, int]:
    """(sender threads, receiver threads) of -t: none 1:2, -t R 1:R, -t S:R."""
    if not s.test_calls:
        return 1, 2
    parts = [int(x) for x in s.test_calls.split(":")]
    return (1, parts[0]) if len(parts) == 1 else (parts[0], parts[1])


def nprocs(p: int) -> str | None:
    if p != 2:
        return "This test requires exactly two processes"
    # the launcher checks the count without loading MPI; the ranks check the level too
    MPI = mpi_initialized()
    if MPI is not None and MPI.Query_thread() < MPI.THREAD_MULTIPLE:
        level = MPI.Query_thread()
        got = LEVELS[level] if 0 <= level < len(LEVELS) else str(level)
        return (
            f"latency_mt needs MPI_THREAD_MULTIPLE; MPI_Init_thread gave {got}: name it on the "
            "command line (commbench run -n 2 --suite osu latency_mt …) to start MPI with "
            "MPI_THREAD_MULTIPLE; a run of the default list keeps the single-threaded start of "
            "the other programs, as their binaries"
        )
    return None


BENCHMARKS = (
    OsuBenchmark(
        "latency_mt",
        f"latency between -t S:R threads (1..{MAX_PROCS}; default 1:2) of two processes, "
        "MPI_THREAD_MULTIPLE",
        group="pt2pt_variants",
        title="MPI Multi-threaded Latency",
        metric="latency",
        takes=COMMON | {"t"},
        defaults=LAT,
        nprocs=nprocs,
        loop=Lazy(LOOPS, "loop"),
        native="latency_mt",
        prepare=Lazy(LOOPS, "prepare"),
        row=Lazy(LOOPS, "row"),
        verify=Lazy(PT2PT, "from_peer"),
        validate=check_t,
        extra=Lazy(LOOPS, "extra"),
    ),
)
