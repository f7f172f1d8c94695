"""IMB-MPI1: blocking point-to-point and collectives (spec §8).

Each benchmark is a descriptor plus a kernel of a few lines: the timed loop
between two MPI.Wtime() calls, with buffer specs prebuilt by the harness.
Kernels return seconds per repetition on this rank. Here: the point-to-point
benchmarks, IMB 2021's additions (commbench.suites.mpi1.imb2021), IMB's order and
the family; the collectives are commbench.suites.mpi1.collectives.
"""

from __future__ import annotations

from mpi4py import MPI

from commbench import buffers
from commbench.option_types import ConfigError, Option, choice, integer
from commbench.suites.base import TWO, Benchmark, Family, Kind, Procs, same, xp
from commbench.suites.message_specs import lean_recv as _recv
from commbench.suites.message_specs import lean_send as _send
from commbench.suites.mpi1 import collectives, imb2021
from commbench.suites.mpi1.collectives import F
from commbench.suites.verify import check_slots

# ---------------------------------------------------------------- point to point


def _source(ctx, specific: bool | None) -> int:
    """The receive source of PingPong/PingPing: the partner for *SpecificSource,
    MPI_ANY_SOURCE for *AnySource, and the methodology's choice for the plain names
    (IMB 4.0: any source; IMB 2021: the partner)."""
    if specific is None:
        specific = not ctx.any_source
    return 1 - ctx.rank if specific else MPI.ANY_SOURCE


def _pingpong(specific: bool | None):
    def kernel(ctx, n):
        send, recv, tag = ctx.comm.Send, ctx.comm.Recv, MPI.ANY_TAG
        src = _source(ctx, specific)
        items = ctx.each(n, _send(ctx), _recv(ctx))
        if ctx.rank == 0:
            t0 = MPI.Wtime()
            for s, r in items:
                send(s, 1, 1)
                recv(r, src, tag)
        else:
            t0 = MPI.Wtime()
            for s, r in items:
                recv(r, src, tag)
                send(s, 0, 1)
        return (MPI.Wtime() - t0) / n

    return kernel


def _pingping(specific: bool | None):
    def kernel(ctx, n):
        isend, recv, tag = ctx.comm.Isend, ctx.comm.Recv, MPI.ANY_TAG
        partner = 1 - ctx.rank
        src = _source(ctx, specific)
        items = ctx.each(n, _send(ctx), _recv(ctx))
        t0 = MPI.Wtime()
        for s, r in items:
            req = isend(s, partner, 1)
            recv(r, src, tag)
            req.Wait()
        return (MPI.Wtime() - t0) / n

    return kernel


def _from_partner(ctx, n):
    partner = ctx.members[1 - ctx.rank]
    exp = buffers.pattern(partner, ctx.x, ctx.bench.dtype)
    return check_slots(ctx, n, lambda k: [(0, exp)])


def sendrecv(ctx, n):
    sr, tag = ctx.comm.Sendrecv, MPI.ANY_TAG
    right, left = (ctx.rank + 1) % ctx.size, (ctx.rank - 1) % ctx.size
    items = ctx.each(n, _send(ctx), _recv(ctx))
    t0 = MPI.Wtime()
    for s, r in items:
        sr(s, right, 1, r, left, tag)
    return (MPI.Wtime() - t0) / n


def _check_sendrecv(ctx, n):
    left = ctx.members[(ctx.rank - 1) % ctx.size]
    exp = buffers.pattern(left, ctx.x, ctx.bench.dtype)
    return check_slots(ctx, n, lambda k: [(0, exp)])


def exchange(ctx, n):
    isend, recv, waitall, tag = ctx.comm.Isend, ctx.comm.Recv, MPI.Request.Waitall, MPI.ANY_TAG
    right, left = (ctx.rank + 1) % ctx.size, (ctx.rank - 1) % ctx.size
    items = ctx.each(n, _send(ctx), _send(ctx, offset=xp(ctx.x)), _recv(ctx))
    t0 = MPI.Wtime()
    for s1, s2, r in items:
        reqs = [isend(s1, right, 1), isend(s2, left, 1)]
        recv(r, left, tag)
        recv(r, right, tag)
        waitall(reqs)
    return (MPI.Wtime() - t0) / n


def _check_exchange(ctx, n):
    # Both receives land in one area: the last one is the right neighbour's second half.
    right = ctx.members[(ctx.rank + 1) % ctx.size]
    half = xp(ctx.x)
    exp = buffers.pattern(right, half + ctx.x, ctx.bench.dtype)[half:]
    return check_slots(ctx, n, lambda k: [(0, exp)])


# ---------------------------------------------------------------- descriptors


def _single(name, kernel, expected, desc, default=True, factor=1.0, pattern=""):
    return Benchmark(
        name,
        F,
        Kind.SINGLE,
        kernel,
        desc,
        buffers=same,
        time_factor=factor,
        typed="data",
        default=default,
        procs=TWO,
        expected=expected,
        native=pattern,
        fit=True,
    )


_DESCRIPTORS = (
    _single(
        "PingPong",
        _pingpong(None),
        _from_partner,
        "half round trip of a message between two processes (receive from MPI_ANY_SOURCE; "
        "the partner with --methodology imb2021)",
        factor=0.5,
        pattern="pingpong_select",
    ),
    _single(
        "PingPongSpecificSource",
        _pingpong(True),
        _from_partner,
        "PingPong receiving from the explicit partner rank",
        default=False,
        factor=0.5,
        pattern="pingpong_specific",
    ),
    _single(
        "PingPongAnySource",
        _pingpong(False),
        _from_partner,
        "PingPong receiving from MPI_ANY_SOURCE (IMB 2021's name)",
        default=False,
        factor=0.5,
        pattern="pingpong",
    ),
    _single(
        "PingPing",
        _pingping(None),
        _from_partner,
        "both processes send at once: a message obstructed by an oncoming one (source as PingPong)",
        pattern="pingping_select",
    ),
    _single(
        "PingPingSpecificSource",
        _pingping(True),
        _from_partner,
        "PingPing receiving from the explicit partner rank",
        default=False,
        pattern="pingping_specific",
    ),
    _single(
        "PingPingAnySource",
        _pingping(False),
        _from_partner,
        "PingPing receiving from MPI_ANY_SOURCE (IMB 2021's name)",
        default=False,
        pattern="pingping",
    ),
    Benchmark(
        "Sendrecv",
        F,
        Kind.PARALLEL,
        sendrecv,
        "periodic chain of MPI_Sendrecv (bidirectional bandwidth at NP=2)",
        buffers=same,
        turnover=lambda np_: 2.0,
        expected=_check_sendrecv,
        native="sendrecv",
        fit=True,
        typed="data",
    ),
    Benchmark(
        "Exchange",
        F,
        Kind.PARALLEL,
        exchange,
        "each rank exchanges with both neighbours (Isend, Isend, Recv, Recv, Waitall)",
        buffers=lambda x, np_: (2 * xp(x), xp(x)),
        turnover=lambda np_: 4.0,
        expected=_check_exchange,
        native="exchange",
        fit=True,
        typed="data",
    ),
    *collectives.COLLECTIVES,
    *collectives.OURS,
    # IMB 2021's additions (commbench.suites.mpi1.imb2021); Uniband/Biband only by name, as there.
    *(
        Benchmark(
            name,
            F,
            Kind.RATE,
            imb2021._windowed(bi),
            what,
            buffers=same,
            default=False,
            turnover=lambda np_, bi=bi: imb2021.messages(np_, bi, 1),
            procs=Procs(minimum=2),
            expected=imb2021.check_windowed(bi),
            native=name.lower(),
            typed="data",
        )
        for name, bi, what in (
            (
                "Uniband",
                False,
                "windows of -window_size Isends from each rank of the first half to its "
                "partner in the second, one ack each: Mbytes/sec and Msg/sec",
            ),
            ("Biband", True, "Uniband in both directions at once"),
        )
    ),
    collectives.coll(
        "Reduce_local",
        imb2021.reduce_local,
        imb2021.check_reduce_local,
        "MPI_Reduce_local of X/4 floats, MPI_SUM, no communication",
        unit=4,
        since="imb2021",
    ),
    collectives.coll(
        "Reduce_scatter_block",
        imb2021.reduce_scatter_block,
        imb2021.check_reduce_scatter_block,
        "MPI_Reduce_scatter_block of NP X/4 floats, X/4 to each",
        unit=4,
        buffers=lambda x, np_: (np_ * xp(x), xp(x)),
        since="imb2021",
    ),
)

# Default execution order of the reference (spec §8, A18), with IMB 2021's additions
# where IMB 2021.11 lists them (Reduce_local after Reduce, …; Uniband, Biband last).
_ORDER = [
    "PingPong",
    "PingPongSpecificSource",
    "PingPongAnySource",
    "PingPing",
    "PingPingSpecificSource",
    "PingPingAnySource",
    "Sendrecv",
    "Exchange",
    "Allreduce",
    "Reduce",
    "Reduce_local",
    "Reduce_scatter",
    "Reduce_scatter_block",
    "Allgather",
    "Allgatherv",
    "Gather",
    "Gatherv",
    "Scatter",
    "Scatterv",
    "Alltoall",
    "Alltoallv",
    "Bcast",
    "Barrier",
    "Uniband",
    "Biband",
]
# commbench's own collectives (collops.OURS) come last, in their declared order
BENCHMARKS = tuple(
    sorted(_DESCRIPTORS, key=lambda b: _ORDER.index(b.name) if b.name in _ORDER else len(_ORDER))
)


def _window(s: str) -> int:
    w = integer("-window_size", 1)(s)
    if w > 65536:
        raise ConfigError(
            f"-window_size must be <= 65536, got {w} (accepted: -window_size 1..65536)"
        )
    return w


FAMILY = Family(
    name=F,
    title="IMB-MPI1",
    part="MPI-1 part",
    benchmarks=BENCHMARKS,
    description="blocking point-to-point and collectives (Intel MPI Benchmarks MPI-1 part)",
    aliases=("IMB-MPI1",),
    methodology=True,
    options=(
        Option(
            ("-window_size",),
            "mpi1_window_size",
            "<W>",
            "Uniband/Biband: messages in flight per repetition (default 256, as IMB 2021)",
            _window,
            default=256,
        ),
        Option(
            ("-data_type",),
            "mpi1_data_type",
            "<type>",
            "datatype of the messages: byte (default), char, int, float, double (IMB 2021)",
            choice("-data_type", tuple(buffers.DATA_TYPES)),
            default="byte",
        ),
        Option(
            ("-red_data_type",),
            "mpi1_red_data_type",
            "<type>",
            "datatype of the reductions: float (default), char, int, double (IMB 2021)",
            choice("-red_data_type", tuple(t for t in buffers.DATA_TYPES if t != "byte")),
            default="float",
        ),
    ),
)
