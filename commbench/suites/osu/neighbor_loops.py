"""The neighbourhood collectives on the ranks (the descriptors and the procedure: neighbor.py,
which names these as base.Lazy): the topology's communicators (once per benchmark and type),
the per-size set-up, the blocking form's loop, its row, and extras of both forms (the
nonblocking forms' loop and row: nonblocking_loops.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from commbench.suites.osu import collective_calls as calls
from commbench.suites.osu import nonblocking_loops
from commbench.suites.osu.settings import mem_limit, sizes
from commbench.suites.osu.spec import percentile
from commbench.suites.osu.topology import DEFAULT, grid, layout


@dataclass
class Topology:
    """A neighbourhood program's topology on this rank (Ctx.topology, once per benchmark and
    type, freed after its largest size)."""

    comm: MPI.Comm | None  # the distributed graph the calls run on (None once freed)
    cart: MPI.Cartcomm | None  # the Cartesian communicator it was made from (cart:D:R)
    dims: list[int]  # its dimensions ([] for graph:<file>)
    sources: list[int]  # the ranks this rank receives from, in order
    dests: list[int]  # and sends to
    us: float  # OSU's "Time took to create topology graph": the ranks' mean, in us

    def free(self) -> None:
        """Free the communicators (the rest stays for the row's record)."""
        for c in (self.comm, self.cart):
            if c is not None:
                c.Free()
        self.comm = self.cart = None


def topology(ctx) -> None:
    """The Cartesian communicator (cart) and the distributed graph (once per benchmark and type)."""
    topo, cart = ctx.s.nhbr or DEFAULT, None
    dims = grid(ctx.s, ctx.p) if topo[0] == "cart" else []
    if dims:
        cart = ctx.comm.Create_cart(dims, periods=[True] * len(dims), reorder=False)
    srcs, dests = layout(ctx.s, ctx.p, ctx.rank, dims)
    ctx.comm.Barrier()
    t0 = MPI.Wtime()
    graph = (cart or ctx.comm).Create_dist_graph_adjacent(
        srcs, dests, sourceweights=[1] * len(srcs), destweights=[1] * len(dests), reorder=False
    )
    took = ctx.comm.reduce(MPI.Wtime() - t0, root=0)
    ctx.topology = Topology(graph, cart, dims, srcs, dests, (took or 0.0) / ctx.p * 1e6)


def prepare(ctx, size: int) -> None:
    if ctx.topology is None or ctx.topology.comm is None:  # --shuffle: sizes after the largest
        topology(ctx)
    if ctx.bench.call.name.startswith("i"):
        nonblocking_loops.prepare(ctx, size)
    else:
        calls.prepare(ctx, size)


def release(ctx, size: int) -> None:
    if ctx.bench.call.name.startswith("i"):
        nonblocking_loops.release(ctx, size)
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
        return {**nonblocking_loops.extra(ctx, s, ex), **facts}
    more = {"full": True} if s.full else {}  # -f, as the blocking collectives record it
    return {"metric": "neighbor", "gathered": True, **facts, "mem_limit": mem_limit(s), **more}
