"""OSU's neighborhood collectives (OMB 7.4's osu_neighbor_* and osu_ineighbor_*)
on OSU's default topology.

Read off the binaries (tests/data/osu/README.md, "Nonblocking and neighborhood
collectives"): their -h offers `-N cart:<dims>:<radius>` (default cart:1:1) or
`-N graph:<file>`; by default each program makes a periodic one-dimensional
Cartesian communicator of all P ranks (MPI_Dims_create(P, 1), MPI_Cart_create,
no reordering), then, between two MPI_Wtime after an MPI_Barrier, a
distributed graph (MPI_Dist_graph_create_adjacent, weighted, no reordering)
whose sources and destinations are the ranks at offsets -1 and +1, in that
order; rank 0 prints "Dimensions size = P " and "Time took to create topology
graph:T us." (T: the ranks' mean) before the title. Radius 1 needs at least 3
ranks in the dimension: with 2 the programs stop with their "ERROR: the given
neighborhood radius …" line. commbench takes only that default (no -N).

osu_neighbor_*: per size, skip + iterations rounds of "MPI_Barrier, MPI_Wtime,
MPI_Neighbor_<coll>, MPI_Wtime"; every rank's mean, then min, max (over the
ranks) and their average at rank 0 (MPI_Reduce); -z: the per-iteration times
averaged over the ranks. osu_ineighbor_*: the overlap procedure of
nonblocking.py. Both: 1000 iterations and 100 warm-up (100 and 10 above
8192 bytes), 1 B to 1 MiB; one block of `count` elements per neighbour.

The descriptors are here, imported by the catalog (neither MPI nor numpy); the topology's
communicators, the blocking form's loop, the set-up, row and extras are neighbor_loops.py,
the overlap procedure nonblocking_loops.py, the -c hooks collective_calls.py, named as
base.Lazy.
"""

from __future__ import annotations

from commbench.suites.base import Lazy
from commbench.suites.osu import nonblocking, spec
from commbench.suites.osu.spec import Defaults, OsuBenchmark
from commbench.suites.osu.topology import fits

LOOPS = "commbench.suites.osu.neighbor_loops"
NBC_LOOPS = "commbench.suites.osu.nonblocking_loops"
COLLECTIVE_CALLS = "commbench.suites.osu.collective_calls"
NBR = Defaults(iterations=1000, iterations_large=100, skip=100, skip_large=10, max_size=1 << 20)
FULL = (
    ("Avg Latency(us)", "t"),
    ("Min Latency(us)", "t_min"),
    ("Max Latency(us)", "t_max"),
    ("Iterations", "repetitions"),
)


def neighborhood(name: str, title: str, what: str) -> OsuBenchmark:
    call = spec.call(name)
    nb = name.startswith("i")
    return OsuBenchmark(
        name,
        f"{what} on OSU's -N topology (default: periodic 1-D Cartesian, neighbours -1, +1)"
        + (": Overall, Compute, Pure Comm., Overlap(%)" if nb else ""),
        group="neighbor",
        title=title,
        metric="nbc" if nb else "neighbor",
        takes=frozenset("mixzcTfNMu" + ("t" if nb else "")),
        defaults=NBR,
        fits=fits,
        limit=call.limit,
        loop=Lazy(NBC_LOOPS if nb else LOOPS, "loop"),
        prepare=Lazy(LOOPS, "prepare"),
        release=Lazy(LOOPS, "release"),
        row=Lazy(NBC_LOOPS if nb else LOOPS, "row"),
        verify=Lazy(COLLECTIVE_CALLS, "verify"),
        refill=Lazy(COLLECTIVE_CALLS, "refill"),
        extra=Lazy(LOOPS, "extra"),
        validate=nonblocking.validate if nb else None,
        gather=True,
        call=call,
        extent=call.extent,
        native=name,
        check_rounds=Lazy(NBC_LOOPS, "check_rounds") if nb else None,
    )


BENCHMARKS = (
    neighborhood(
        "neighbor_allgather", "MPI Neighborhood Allgather Latency", "MPI_Neighbor_allgather"
    ),
    neighborhood(
        "neighbor_allgatherv", "MPI Neighborhood Allgatherv Latency", "MPI_Neighbor_allgatherv"
    ),
    neighborhood("neighbor_alltoall", "MPI Neighborhood Alltoall Latency", "MPI_Neighbor_alltoall"),
    neighborhood(
        "neighbor_alltoallv", "MPI Neighborhood All-to-Allv Latency", "MPI_Neighbor_alltoallv"
    ),
    # OMB 7.4's osu_neighbor_alltoallw prints the title of osu_alltoallw (headers.txt)
    neighborhood(
        "neighbor_alltoallw",
        "MPI All-to-Allw Personalized Exchange Latency",
        "MPI_Neighbor_alltoallw",
    ),
    neighborhood(
        "ineighbor_allgather",
        "MPI Non-blocking Neighborhood Allgather Latency",
        "MPI_Ineighbor_allgather",
    ),
    neighborhood(
        "ineighbor_allgatherv",
        "MPI Non-blocking Neighborhood Allgatherv Latency",
        "MPI_Ineighbor_allgatherv",
    ),
    neighborhood(
        "ineighbor_alltoall",
        "MPI Non-blocking Neighborhood Alltoall Latency",
        "MPI_Ineighbor_alltoall",
    ),
    neighborhood(
        "ineighbor_alltoallv",
        "MPI Non-blocking Neighborhood Alltoallv Latency",
        "MPI_Ineighbor_alltoallv",
    ),
    neighborhood(
        "ineighbor_alltoallw",
        "MPI Non-blocking Neighborhood Alltoallw Latency",
        "MPI_Ineighbor_alltoallw",
    ),
)
