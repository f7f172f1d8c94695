"""The collective operations, declared once: what each one moves, its counts and
displacements, the mpi4py call, and what a rank must hold after it (the check).

IMB's families (mpi1, nbc, mpi4) and OSU's (the blocking, persistent, nonblocking and
neighbourhood collectives) read the same Op: its name (MPI's, lower case), the
mpi4py method, the blocks of one message each buffer holds (send, receive: "1",
"P" one per rank, "K" one per neighbour of a topology), whether it reduces
(MPI_SUM), has a root, or takes counts and displacements (the v and w forms).

An operation of commbench's own (`ours`: neither IMB nor OMB has a program for it)
joins every family from its row here: IMB-MPI1, IMB-NBC and IMB-MPI4 build it from the
benchmark of the operation whose call it is `like` (its kernel, buffers and verifier,
with this operation's method), OSU's blocking, persistent and nonblocking groups from
its `title`; each runs it by name, outside the peer's default list. Its C loops are
collectives.h's row and kernels.c's two rows (docs/architecture.md, "A collective").

- counts(op, count, p): the counts and displacements in elements: `count` per
  block at j x count, except reduce_scatter's split of the `count` elements
  (spec §6.7, as OSU: L = r P + s, the first s ranks one more);
- arguments(op, …): the mpi4py arguments of one call;
- expected(op, …): the elements a rank's receive buffer must hold after one
  call, from a function that gives any rank's send elements and one that gives
  the element-wise sum over the ranks (the families keep their own data: IMB's
  is its spec's, §6.3; OSU's validation data is commbench's own).

No MPI is called here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from commbench.policy import even_counts


@dataclass(frozen=True)
class Op:
    name: str  # MPI's name in lower case: "allgatherv", "reduce_scatter_block"
    method: str  # mpi4py's Comm method: "Allgatherv"
    blocks: tuple[str, str] = ("1", "1")  # messages in the send and receive buffers: "1", "P", "K"
    reduces: bool = False  # MPI_SUM
    rooted: bool = False
    vector: bool = False  # counts and displacements per block (v); "w": per-block types too
    like: str = ""  # ours: the operation whose call's arguments (and kernels) it takes
    title: str = ""  # ours: its words in a title ("Scan": "MPI Scan Latency")
    what: str = ""  # ours: what a rank receives ("the sum over ranks 0 … i, MPI_SUM")

    def extent(self, p: int, k: int = 0) -> tuple[int, int]:
        """Blocks of one message in the send and receive buffers at p ranks (k neighbours)."""
        n = {"1": 1, "P": p, "K": k}
        return n[self.blocks[0]], n[self.blocks[1]]

    @property
    def ours(self) -> bool:
        """commbench's own: no IMB or OMB program measures it."""
        return bool(self.like)

    @property
    def shape(self) -> str:
        """The operation whose call's arguments this one's take (its own name, or like)."""
        return self.like or self.name

    @property
    def per_rank(self) -> bool:
        """Does a buffer hold a block per rank or neighbour (OSU's -M divides by P)?"""
        return bool({"P", "K"} & set(self.blocks))


OPS: dict[str, Op] = {
    o.name: o
    for o in (
        Op("barrier", "Barrier"),
        Op("bcast", "Bcast", rooted=True),
        Op("allreduce", "Allreduce", reduces=True),
        Op("reduce", "Reduce", reduces=True, rooted=True),
        Op("reduce_scatter", "Reduce_scatter", reduces=True, vector=True),
        Op("reduce_scatter_block", "Reduce_scatter_block", reduces=True),
        Op("allgather", "Allgather", ("1", "P")),
        Op("allgatherv", "Allgatherv", ("1", "P"), vector=True),
        Op("gather", "Gather", ("1", "P"), rooted=True),
        Op("gatherv", "Gatherv", ("1", "P"), rooted=True, vector=True),
        Op("scatter", "Scatter", ("P", "1"), rooted=True),
        Op("scatterv", "Scatterv", ("P", "1"), rooted=True, vector=True),
        Op("alltoall", "Alltoall", ("P", "P")),
        Op("alltoallv", "Alltoallv", ("P", "P"), vector=True),
        Op("alltoallw", "Alltoallw", ("P", "P"), vector=True),
        Op("neighbor_allgather", "Neighbor_allgather", ("1", "K")),
        Op("neighbor_allgatherv", "Neighbor_allgatherv", ("1", "K"), vector=True),
        Op("neighbor_alltoall", "Neighbor_alltoall", ("K", "K")),
        Op("neighbor_alltoallv", "Neighbor_alltoallv", ("K", "K"), vector=True),
        Op("neighbor_alltoallw", "Neighbor_alltoallw", ("K", "K"), vector=True),
        # commbench's own: the prefix reductions (MPI-1's MPI_Scan, MPI-2's MPI_Exscan)
        Op(
            "scan",
            "Scan",
            reduces=True,
            like="allreduce",
            title="Scan",
            what="rank i receives the sum over ranks 0 … i, MPI_SUM",
        ),
        Op(
            "exscan",
            "Exscan",
            reduces=True,
            like="allreduce",
            title="Exscan",
            what="rank i > 0 receives the sum over ranks 0 … i-1, MPI_SUM (rank 0: undefined)",
        ),
    )
}


# commbench's own operations, in the order every family lists them (after the peer's)
OURS: tuple[Op, ...] = tuple(o for o in OPS.values() if o.ours)


def op(name: str) -> Op:
    """The operation of a benchmark name in any family's spelling: "Iallgatherv",
    "ineighbor_alltoall", "Allgatherv_persist", "allgatherv_persistent"."""
    n = name.lower().removesuffix("_persistent").removesuffix("_persist")
    if n not in OPS and n.startswith("i"):
        n = n[1:]
    return OPS[n]


# reduce_scatter's receive counts: items = r p + s, rank i gets r + 1 if i < s else r (spec
# §6.7; OSU's the same). In commbench.policy, where the C loops' arguments read it too.
split = even_counts


def counts(o: Op, count: int, p: int) -> tuple[list[int], list[int]]:
    """(counts, displacements) in elements of the p blocks (reduce_scatter: of its split)."""
    cnt = split(count, p) if o.name == "reduce_scatter" else [count] * p
    return cnt, [sum(cnt[:i]) for i in range(p)]


def arguments(
    o: Op,
    rank: int,
    p: int,
    send: Any,
    recv: Any,
    count: int,
    dtype: Any,
    root: int = 0,
    tsize: int = 1,
    total: Any = None,
) -> tuple:
    """The mpi4py arguments of one call of o: `count` elements of dtype per block from
    buffer send into buffer recv (total: MPI.SUM, given by the caller)."""
    k = count
    cnt, dsp = counts(o, count, p)
    s, r = [send, k, dtype], [recv, k, dtype]
    sv, rv = [send, (cnt, dsp), dtype], [recv, (cnt, dsp), dtype]
    table: dict[str, Callable[[], tuple]] = {
        "barrier": lambda: (),
        "bcast": lambda: ([send if rank == root else recv, k, dtype], root),
        "allreduce": lambda: (s, r, total),
        "reduce": lambda: (s, r, total, root),
        "reduce_scatter": lambda: (s, [recv, cnt[rank], dtype], cnt, total),
        "reduce_scatter_block": lambda: ([send, k // p, dtype], [recv, k // p, dtype], total),
        "allgather": lambda: (s, r),
        "allgatherv": lambda: (s, rv),
        "gather": lambda: (s, r if rank == root else None, root),
        "gatherv": lambda: (s, rv if rank == root else None, root),
        "scatter": lambda: (s if rank == root else None, r, root),
        "scatterv": lambda: (sv if rank == root else None, r, root),
        "alltoall": lambda: (s, r),
        "alltoallv": lambda: (sv, rv),
        "alltoallw": lambda: (
            [send, (cnt, [d * tsize for d in dsp]), [dtype] * p],
            [recv, (cnt, [d * tsize for d in dsp]), [dtype] * p],
        ),
    }
    return table[o.shape]()


def expected(
    o: Op,
    rank: int,
    p: int,
    count: int,
    sent: Callable[[int, int, int], Any],
    summed: Callable[[int, int, range], Any],
    root: int = 0,
) -> Any:
    """The elements rank's receive buffer must hold after one call of o, from the start of
    the buffer; None when it receives nothing. sent(src, n, at): elements at … at + n - 1 of
    rank src's send buffer; summed(lo, hi, ranks): elements lo … hi - 1 of the element-wise
    sum of the send buffers of those ranks (range(p) for a reduction over all).
    (Neighbourhood forms depend on the topology: commbench.suites.osu.topology.)"""
    import numpy as np

    name, c = o.name, count
    if name == "bcast":
        return sent(root, c, 0) if rank != root else None
    if name in ("allgather", "allgatherv") or (name in ("gather", "gatherv") and rank == root):
        return np.concatenate([sent(q, c, 0) for q in range(p)])
    if name in ("alltoall", "alltoallv", "alltoallw"):
        return np.concatenate([sent(q, c, rank * c) for q in range(p)])
    if name in ("scatter", "scatterv"):
        return sent(root, c, rank * c)
    every = range(p)
    if name == "allreduce" or (name == "reduce" and rank == root):
        return summed(0, c, every)
    if name == "reduce_scatter":
        cnt, dsp = counts(o, c, p)
        return summed(dsp[rank], dsp[rank] + cnt[rank], every)
    if name == "reduce_scatter_block":
        b = c // p
        return summed(rank * b, (rank + 1) * b, every)
    if name == "scan":
        return summed(0, c, range(rank + 1))
    if name == "exscan":  # MPI leaves rank 0's receive buffer undefined
        return summed(0, c, range(rank)) if rank else None
    return None
