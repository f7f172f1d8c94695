"""OSU's nonblocking collectives (OMB 7.4's osu_i*) and their overlap procedure,
which the nonblocking neighborhood collectives (neighbor.py) share.

Read off the binaries with a preloaded call logger (tests/data/osu/trace_nbc.c;
tests/data/osu/README.md, "Nonblocking and neighborhood collectives"). Per size,
after the driver's MPI_Barrier:

1. pure communication: skip + iterations rounds of "MPI_Wtime, I<coll>,
   MPI_Wait, MPI_Wtime, MPI_Barrier" (osu_ibarrier: no MPI_Barrier, and 100 + 10
   rounds, OSU's large-message counts); Pure Comm. = this rank's mean of the
   timed ones;
2. two MPI_Barrier calls;
3. overlap: skip + iterations rounds of "MPI_Wtime (start), MPI_Wtime, I<coll>,
   MPI_Wtime (Coll. Init), MPI_Wtime, a dummy computation as long as this
   rank's Pure Comm., cut in -t pieces each followed by MPI_Wtime, MPI_Test,
   MPI_Wtime (MPI_Test), MPI_Wtime (Compute: the computation and the tests),
   MPI_Wtime, MPI_Wait, MPI_Wtime (MPI_Wait), MPI_Wtime (Overall), MPI_Barrier".
   Without -t there is no MPI_Test.

OSU then sums every rank's means at rank 0 (MPI_Reduce) and prints their
averages over the ranks: Overall, Compute, Coll. Init, MPI_Test, MPI_Wait,
Pure Comm. (with -f also its minimum and maximum over the ranks), and
Overlap(%) = max(0, 100 - 100 (Overall - Compute) / Pure Comm.); -z's tail
values are those of the per-iteration Overall times averaged over the ranks.
Defaults: 1000 iterations and 100 warm-up (100 and 10 above 8192 bytes), 1 B to
1 MiB. Buffers, arguments and validation of each call: collective_calls.py. The
same procedure in C: commbench/native/osu_overlap.h (osu_nonblocking.c,
osu_neighbor.c), which return the means through collective_calls.control's block.

The descriptors and their checks are here, imported by the catalog (neither MPI nor numpy);
the overlap procedure's loop, set-up, rows and extras are nonblocking_loops.py, the -c hooks
collective_calls.py, named as base.Lazy.
"""

from __future__ import annotations

from commbench.option_types import ConfigError
from commbench.suites import collops
from commbench.suites.base import Lazy
from commbench.suites.osu import spec
from commbench.suites.osu.spec import Defaults, OsuBenchmark

LOOPS = "commbench.suites.osu.nonblocking_loops"
COLLECTIVE_CALLS = "commbench.suites.osu.collective_calls"
NBC = Defaults(iterations=1000, iterations_large=100, skip=100, skip_large=10, max_size=1 << 20)
# osu_ibarrier runs OSU's large-message counts (100 and 10 warm-up; 220 MPI_Ibarrier in a
# traced default run) and no MPI_Barrier between its pure-communication rounds.
IBARRIER = Defaults(iterations=100, iterations_large=100, skip=10, skip_large=10, max_size=1 << 20)
TAKES = frozenset("mixzcTtfMu")
SUBTITLE = "Overall = Coll. Init + Compute + MPI_Test + MPI_Wait"
# -f's columns and their value keys (the importer's names: commbench/importers/osu.py)
FULL = (
    ("Overall(us)", "t_ovrl"),
    ("Compute(us)", "t_cpu"),
    ("Coll. Init(us)", "t_init"),
    ("MPI_Test(us)", "t_test"),
    ("MPI_Wait(us)", "t_wait"),
    ("Pure Comm.(us)", "t_pure"),
    ("Min Comm.(us)", "t_pure_min"),
    ("Max Comm.(us)", "t_pure_max"),
    ("Overlap(%)", "overlap"),
)
SHORT = (FULL[0], FULL[1], FULL[5], FULL[8])


def no_size(s, dtype: str) -> list[int]:
    """ibarrier: one row, no size."""
    return [0] if dtype == s.types[0] else []


def test_calls(s) -> None:
    """-t of the nonblocking collectives: a number of MPI_Test calls."""
    if s.test_calls is not None and not str(s.test_calls).isdigit():
        raise ConfigError(
            f"-t {s.test_calls} is a SEND:RECV pair, latency_mt's and latency_mp's form; the "
            "nonblocking collectives take -t CALLS, the number of MPI_Test calls during the "
            "dummy computation (accepted: -t CALLS, 0 or more, e.g. -t 10)"
        )


def validate(s) -> None:
    test_calls(s)


def nonblocking(name: str, title: str, what: str) -> OsuBenchmark:
    call = spec.call(name)
    barrier = name == "ibarrier"
    return OsuBenchmark(
        name,
        f"{what} with a dummy computation: Overall, "
        "Compute, Pure Comm., Overlap(%) (-t MPI_Test calls)",
        group="nonblocking",
        default=not call.op.ours,  # commbench's own (collops.OURS): by name, not in OMB's list
        title=title,
        metric="nbc_sync" if barrier else "nbc",
        takes=frozenset("mixztf") if barrier else TAKES,
        defaults=IBARRIER if barrier else NBC,
        loop=Lazy(LOOPS, "loop"),
        prepare=Lazy(LOOPS, "prepare"),
        release=Lazy(LOOPS, "release"),
        row=Lazy(LOOPS, "row"),
        verify=None if barrier else Lazy(COLLECTIVE_CALLS, "verify"),
        refill=None if barrier else Lazy(COLLECTIVE_CALLS, "refill"),
        extra=Lazy(LOOPS, "extra"),
        validate=validate,
        gather=True,
        call=call,
        buffers=2,
        native=name,
        check_rounds=None if barrier else Lazy(LOOPS, "check_rounds"),
        extent=call.extent,
        sizes=no_size if barrier else None,
        limit=None if barrier else call.limit,
    )


BENCHMARKS = (
    nonblocking("iallgather", "MPI Non-blocking Allgather Latency", "MPI_Iallgather"),
    nonblocking("iallgatherv", "MPI Non-blocking Allgatherv Latency", "MPI_Iallgatherv"),
    nonblocking("iallreduce", "MPI Non-blocking Allreduce Latency", "MPI_Iallreduce (MPI_SUM)"),
    nonblocking("ialltoall", "MPI Non-blocking All-to-All Latency", "MPI_Ialltoall"),
    nonblocking(
        "ialltoallv", "MPI Non-blocking All-to-Allv Personalized Exchange Latency", "MPI_Ialltoallv"
    ),
    nonblocking(
        "ialltoallw", "MPI Non-blocking All-to-Allw Personalized Exchange Latency", "MPI_Ialltoallw"
    ),
    nonblocking("ibarrier", "MPI Non-blocking Barrier Latency", "MPI_Ibarrier"),
    nonblocking("ibcast", "MPI Non-Blocking Broadcast Latency", "MPI_Ibcast from rank 0"),
    nonblocking("igather", "MPI Non-blocking Gather Latency", "MPI_Igather to rank 0"),
    nonblocking("igatherv", "MPI Non-blocking Gatherv Latency", "MPI_Igatherv to rank 0"),
    nonblocking("ireduce", "MPI Non-blocking Reduce Latency", "MPI_Ireduce (MPI_SUM) to rank 0"),
    nonblocking(
        "ireduce_scatter",
        "MPI Non-blocking Reduce_scatter Latency",
        "MPI_Ireduce_scatter (MPI_SUM)",
    ),
    nonblocking(
        "ireduce_scatter_block",
        "MPI Non-blocking Reduce_scatter_block Latency",
        "MPI_Ireduce_scatter_block (MPI_SUM)",
    ),
    nonblocking("iscatter", "MPI Non-blocking Scatter Latency", "MPI_Iscatter from rank 0"),
    nonblocking("iscatterv", "MPI Non-blocking Scatterv Latency", "MPI_Iscatterv from rank 0"),
    # commbench's own operations (collops.OURS), after OMB's
    *(
        nonblocking(
            f"i{o.name}", f"MPI Non-blocking {o.title} Latency", f"MPI_I{o.name} ({o.what})"
        )
        for o in collops.OURS
    ),
)
