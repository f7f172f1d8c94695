"""OSU's blocking collectives and their MPI-4 persistent forms (OMB 7.4): allreduce,
allgather, allgatherv, alltoall, alltoallv, alltoallw, barrier, bcast, gather,
gatherv, reduce, reduce_scatter, reduce_scatter_block, scatter, scatterv, and
<name>_persistent for each but reduce_scatter_block (the programs OMB 7.4 builds).

Their procedure, read off the binaries with a preloaded call logger
(tests/data/osu/trace_coll.c; tests/data/osu/README.md, "Blocking and persistent
collectives"). Per size, after one MPI_Barrier, skip + iterations rounds of
"MPI_Wtime, the collective, MPI_Wtime, MPI_Barrier" on every rank (barrier: no
MPI_Barrier between the rounds; persistent forms: MPI_<Coll>_init before the
size's barrier, MPI_Start + MPI_Wait as the collective, MPI_Request_free after).
Every rank times every round; OSU's row is the mean over the ranks of each rank's
mean (-f: also their minimum and maximum, and the iterations) and -z's values are
those of the per-round times averaged over the ranks (read with a made-up clock,
tests/data/osu/wtime_ranks.c). Defaults: 1000 iterations and 100 warm-up rounds
(100 and 10 above 8192 bytes), sizes 1 B … 1 MiB, root 0, MPI_SUM in the -T type.

-M BYTES (default 512 MiB, at least 1 MiB as OSU): the programs with a buffer of
P blocks (all/gather(v), all-to-all(v,w), scatter(v)) stop at M / P bytes, the
others at M. The calls, their arguments and -c: collective_calls.py, from the one
declaration of each operation (commbench.suites.collops).

The descriptors are here, imported by the catalog (neither MPI nor numpy); the loop, the
per-size set-up, the row and extras are collectives_loops.py, the -c hooks
collective_calls.py, named as base.Lazy.
"""

from __future__ import annotations

from commbench.suites import collops
from commbench.suites.base import Lazy
from commbench.suites.osu import spec
from commbench.suites.osu.spec import Defaults, OsuBenchmark

LOOPS = "commbench.suites.osu.collectives_loops"
COLLECTIVE_CALLS = "commbench.suites.osu.collective_calls"
COLL = Defaults(iterations=1000, iterations_large=100, skip=100, skip_large=10, max_size=1 << 20)
TAKES = frozenset("mixzcTfMu")
BARRIER_TAKES = frozenset(
    "mixzfM"
)  # osu_barrier refuses -c and -T; it takes -m and measures no size


# OSU's title words of each program (headers.txt), in the order of OMB 7.4's list; then
# commbench's own operations (collops.OURS), blocking and persistent.
TITLES = {
    "allreduce": "Allreduce",
    "allgather": "Allgather",
    "allgatherv": "Allgatherv",
    "alltoall": "All-to-All Personalized Exchange",
    "alltoallv": "All-to-Allv Personalized Exchange",
    "alltoallw": "All-to-Allw Personalized Exchange",
    "barrier": "Barrier",
    "bcast": "Broadcast",
    "gather": "Gather",
    "gatherv": "Gatherv",
    "reduce": "Reduce",
    "reduce_scatter": "Reduce_scatter",
    "reduce_scatter_block": "Reduce_scatter_block",
    "scatter": "Scatter",
    "scatterv": "Scatterv",
    **{o.name: o.title for o in collops.OURS},
}
CALLS = tuple(spec.call(name) for name in TITLES)
NOT_PERSISTENT = {"reduce_scatter_block"}  # OMB 7.4 has no osu_reduce_scatter_block_persistent


def barrier_sizes(settings, dtype: str) -> list[int]:
    """osu_barrier: one row without a size, for the run's first -T type only."""
    return [0] if dtype == settings.types[0] else []


def describe(call: spec.Call) -> str:
    what = f"MPI_{call.op.method}" + (
        "_init once per size, then MPI_Start and MPI_Wait" if call.persistent else ""
    )
    return (
        what + ("" if call.name == "barrier" else ", MPI_Barrier") + " per round; every rank timed"
    )


def benchmark(name: str, persistent: bool) -> OsuBenchmark:
    call, barrier = spec.call(name, persistent), name == "barrier"
    return OsuBenchmark(
        name + ("_persistent" if persistent else ""),
        describe(call),
        group="coll",
        default=not call.op.ours,  # commbench's own (collops.OURS): by name, not in OMB's list
        title=f"MPI {TITLES[name]}{' Persistent' if persistent else ''} Latency",
        metric="sync" if barrier else "collective",
        takes=BARRIER_TAKES if barrier else TAKES,
        defaults=COLL,
        loop=Lazy(LOOPS, "loop"),
        prepare=Lazy(LOOPS, "prepare"),
        release=Lazy(LOOPS, "release"),
        native=("barrier_persistent" if barrier else "persistent") if persistent else name,
        buffers=sum(call.extent(2)),
        row=Lazy(LOOPS, "row"),
        verify=None if barrier else Lazy(COLLECTIVE_CALLS, "verify"),
        refill=None if barrier else Lazy(COLLECTIVE_CALLS, "refill"),
        gather=True,
        call=call,
        extra=Lazy(LOOPS, "extra"),
        sizes=barrier_sizes if barrier else None,
        extent=call.extent,
        limit=call.limit,
    )


BENCHMARKS = tuple(benchmark(name, False) for name in TITLES) + tuple(
    benchmark(name, True) for name in TITLES if name not in NOT_PERSISTENT
)
