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
"""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

from commbench.suites.osu import collective_calls as calls
from commbench.suites.osu import nonblocking
from commbench.suites.osu.settings import mem_limit, sizes
from commbench.suites.osu.spec import Defaults, OsuBenchmark, percentile
from commbench.suites.osu.topology import DEFAULT, fits, topology

NBR = Defaults(iterations=1000, iterations_large=100, skip=100, skip_large=10, max_size=1 << 20)
FULL = (
    ("Avg Latency(us)", "t"),
    ("Min Latency(us)", "t_min"),
    ("Max Latency(us)", "t_max"),
    ("Iterations", "repetitions"),
)


def prepare(ctx, size: int) -> None:
    if ctx.topology is None or ctx.topology.comm is None:  # --shuffle: sizes after the largest
        topology(ctx)
    if ctx.bench.call.name.startswith("i"):
        nonblocking.prepare(ctx, size)
    else:
        calls.prepare(ctx, size)


def release(ctx, size: int) -> None:
    if ctx.bench.call.name.startswith("i"):
        nonblocking.release(ctx, size)
    else:
        calls.release(ctx, size)
    if size == max(sizes(ctx.bench, ctx.s, ctx.dtype)):
        ctx.topology.free()


def loop(ctx, n: int, times) -> None:
    """The blocking form: MPI_Barrier, then the call between two MPI_Wtime."""
    comm, post, wtime = ctx.comm, ctx.own.post, MPI.Wtime
    for i in range(n):
        comm.Barrier()
        t0 = wtime()
        post()
        if times is not None:
            times[i] = wtime() - t0


def row(ctx, s, times) -> dict:
    ranks = np.array([np.asarray(t) * 1e6 for t in times])
    mean = ranks.mean(axis=1)
    per = list(ranks.mean(axis=0))
    v = {
        "t": float(mean.mean()),
        "t_avg": float(mean.mean()),
        "t_min": float(mean.min()),
        "t_max": float(mean.max()),
        "iter_min": min(per),
        "iter_max": max(per),
        "iter_median": float(np.median(per)),
    }
    v.update({f"t_p{p}": percentile(per, p) for p in s.percentiles})
    return v


def extra(ctx, s, ex) -> dict:
    """The topology's facts (OSU's lines about it: views/osu_layout.py)."""
    topo, made = s.nhbr or DEFAULT, ctx.topology
    facts = {
        "topology_us": made.us,
        "topology": f"cart:{topo[1]}:{topo[2]}" if topo[0] == "cart" else f"graph:{topo[1]}",
        "topology_dims": list(made.dims),
    }
    if ctx.bench.call.name.startswith("i"):
        return {**nonblocking.extra(ctx, s, ex), **facts}
    more = {"full": True} if s.full else {}  # -f, as the blocking collectives record it
    return {"metric": "neighbor", "gathered": True, **facts, "mem_limit": mem_limit(s), **more}


def neighborhood(name: str, title: str, what: str) -> OsuBenchmark:
    call = calls.call(name)
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
        limit=lambda s, p, call=call: calls.limit(call, s, p),
        loop=nonblocking.loop if nb else loop,
        prepare=prepare,
        release=release,
        row=nonblocking.row if nb else row,
        verify=calls.verify,
        refill=calls.refill,
        extra=extra,
        validate=nonblocking.validate if nb else None,
        gather=True,
        call=call,
        extent=call.extent,
        native=name,
        check_rounds=nonblocking.check_rounds if nb else None,
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
