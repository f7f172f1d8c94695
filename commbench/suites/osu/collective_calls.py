"""The calls of OSU's nonblocking and neighborhood collectives (nonblocking.py,
neighbor.py): their buffers, arguments and -c validation.

Arguments as the OMB 7.4 binaries pass them (the call logger of
tests/data/osu/README.md): `count` elements of the -T type per block; rank 0
is the root (ibcast, igather(v), ireduce, iscatter(v)); the v and w forms give
every block `count` elements at displacement j x count (alltoallw's
displacements in bytes); MPI_SUM for the reductions; ireduce_scatter's
receive counts are count / P, the first count mod P ranks one more;
ireduce_scatter_block's block is count / P. The neighborhood forms move one
block per neighbour of the topology's communicator (ctx.state["comm"]).

-c: every rank writes its values (i + 7 (rank + 1) + size) mod 31, typed, over
its whole send buffer (COMMBENCH_FAULT_CORRUPT's rank then spoils its first
byte), clears the receive buffer, runs one round, and counts the received
bytes that differ from what the call must deliver (sums for the reductions).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from commbench.native import osu as native_osu
from commbench.options import ConfigError
from commbench.suites.osu.context import cycle
from commbench.suites.osu.settings import mem_limit

DT = {"mpi_char": "int8", "mpi_int": "int32", "mpi_float": "float32"}  # names: numpy loads on first use
ROOT = 0


@dataclass(frozen=True)
class Call:
    name: str
    blocks: tuple[str, str] = ("1", "1")  # send, recv blocks: "1", "P" (ranks) or "K" (neighbours)

    def extent(self, p: int, s) -> tuple[int, int]:
        from commbench.suites.osu.neighbor import degree

        k = {"1": 1, "P": p, "K": degree(s, p) if "K" in self.blocks else 0}
        return k[self.blocks[0]], k[self.blocks[1]]


CALLS = {c.name: c for c in (
    Call("iallgather", ("1", "P")), Call("iallgatherv", ("1", "P")), Call("iallreduce"),
    Call("ialltoall", ("P", "P")), Call("ialltoallv", ("P", "P")), Call("ialltoallw", ("P", "P")),
    Call("ibarrier"), Call("ibcast"), Call("igather", ("1", "P")), Call("igatherv", ("1", "P")),
    Call("ireduce"), Call("ireduce_scatter"), Call("ireduce_scatter_block"), Call("iscatter", ("P", "1")),
    Call("iscatterv", ("P", "1")),
    Call("neighbor_allgather", ("1", "K")), Call("neighbor_allgatherv", ("1", "K")),
    Call("neighbor_alltoall", ("K", "K")), Call("neighbor_alltoallv", ("K", "K")),
    Call("neighbor_alltoallw", ("K", "K")),
)}
for _n in ("allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"):
    CALLS["ineighbor_" + _n] = Call("ineighbor_" + _n, CALLS["neighbor_" + _n].blocks)


def limit(call: Call, s, p: int) -> int:
    """The largest size OSU measures under -M at p processes: M / P where a buffer holds a
    block per rank or per neighbour (OSU's check_mem_limit divides by P for both), else M."""
    return mem_limit(s) // p if {"P", "K"} & set(call.blocks) else mem_limit(s)


def no_size(s, dtype: str) -> list[int]:
    """ibarrier: one row, no size."""
    return [0] if dtype == s.types[0] else []


def test_calls(s) -> None:
    """-t of the nonblocking collectives: a number of MPI_Test calls."""
    if s.test_calls is not None and not str(s.test_calls).isdigit():
        raise ConfigError(f"-t {s.test_calls} is a SEND:RECV pair, latency_mt's and latency_mp's form; the nonblocking "
                          "collectives take -t CALLS, the number of MPI_Test calls during the dummy computation "
                          "(accepted: -t CALLS, 0 or more, e.g. -t 10)")


def scatter_counts(count: int, p: int) -> list[int]:
    return [count // p + (1 if i < count % p else 0) for i in range(p)]


def _poster(ctx) -> Callable[[], MPI.Request]:
    """A function that posts this benchmark's call on ctx's buffers at the current size."""
    name = ctx.bench.variant.name.removeprefix("i") if ctx.bench.variant.name.startswith("ineighbor") \
        else ctx.bench.variant.name
    comm, t, c, s, r = ctx.state.get("comm", ctx.comm), ctx.mpi_type, ctx.count, ctx.sbuf, ctx.rbuf
    k = ctx.state.get("degree", ctx.p)
    counts, displs = [c] * k, [j * c for j in range(k)]
    # neighbourhoods: receive from the sources, send to the destinations (-N graph: not as many)
    kin, kout = len(ctx.state.get("sources", ())), len(ctx.state.get("dests", ()))
    rv, sv = ([c] * kin, [j * c for j in range(kin)]), ([c] * kout, [j * c for j in range(kout)])
    blocking = not ctx.bench.variant.name.startswith("i")
    table = {
        "ibarrier": lambda: comm.Ibarrier(),
        "ibcast": lambda: comm.Ibcast([s if ctx.rank == ROOT else r, c, t], root=ROOT),
        "iallreduce": lambda: comm.Iallreduce([s, c, t], [r, c, t], MPI.SUM),
        "ireduce": lambda: comm.Ireduce([s, c, t], [r, c, t], MPI.SUM, root=ROOT),
        "ireduce_scatter": lambda: comm.Ireduce_scatter([s, c, t], [r, ctx.state["rs"][ctx.rank], t],
                                                        ctx.state["rs"], MPI.SUM),
        "ireduce_scatter_block": lambda: comm.Ireduce_scatter_block([s, c // ctx.p, t],
                                                                    [r, c // ctx.p, t], MPI.SUM),
        "iallgather": lambda: comm.Iallgather([s, c, t], [r, c, t]),
        "iallgatherv": lambda: comm.Iallgatherv([s, c, t], [r, (counts, displs), t]),
        "ialltoall": lambda: comm.Ialltoall([s, c, t], [r, c, t]),
        "ialltoallv": lambda: comm.Ialltoallv([s, (counts, displs), t], [r, (counts, displs), t]),
        "ialltoallw": lambda: comm.Ialltoallw([s, (counts, ctx.state["bd"]), [t] * k],
                                              [r, (counts, ctx.state["bd"]), [t] * k]),
        "igather": lambda: comm.Igather([s, c, t], [r, c, t] if ctx.rank == ROOT else None, root=ROOT),
        "igatherv": lambda: comm.Igatherv([s, c, t], [r, (counts, displs), t] if ctx.rank == ROOT else None,
                                          root=ROOT),
        "iscatter": lambda: comm.Iscatter([s, c, t] if ctx.rank == ROOT else None, [r, c, t],
                                          root=ROOT),
        "iscatterv": lambda: comm.Iscatterv([s, (counts, displs), t] if ctx.rank == ROOT else None, [r, c, t],
                                            root=ROOT),
    }
    pre = "N" if blocking else "In"
    nbr = {
        "neighbor_allgather": lambda: getattr(comm, pre + "eighbor_allgather")([s, c, t], [r, c, t]),
        "neighbor_allgatherv": lambda: getattr(comm, pre + "eighbor_allgatherv")([s, c, t], [r, rv, t]),
        "neighbor_alltoall": lambda: getattr(comm, pre + "eighbor_alltoall")([s, c, t], [r, c, t]),
        "neighbor_alltoallv": lambda: getattr(comm, pre + "eighbor_alltoallv")([s, sv, t], [r, rv, t]),
        "neighbor_alltoallw": lambda: getattr(comm, pre + "eighbor_alltoallw")(
            [s, (sv[0], ctx.state["bd"][:kout]), [t] * kout], [r, (rv[0], ctx.state["bd"][:kin]), [t] * kin]),
    }
    return {**table, **nbr}[name]


def prepare(ctx, size: int) -> None:
    k = ctx.state.get("degree", ctx.p)
    ctx.state["rs"] = scatter_counts(ctx.count, ctx.p)
    ctx.state["bd"] = [j * ctx.count * ctx.tsize for j in range(k)]
    ctx.state["post"] = _poster(ctx)
    control(ctx)


def control(ctx) -> None:
    """The C loops' control block (cbosu_overlap_ctl of osu.h) as ctx.abuf: this rank's reduce_scatter
    count, the counts and displacements (elements, bytes) per destination and per source,
    the call's communicator, the two degrees, and five doubles the timed loop fills (its
    means: Pure Comm., Compute, Coll. Init, MPI_Test, MPI_Wait)."""
    c, st = ctx.count, ctx.state
    kout, kin = len(st.get("dests", range(ctx.p))), len(st.get("sources", range(ctx.p)))
    recv = list(st["rs"]) if ctx.bench.variant.name == "ireduce_scatter" else [c] * kin

    def side(counts: list[int]) -> list[int]:  # counts, displacements, byte displacements
        at = [j * c for j in range(len(counts))]
        return counts + at + [x * ctx.tsize for x in at]
    st["v"] = np.array(side([c] * kout) + side(recv), dtype=np.int32)
    st["out"] = np.zeros(5)
    st["ctl"] = native_osu.OverlapCtl(rs_count=int(st["rs"][ctx.rank]), v=st["v"].ctypes.data,
                                      comm=MPI._addressof(st.get("comm", ctx.comm)), kout=kout, kin=kin,
                                      out=st["out"].ctypes.data)
    ctx.abuf = native_osu.block(st["ctl"])


def release(ctx, size: int) -> None:
    ctx.state.pop("post", None)


def values(rank: int, n: int, size: int, dtype: str, start: int = 0) -> np.ndarray:
    """Elements start … start + n - 1 of rank's -c data: (i + 7 (rank + 1) + size) mod 31."""
    return cycle(n, 31, 7 * (rank + 1) + size + start, DT[dtype])


def refill(ctx, size: int) -> None:
    """-c: this rank's values over its whole send buffer, the receive buffer cleared."""
    ks, kr = ctx.bench.variant.extent(ctx.p, ctx.s)
    n = ctx.count * ks
    ctx.sbuf[: n * ctx.tsize].view(DT[ctx.dtype])[:] = values(ctx.rank, n, size, ctx.dtype)
    ctx.rbuf[: ctx.count * kr * ctx.tsize] = 0
    if ctx.session.corrupt and n:
        ctx.sbuf[0] ^= 0xFF


def expected(ctx, size: int) -> np.ndarray | None:
    """What this rank's receive buffer must hold after the round (None: nothing)."""
    name, c, p, r, dt = ctx.bench.variant.name.removeprefix("i"), ctx.count, ctx.p, ctx.rank, ctx.dtype
    ks = ctx.bench.variant.extent(p, ctx.s)[0]

    def sent(src):
        return values(src, c * ks, size, dt)

    def total(n):  # the sum over ranks repeats every 31 elements, as each rank's values
        return np.resize(np.sum([values(q, 31, size, dt).astype(np.int64) for q in range(p)], axis=0)
                         .astype(DT[dt]), n)
    if name == "bcast":
        return sent(ROOT) if r != ROOT else None
    if name in ("allgather", "allgatherv") or (name in ("gather", "gatherv") and r == ROOT):
        return np.concatenate([sent(q) for q in range(p)])
    if name in ("alltoall", "alltoallv", "alltoallw"):
        return np.concatenate([values(q, c, size, dt, r * c) for q in range(p)])
    if name in ("scatter", "scatterv"):
        return values(ROOT, c, size, dt, r * c)
    if name == "allreduce" or (name == "reduce" and r == ROOT):
        return total(c)
    if name == "reduce_scatter":
        rs = ctx.state["rs"]
        return total(c)[sum(rs[:r]):sum(rs[:r + 1])]
    if name == "reduce_scatter_block":
        b = c // p
        return total(b * p)[r * b:(r + 1) * b]
    if name.startswith("neighbor_"):
        from commbench.suites.osu.neighbor import expected_blocks

        return expected_blocks(ctx, sent)
    return None


def verify(ctx, size: int) -> int:
    """-c: the received bytes that differ from what the call must deliver."""
    want = expected(ctx, size)
    if want is None or not want.size:
        return 0
    got = ctx.rbuf[: want.size * ctx.tsize]
    return int(np.count_nonzero(got != want.view(np.uint8)))
