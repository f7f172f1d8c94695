"""OSU's blocking collectives and their MPI-4 persistent forms (OMB 7.4).

Procedure (OSU's collective procedure): per size, a barrier, the warm-up, then
the timed iterations, each timed alone on every rank; a rank's latency is the
mean of its iterations; the row prints the mean over ranks (and under -f the
min and max over ranks). Defaults: 1000 iterations (100 above 8192 bytes),
200 warm-up (10), sizes 1 B to 1 MiB. Persistent forms: the request is made
(MPI_<Coll>_init) once per size, untimed; each iteration is MPI_Start, MPI_Wait.

Buffers: the send and receive buffers of p blocks are numpy arrays made per size
(prepare), the send blocks copies of the context's send buffer, so that -c's
pattern (and COMMBENCH_FAULT_CORRUPT's spoiled byte) travels through them.
Reduction: MPI_SUM in the -T type; reduce_scatter gives every rank count elements.
"""

from __future__ import annotations

import statistics

import numpy as np
from mpi4py import MPI

from commbench.suites.osu.context import pattern
from commbench.suites.osu.spec import Defaults, OsuBenchmark, percentile

COLL = Defaults(iterations=1000, iterations_large=100, skip=200, skip_large=10, max_size=1 << 20)
TAKES = frozenset("mixzcTfM")
NP = {"mpi_char": "int8", "mpi_int": "int32", "mpi_float": "float32"}  # names: numpy loads on first use
REDUCING = {"allreduce", "reduce", "reduce_scatter", "reduce_scatter_block"}


def _args(c, name: str):
    """(method name, its arguments) of one collective at the context's size."""
    s, r, t, k, p = c.state["s"], c.state["r"], c.mpi_type, c.count, c.p
    one, cnts = [s, k, t], [k] * p
    displs = [i * k for i in range(p)]
    table = {
        "allreduce": ("Allreduce", ([s, k, t], [r, k, t], MPI.SUM)),
        "reduce": ("Reduce", ([s, k, t], [r, k, t], MPI.SUM, 0)),
        "reduce_scatter": ("Reduce_scatter", ([s, k * p, t], [r, k, t], cnts, MPI.SUM)),
        "reduce_scatter_block": ("Reduce_scatter_block", ([s, k, t], [r, k, t], MPI.SUM)),
        "bcast": ("Bcast", ([s if c.rank == 0 else r, k, t], 0)),
        "allgather": ("Allgather", (one, [r, k, t])),
        "allgatherv": ("Allgatherv", (one, [r, cnts, displs, t])),
        "gather": ("Gather", (one, [r, k, t], 0)),
        "gatherv": ("Gatherv", (one, [r, cnts, displs, t], 0)),
        "scatter": ("Scatter", ([s, k, t], [r, k, t], 0)),
        "scatterv": ("Scatterv", ([s, cnts, displs, t], [r, k, t], 0)),
        "alltoall": ("Alltoall", ([s, k, t], [r, k, t])),
        "alltoallv": ("Alltoallv", ([s, cnts, displs, t], [r, cnts, displs, t])),
        "alltoallw": ("Alltoallw", ([s, cnts, [d * c.tsize for d in displs], [t] * p],
                                    [r, cnts, [d * c.tsize for d in displs], [t] * p])),
        "barrier": ("Barrier", ()),
    }
    return table[name]


def prepare(c, size: int) -> None:
    nb, p = c.nbytes, c.p
    c.state["s"] = np.tile(c.sbuf[:nb], p) if nb else np.zeros(max(1, p), np.uint8)
    c.state["r"] = np.zeros(max(1, nb * p), np.uint8)
    c.state["ctx"] = (c.sbuf, c.rbuf)  # the native loop reads ctx.sbuf/rbuf: p blocks here
    c.sbuf, c.rbuf = c.state["s"], c.state["r"]
    name, persistent = c.bench.variant
    method, args = _args(c, name)
    if persistent:
        c.state["req"] = getattr(c.comm, method + "_init")(*args)
    else:
        c.state["call"] = (getattr(c.comm, method), args)


def refill(c, size: int) -> None:
    """-c: the send blocks from the freshly patterned send buffer, the receive buffer cleared."""
    nb = c.nbytes
    if nb:
        c.state["s"][:] = np.tile(c.state["s"][:nb], c.p)
    c.state["r"][:] = 0


def release(c, size: int) -> None:
    c.sbuf, c.rbuf = c.state.pop("ctx")
    req = c.state.pop("req", None)
    if req is not None:
        req.Free()
    c.state.clear()


def loop(c, n: int, times) -> None:
    wtime = MPI.Wtime
    req = c.state.get("req")
    if req is not None:
        start, wait = req.Start, req.Wait
        for i in range(n):
            t0 = wtime()
            start()
            wait()
            if times is not None:
                times[i] = wtime() - t0
        return
    fn, args = c.state["call"]
    for i in range(n):
        t0 = wtime()
        fn(*args)
        if times is not None:
            times[i] = wtime() - t0


def verify(c, size: int) -> int:
    """-c: this rank's wrong received bytes (elements for reductions, as bytes)."""
    name = c.bench.variant[0]
    nb, p, r = c.nbytes, c.p, c.state["r"]
    if not nb or name == "barrier":
        return 0
    if name in REDUCING:
        if name == "reduce" and c.rank != 0:
            return 0
        dt = np.dtype(NP[c.dtype])
        parts = np.stack([pattern(k, nb, size).view(dt) for k in range(p)])
        want = np.add.reduce(parts, axis=0, dtype=dt)
        got = r[:nb].view(dt)
        ok = np.isclose(got, want, equal_nan=True) if dt == np.float32 else got == want
        return int(np.count_nonzero(~ok))
    if name in ("bcast", "scatter", "scatterv"):
        return 0 if (name == "bcast" and c.rank == 0) else int(np.count_nonzero(r[:nb] != pattern(0, nb, size)))
    if name in ("gather", "gatherv") and c.rank != 0:
        return 0
    want = np.concatenate([pattern(k, nb, size) for k in range(p)])
    return int(np.count_nonzero(r[: nb * p] != want))


def row(b, data, c, s) -> dict:
    """OSU's collective row: per rank the mean of its iterations (us); avg/min/max over ranks."""
    per_rank = [float(np.mean(t)) * 1e6 for t in data]
    pooled = [float(x) * 1e6 for t in data for x in t]
    avg = sum(per_rank) / len(per_rank)
    vals = {"t": avg, "t_avg": avg, "t_min": min(per_rank), "t_max": max(per_rank),
            "iter_min": min(pooled), "iter_max": max(pooled), "iter_median": statistics.median(pooled)}
    vals.update({f"t_p{q}": percentile(pooled, q) for q in s.percentiles})
    return vals


def _barrier_sizes(settings, dtype) -> list[int]:
    return [0]


def _extra(c, s, extra) -> dict:
    """-f's columns; osu_barrier prints no size column and no datatype line."""
    more = {"full": True} if s.full else {}
    if c.bench.variant[0] == "barrier":
        more.update(sized=False, datatype_line=False)
    return more


NAMES = (
    ("allreduce", "Allreduce Latency"), ("allgather", "Allgather Latency"),
    ("allgatherv", "Allgatherv Latency"), ("alltoall", "All-to-All Personalized Exchange Latency"),
    ("alltoallv", "All-to-Allv Personalized Exchange Latency"),
    ("alltoallw", "All-to-Allw Personalized Exchange Latency"), ("barrier", "Barrier Latency"),
    ("bcast", "Broadcast Latency"), ("gather", "Gather Latency"), ("gatherv", "Gatherv Latency"),
    ("reduce", "Reduce Latency"), ("reduce_scatter", "Reduce_scatter Latency"),
    ("reduce_scatter_block", "Reduce_scatter_block Latency"), ("scatter", "Scatter Latency"),
    ("scatterv", "Scatterv Latency"),
)
PERSISTENT = {n for n, _ in NAMES} - {"reduce_scatter_block"}  # as OMB 7.4's binaries


def _bench(name: str, title: str, persistent: bool) -> OsuBenchmark:
    words = title.rsplit(" ", 1)
    full = f"MPI {words[0]} Persistent {words[1]}" if persistent else f"MPI {title}"
    call = "MPI_" + name.capitalize()
    return OsuBenchmark(
        name + ("_persistent" if persistent else ""),
        f"{call}{'_init, then MPI_Start/MPI_Wait' if persistent else ''} per iteration, every rank timed",
        group="blocking", title=full, metric="latency", takes=TAKES - ({"T", "c"} if name == "barrier" else set()),
        defaults=COLL, loop=loop, prepare=prepare, release=release, refill=refill, row=row, verify=None if name == "barrier" else verify,
        gather=True, buffers=4, extra=_extra, native=name + ("_persistent" if persistent else ""), variant=(name, persistent), sizes=_barrier_sizes if name == "barrier" else None)


BENCHMARKS = tuple(_bench(n, t, False) for n, t in NAMES) + tuple(
    _bench(n, t, True) for n, t in NAMES if n in PERSISTENT)
