"""The calls of every OSU collective (collectives.py: blocking and persistent;
nonblocking.py; neighbor.py) on the ranks: the operation (commbench.suites.collops: the one
declaration of its blocks, counts, mpi4py call and expected contents), its buffers,
arguments and -c validation. The call's descriptor, its blocks and -M limit: spec.Call.

Arguments as the OMB 7.4 binaries pass them (the call logger of
tests/data/osu/README.md): `count` elements of the -T type per block; rank 0
is the root; the v and w forms give every block `count` elements at
displacement j x count (alltoallw's displacements in bytes); MPI_SUM for the
reductions; reduce_scatter's receive counts are count / P, the first count mod
P ranks one more; reduce_scatter_block's block is count / P. The neighbourhood
forms move one block per neighbour of the topology's communicator
(Ctx.topology: neighbor_loops.py; its arithmetic: topology.py).

-c: every rank writes its values (i + 7 (rank + 1) + size) mod 31, typed, over
its whole send buffer (COMMBENCH_FAULT_CORRUPT's rank then spoils its first
byte), clears the receive buffer, runs one round, and counts the received
bytes that differ from what the call must deliver (collops.expected; sums for
the reductions, the topology's blocks for the neighbourhood forms).
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from mpi4py import MPI

from commbench.native import osu as native_osu
from commbench.suites import collops
from commbench.suites.osu.context import cycle
from commbench.suites.osu.topology import layout

DT = {
    "mpi_char": "int8",
    "mpi_int": "int32",
    "mpi_float": "float32",
}  # the -T types as numpy dtypes
ROOT = 0


@dataclass
class Coll:
    """One size's set-up of a collective program on this rank (Ctx.own): the call bound to
    its buffers, the C loops' control block and what it points into."""

    post: Callable[[], Any] | None = None  # nonblocking, neighbourhood: posts one call
    call: tuple | None = None  # blocking, persistent: (the mpi4py call, its arguments)
    req: MPI.Request | None = None  # persistent: the request
    v: np.ndarray | None = None  # the control block's counts and displacements
    out: np.ndarray | None = None  # the overlap loops' five means (Pure Comm., … MPI_Wait)
    ctl: Any = None  # the control block (native.osu's CollCtl or OverlapCtl)
    all: list | None = None  # rank 0: every rank's five means (nonblocking_loops.release)


def _poster(ctx) -> Callable[[], MPI.Request]:
    """A function that posts this benchmark's call on ctx's buffers at the current size."""
    c = ctx.bench.call
    topo = ctx.topology
    comm, t, k = topo.comm if topo else ctx.comm, ctx.mpi_type, ctx.count
    if not c.op.name.startswith("neighbor"):
        args = collops.arguments(
            c.op, ctx.rank, ctx.p, ctx.sbuf, ctx.rbuf, k, t, ROOT, ctx.tsize, MPI.SUM
        )
        post = getattr(comm, "I" + c.op.method.lower())
        return lambda: post(*args)
    s, r = ctx.sbuf, ctx.rbuf
    # neighbourhoods: receive from the sources, send to the destinations (-N graph: not as many)
    kin, kout = len(topo.sources), len(topo.dests)
    rv, sv = collops.counts(c.op, k, kin), collops.counts(c.op, k, kout)
    bd = [j * k * ctx.tsize for j in range(max(kin, kout))]
    fn = getattr(comm, "I" + c.op.method.lower() if c.name.startswith("i") else c.op.method)
    args = {
        "neighbor_allgather": lambda: ([s, k, t], [r, k, t]),
        "neighbor_allgatherv": lambda: ([s, k, t], [r, rv, t]),
        "neighbor_alltoall": lambda: ([s, k, t], [r, k, t]),
        "neighbor_alltoallv": lambda: ([s, sv, t], [r, rv, t]),
        "neighbor_alltoallw": lambda: (
            [s, (sv[0], bd[:kout]), [t] * kout],
            [r, (rv[0], bd[:kin]), [t] * kin],
        ),
    }[c.op.name]()
    return lambda: fn(*args)


def prepare(ctx, size: int) -> None:
    ctx.own = Coll(post=_poster(ctx))
    control(ctx)


def control(ctx) -> None:
    """The C loops' control block (cbosu_overlap_ctl of osu.h) as ctx.abuf: this rank's
    reduce_scatter count, the counts and displacements (elements, bytes) per destination and per
    source, the call's communicator, the two degrees, and five doubles the timed loop fills (its
    means: Pure Comm., Compute, Coll. Init, MPI_Test, MPI_Wait)."""
    c, st, topo = ctx.count, ctx.own, ctx.topology
    kout, kin = (len(topo.dests), len(topo.sources)) if topo else (ctx.p, ctx.p)
    rs = collops.split(c, ctx.p)
    recv = rs if ctx.bench.call.op.name == "reduce_scatter" else [c] * kin

    def side(counts: list[int]) -> list[int]:  # counts, displacements, byte displacements
        at = [j * c for j in range(len(counts))]
        return counts + at + [x * ctx.tsize for x in at]

    st.v = np.array(side([c] * kout) + side(recv), dtype=np.int32)
    st.out = np.zeros(5)
    st.ctl = native_osu.OverlapCtl(
        rs_count=int(rs[ctx.rank]),
        v=st.v.ctypes.data,
        comm=MPI._addressof(topo.comm if topo else ctx.comm),
        kout=kout,
        kin=kin,
        out=st.out.ctypes.data,
    )
    ctx.abuf = native_osu.block(st.ctl)


def release(ctx, size: int) -> None:
    ctx.own.post = None


def values(rank: int, n: int, size: int, dtype: str, start: int = 0) -> np.ndarray:
    """Elements start … start + n - 1 of rank's -c data: (i + 7 (rank + 1) + size) mod 31."""
    return cycle(n, 31, 7 * (rank + 1) + size + start, DT[dtype])


def refill(ctx, size: int) -> None:
    """-c: this rank's values over its whole send buffer, the receive buffer cleared."""
    ks, kr = ctx.bench.call.extent(ctx.p, ctx.s)
    n = ctx.count * ks
    ctx.sbuf[: n * ctx.tsize].view(DT[ctx.dtype])[:] = values(ctx.rank, n, size, ctx.dtype)
    ctx.rbuf[: ctx.count * kr * ctx.tsize] = 0
    if ctx.session.corrupt and n:
        ctx.sbuf[0] ^= 0xFF


def expected(ctx, size: int) -> np.ndarray | None:
    """What this rank's receive buffer must hold after the round (None: nothing)."""
    o, c, p, dt = ctx.bench.call.op, ctx.count, ctx.p, ctx.dtype

    def sent(src, n, at=0):
        return values(src, n, size, dt, at)

    if o.name.startswith("neighbor"):
        return expected_blocks(ctx, lambda src: sent(src, c * ctx.bench.call.extent(p, ctx.s)[0]))

    def summed(lo, hi, ranks):  # the sum over ranks repeats every 31 elements, as each rank's
        period = np.sum([values(q, 31, size, dt).astype(np.int64) for q in ranks], axis=0)
        return np.resize(period.astype(DT[dt]), hi)[lo:hi]

    return collops.expected(o, ctx.rank, p, c, sent, summed, root=ROOT)


def verify(ctx, size: int) -> int:
    """-c: the received bytes that differ from what the call must deliver."""
    want = expected(ctx, size)
    if want is None or not want.size:
        return 0
    got = ctx.rbuf[: want.size * ctx.tsize]
    return int(np.count_nonzero(got != want.view(np.uint8)))


def expected_blocks(ctx, sent) -> np.ndarray:
    """-c: the blocks this rank receives, from its sources in order (alltoall: the block each
    source sends to it; a source named twice sends its blocks for this rank in order)."""
    c, name, st = ctx.count, ctx.bench.call.name, ctx.topology
    if not st.sources:
        return np.zeros(0, dtype="uint8")
    if "allgather" in name:
        return np.concatenate([sent(src)[:c] for src in st.sources])
    out, seen = [], collections.Counter()
    for src in st.sources:
        theirs = layout(ctx.s, ctx.p, src, st.dims)[1]
        j = [i for i, q in enumerate(theirs) if q == ctx.rank][seen[src]]
        seen[src] += 1
        out.append(sent(src)[j * c : (j + 1) * c])
    return np.concatenate(out)
