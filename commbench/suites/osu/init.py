"""OSU's init (OMB 7.4): how long MPI_Init takes, per process, min/max/avg in ms.

The binary (tests/data/osu/README.md) calls MPI_Init between two reads of a wall
clock (no MPI_Wtime before it), then three MPI_Reduce of one value to rank 0 and
prints "nprocs: P, min: A ms, max: B ms, avg: C ms" under its title; it takes no
option but -I (session initialization; "-h" is an invalid option).

A commbench job has MPI initialised long before a benchmark runs, and MPI cannot
be initialised twice in a process. So commbench times it where it can: rank 0
starts a fresh job of as many processes as the run has (`mpiexec -n P python`,
the mpiexec beside this Python, the launcher's PMI variables removed) whose
processes import mpi4py without initialising it, read time.perf_counter, call
MPI_Init (-I: MPI_Session_init, MPI_Group_from_session_pset("mpi://WORLD") and
MPI_Comm_create_from_group), read it again and reduce min, max and sum to their
rank 0, which prints them as JSON. The run's own processes wait meanwhile
without polling MPI (a nonblocking barrier tested every millisecond), so the
new job's processes get the cores. What is timed is the same call, in processes
started the same way (Hydra's PMI), with the MPI library already loaded, as in
the binary; the interpreter's start-up is outside it. One row, no size.

The descriptor is here, imported by the catalog; the fresh job, its loop, row and extras are
init_job.py, named as base.Lazy.
"""

from __future__ import annotations

from commbench.suites.base import Lazy
from commbench.suites.osu.spec import Defaults, OsuBenchmark

JOB = "commbench.suites.osu.init_job"
ONCE = Defaults(iterations=1, iterations_large=1, skip=0, skip_large=0, min_size=0, max_size=0)


def sizes(s, dtype: str) -> list[int]:
    return [0]


BENCHMARKS = (
    OsuBenchmark(
        "init",
        "MPI_Init's time in a fresh job of P processes started by rank 0 (-I: MPI sessions)",
        group="pt2pt_variants",
        title="MPI Init",
        metric="init",
        takes=frozenset("I"),
        defaults=ONCE,
        nprocs=lambda p: None,
        loop=Lazy(JOB, "loop"),
        row=Lazy(JOB, "row"),
        sizes=sizes,
        extra=Lazy(JOB, "extra"),
        fit=False,
        buffers=0,
    ),
)
