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
others at M. -c: collectives_check.py.
"""

from __future__ import annotations

import sys

import numpy as np
from mpi4py import MPI

from commbench.native import osu as native_osu
from commbench.suites.osu import collectives_check as check
from commbench.suites.osu.settings import mem_limit
from commbench.suites.osu.spec import Defaults, OsuBenchmark, percentile

COLL = Defaults(iterations=1000, iterations_large=100, skip=100, skip_large=10, max_size=1 << 20)
TAKES = frozenset("mixzcTfMu")
BARRIER_TAKES = frozenset("mixzfM")  # osu_barrier refuses -c and -T; it takes -m and measures no size


class Call:
    """One collective: OSU's title words, the mpi4py method, the blocks of the largest size
    each buffer holds (send, receive: 1 or P), and whether it reduces."""

    def __init__(self, name: str, title: str, method: str, blocks: tuple[str, str], reduces: bool = False):
        self.name, self.title, self.method, self.blocks, self.reduces = name, title, method, blocks, reduces

    def extent(self, p: int, settings=None) -> tuple[int, int]:
        return tuple(p if b == "P" else 1 for b in self.blocks)  # type: ignore[return-value]


CALLS = (
    Call("allreduce", "Allreduce", "Allreduce", ("1", "1"), True),
    Call("allgather", "Allgather", "Allgather", ("1", "P")),
    Call("allgatherv", "Allgatherv", "Allgatherv", ("1", "P")),
    Call("alltoall", "All-to-All Personalized Exchange", "Alltoall", ("P", "P")),
    Call("alltoallv", "All-to-Allv Personalized Exchange", "Alltoallv", ("P", "P")),
    Call("alltoallw", "All-to-Allw Personalized Exchange", "Alltoallw", ("P", "P")),
    Call("barrier", "Barrier", "Barrier", ("1", "1")),
    Call("bcast", "Broadcast", "Bcast", ("1", "1")),
    Call("gather", "Gather", "Gather", ("1", "P")),
    Call("gatherv", "Gatherv", "Gatherv", ("1", "P")),
    Call("reduce", "Reduce", "Reduce", ("1", "1"), True),
    Call("reduce_scatter", "Reduce_scatter", "Reduce_scatter", ("1", "1"), True),
    Call("reduce_scatter_block", "Reduce_scatter_block", "Reduce_scatter_block", ("1", "1"), True),
    Call("scatter", "Scatter", "Scatter", ("P", "1")),
    Call("scatterv", "Scatterv", "Scatterv", ("P", "1")),
)
BY_CALL = {c.name: c for c in CALLS}
NOT_PERSISTENT = {"reduce_scatter_block"}  # OMB 7.4 has no osu_reduce_scatter_block_persistent


def limit(call: Call, settings, p: int) -> int:
    """The largest size OSU measures at p processes under -M."""
    m = mem_limit(settings)
    return m // p if "P" in call.blocks else m


def counts(c, call: Call) -> tuple[list[int], list[int]]:
    """(counts, displacements) in elements: k per rank, except reduce_scatter's split of
    the k elements (count/P each, the first count mod P ranks one more, as OSU)."""
    k, p = c.count, c.p
    if call.name == "reduce_scatter":
        cnt = [k // p + (1 if i < k % p else 0) for i in range(p)]
    else:
        cnt = [k] * p
    return cnt, [sum(cnt[:i]) for i in range(p)]


def arguments(c, call: Call) -> tuple:
    """The mpi4py arguments of one call at the context's size."""
    s, r, t, k, p = c.sbuf, c.rbuf, c.mpi_type, c.count, c.p
    cnt, dsp = counts(c, call)
    byte_dsp = [d * c.tsize for d in dsp]
    return {
        "allreduce": lambda: ([s, k, t], [r, k, t], MPI.SUM),
        "reduce": lambda: ([s, k, t], [r, k, t], MPI.SUM, 0),
        "reduce_scatter": lambda: ([s, k, t], [r, cnt[c.rank], t], cnt, MPI.SUM),
        "reduce_scatter_block": lambda: ([s, k // p, t], [r, k // p, t], MPI.SUM),  # mpi4py: the count per rank
        "bcast": lambda: ([s if c.rank == 0 else r, k, t], 0),
        "allgather": lambda: ([s, k, t], [r, k, t]),
        "allgatherv": lambda: ([s, k, t], [r, cnt, dsp, t]),
        "gather": lambda: ([s, k, t], [r, k, t], 0),
        "gatherv": lambda: ([s, k, t], [r, cnt, dsp, t], 0),
        "scatter": lambda: ([s, k, t], [r, k, t], 0),
        "scatterv": lambda: ([s, cnt, dsp, t], [r, k, t], 0),
        "alltoall": lambda: ([s, k, t], [r, k, t]),
        "alltoallv": lambda: ([s, cnt, dsp, t], [r, cnt, dsp, t]),
        "alltoallw": lambda: ([s, cnt, byte_dsp, [t] * p], [r, cnt, byte_dsp, [t] * p]),
        "barrier": lambda: (),
    }[call.name]()


def control(c, call: Call, req) -> native_osu.CollCtl:
    """The native loops' control block (cbosu_coll_ctl of osu.h): the receive count of
    reduce_scatter, the int32 arrays counts, displacements and byte displacements (P
    each), the persistent request (or none)."""
    cnt, dsp = counts(c, call)
    v = np.array(cnt + dsp + [d * c.tsize for d in dsp], dtype=np.int32)
    c.state["v"] = v
    return native_osu.CollCtl(rs_count=int(cnt[c.rank]), v=v.ctypes.data,
                              req=MPI._addressof(req) if req is not None else None)


def prepare(c, size: int) -> None:
    call, persistent = c.bench.variant
    if call.name == "barrier" and c.s.message_size and c.rank == 0:
        print(f"commbench: osu {c.bench.name}: -m does not apply (no message; osu_barrier takes it and measures "
              "no size too)", file=sys.stderr, flush=True)
    fn = getattr(c.comm, call.method + ("_init" if persistent else ""))
    args = arguments(c, call)
    req = fn(*args) if persistent else None
    c.state.update(call=(fn, args), req=req)
    c.state["ctl"] = control(c, call, req)
    c.abuf = native_osu.block(c.state["ctl"])  # what the driver hands the C loop as abuf


def release(c, size: int) -> None:
    req = c.state.pop("req", None)
    if req is not None:
        req.Free()
    c.state.pop("call", None)


def loop(c, n: int, times) -> None:
    """n rounds: MPI_Wtime, the collective (or MPI_Start, MPI_Wait), MPI_Wtime, MPI_Barrier
    (none for barrier), as OSU: every rank times, the warm-up too (its times are dropped)."""
    wtime, bar = MPI.Wtime, c.comm.Barrier
    req = c.state["req"]
    if req is not None:
        start, wait = req.Start, req.Wait
        between = c.bench.variant[0].name != "barrier"
        for i in range(n):
            t0 = wtime()
            start()
            wait()
            t = wtime() - t0
            if times is not None:
                times[i] = t
            if between:
                bar()
        return
    fn, args = c.state["call"]
    if c.bench.variant[0].name == "barrier":
        for i in range(n):
            t0 = wtime()
            fn()
            t = wtime() - t0
            if times is not None:
                times[i] = t
        return
    for i in range(n):
        t0 = wtime()
        fn(*args)
        t = wtime() - t0
        if times is not None:
            times[i] = t
        bar()


def row(b, data, c, s) -> dict:
    """OSU's row from every rank's per-round seconds: t = the mean over ranks of each rank's
    mean (us), t_min/t_max their extremes (-f); iter_* and t_p<P> over the rounds' times
    averaged over the ranks (OSU's -z)."""
    us = np.array([np.asarray(t, dtype=float) for t in data]) * 1e6
    per_rank, per_round = us.mean(axis=1), us.mean(axis=0)
    t = float(per_rank.mean())
    vals = {"t": t, "t_avg": t, "t_min": float(per_rank.min()), "t_max": float(per_rank.max()),
            "iter_min": float(per_round.min()), "iter_max": float(per_round.max()),
            "iter_median": float(np.median(per_round))}
    rounds = per_round.tolist()
    vals.update({f"t_p{q}": percentile(rounds, q) for q in s.percentiles})
    return vals


def extra(c, s, ex) -> dict:
    call = c.bench.variant[0]
    more = {"root": 0, "mem_limit": mem_limit(s)}
    if s.full:
        more["full"] = True
    if call.reduces:
        more["op"] = "MPI_SUM"
    if call.name == "barrier":
        more.update(sized=False, datatype_line=False)
    return more


def barrier_sizes(settings, dtype: str) -> list[int]:
    """osu_barrier: one row without a size, for the run's first -T type only."""
    return [0] if dtype == settings.types[0] else []


def describe(call: Call, persistent: bool) -> str:
    what = f"MPI_{call.method}" + ("_init once per size, then MPI_Start and MPI_Wait" if persistent else "")
    return what + ("" if call.name == "barrier" else ", MPI_Barrier") + " per round; every rank timed"


def benchmark(call: Call, persistent: bool) -> OsuBenchmark:
    barrier = call.name == "barrier"
    return OsuBenchmark(
        call.name + ("_persistent" if persistent else ""), describe(call, persistent),
        group="coll", title=f"MPI {call.title}{' Persistent' if persistent else ''} Latency",
        metric="sync" if barrier else "collective", takes=BARRIER_TAKES if barrier else TAKES, defaults=COLL,
        loop=loop, prepare=prepare, release=release,
        native=("barrier_persistent" if barrier else "persistent") if persistent else call.name,
        buffers=sum(call.extent(2)), row=row, verify=None if barrier else check.verify,
        refill=None if barrier else check.refill, gather=True, variant=(call, persistent), extra=extra,
        sizes=barrier_sizes if barrier else None, extent=call.extent, limit=lambda s, p, call=call: limit(call, s, p))


BENCHMARKS = tuple(benchmark(c, False) for c in CALLS) + tuple(
    benchmark(c, True) for c in CALLS if c.name not in NOT_PERSISTENT)
