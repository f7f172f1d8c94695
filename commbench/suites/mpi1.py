"""IMB-MPI1: blocking point-to-point and collectives (spec §8).

Each benchmark is a descriptor plus a kernel of a few lines: the timed loop
between two MPI.Wtime() calls, with buffer specs prebuilt by the harness.
Kernels return seconds per repetition on this rank.
"""

from __future__ import annotations

from mpi4py import MPI

from commbench import buffers
from commbench.options import ConfigError, Option, choice, integer
from commbench.suites import collops, mpi1_2021
from commbench.suites.base import TWO, Benchmark, Family, Kind, Procs, same, xp
from commbench.suites.specs import lean_recv as _recv
from commbench.suites.specs import lean_send as _send
from commbench.suites.verify import check_slots, last_rep, worst

F = "mpi1"


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


# ---------------------------------------------------------------- collectives


def allreduce(ctx, n):
    op, SUM = ctx.comm.Allreduce, MPI.SUM
    items = ctx.each(n, _send(ctx, dtype=ctx.red_dtype), _recv(ctx, dtype=ctx.red_dtype))
    t0 = MPI.Wtime()
    for s, r in items:
        op(s, r, SUM)
    return (MPI.Wtime() - t0) / n


def reduce(ctx, n):
    op, SUM = ctx.comm.Reduce, MPI.SUM
    items = zip(
        ctx.roots(n), ctx.each(n, _send(ctx, dtype=ctx.red_dtype), _recv(ctx, dtype=ctx.red_dtype))
    )
    t0 = MPI.Wtime()
    for root, (s, r) in items:
        op(s, r, SUM, root)
    return (MPI.Wtime() - t0) / n


def reduce_scatter(ctx, n):
    op, SUM = ctx.comm.Reduce_scatter, MPI.SUM
    counts = collops.split(ctx.x // ctx.red_width, ctx.size)
    items = ctx.each(
        n,
        _send(ctx, dtype=ctx.red_dtype),
        _recv(ctx, count=ctx.red_width * counts[ctx.rank], dtype=ctx.red_dtype),
    )
    t0 = MPI.Wtime()
    for s, r in items:
        op(s, r, counts, SUM)
    return (MPI.Wtime() - t0) / n


def _check_allreduce(ctx, n):
    exp = buffers.reduce_pattern(ctx.members, ctx.x, ctx.red_np)
    return check_slots(ctx, n, lambda k: [(0, exp)], dtype=ctx.red_np)


def _check_reduce(ctx, n):
    exp = buffers.reduce_pattern(ctx.members, ctx.x, ctx.red_np)
    me = ctx.rank
    return check_slots(
        ctx,
        n,
        lambda k: (
            [(0, exp)]
            if last_rep(n, ctx.slots, k, lambda i: ctx.root_of(i) == me) is not None
            else None
        ),
        dtype=ctx.red_np,
    )


def _check_reduce_scatter(ctx, n):
    w = ctx.red_width
    counts = collops.split(ctx.x // w, ctx.size)
    start = w * sum(counts[: ctx.rank])
    exp = buffers.reduce_pattern(ctx.members, ctx.x, ctx.red_np)[
        start : start + w * counts[ctx.rank]
    ]
    return check_slots(ctx, n, lambda k: [(0, exp)], dtype=ctx.red_np)


def _vspec(ctx, specs, x):
    """The v-collectives' spec: X bytes from/to each rank at j·X, counted in elements of
    the message datatype (-data_type)."""
    counts, displs = collops.counts(collops.OPS["allgatherv"], x // ctx.width, ctx.size)
    return [[s[0], (counts, displs), ctx.dtype] for s in specs]


def allgather(ctx, n):
    op = ctx.comm.Allgather
    items = ctx.each(n, _send(ctx), _recv(ctx, count=ctx.size * ctx.x))
    t0 = MPI.Wtime()
    for s, r in items:
        op(s, r)
    return (MPI.Wtime() - t0) / n


def allgatherv(ctx, n):
    op = ctx.comm.Allgatherv
    items = ctx.each(n, _send(ctx), _vspec(ctx, _recv(ctx, count=ctx.size * ctx.x), ctx.x))
    t0 = MPI.Wtime()
    for s, r in items:
        op(s, r)
    return (MPI.Wtime() - t0) / n


def _rooted_loop(op, items, n: int) -> float:
    """The timed loop of Gather/Scatter(v): op(send, recv, root), root i % NP."""
    t0 = MPI.Wtime()
    for root, (s, r) in items:
        op(s, r, root)
    return (MPI.Wtime() - t0) / n


def _gather(v: bool):
    def kernel(ctx, n):
        op = ctx.comm.Gatherv if v else ctx.comm.Gather
        recv = _recv(ctx, count=ctx.size * ctx.x)
        items = zip(ctx.roots(n), ctx.each(n, _send(ctx), _vspec(ctx, recv, ctx.x) if v else recv))
        return _rooted_loop(op, items, n)

    return kernel


def _scatter(v: bool):
    def kernel(ctx, n):
        op = ctx.comm.Scatterv if v else ctx.comm.Scatter
        send = _send(ctx, count=ctx.size * ctx.x)
        items = zip(ctx.roots(n), ctx.each(n, _vspec(ctx, send, ctx.x) if v else send, _recv(ctx)))
        return _rooted_loop(op, items, n)

    return kernel


def _alltoall(v: bool):
    def kernel(ctx, n):
        op = ctx.comm.Alltoallv if v else ctx.comm.Alltoall
        send = _send(ctx, count=ctx.size * ctx.x)
        recv = _recv(ctx, count=ctx.size * ctx.x)
        if v:
            send, recv = _vspec(ctx, send, ctx.x), _vspec(ctx, recv, ctx.x)
        items = ctx.each(n, send, recv)
        t0 = MPI.Wtime()
        for s, r in items:
            op(s, r)
        return (MPI.Wtime() - t0) / n

    return kernel


def _gathered(ctx):
    return [
        (j * ctx.x, buffers.pattern(w, ctx.x, ctx.bench.dtype)) for j, w in enumerate(ctx.members)
    ]


def _check_allgather(ctx, n):
    exp = _gathered(ctx)
    return check_slots(ctx, n, lambda k: exp)


def _check_gather(ctx, n):
    exp = _gathered(ctx)
    me = ctx.rank
    return check_slots(
        ctx,
        n,
        lambda k: (
            exp if last_rep(n, ctx.slots, k, lambda i: ctx.root_of(i) == me) is not None else None
        ),
    )


def _block_of(ctx, world_rank: int) -> tuple[int, object]:
    """My block of another rank's NP·X' send buffer."""
    full = buffers.pattern(world_rank, ctx.size * xp(ctx.x), ctx.bench.dtype)
    return full[ctx.rank * ctx.x : ctx.rank * ctx.x + ctx.x]


def _every_root(ctx, one, expect) -> float | None:
    """Check mode of a rooted operation whose data only its root sends (Scatter(v), Bcast).

    Each slot of the timed loop keeps only the data of the last root that used
    it, so a rank whose send buffer is wrong would pass unless it happened to be
    that root. After the timed data is verified, one more untimed operation per
    root into receive slot 0 — one(root) runs and completes it — is verified
    too, so every rank's data is looked at (the slot's timed data is gone by
    then, which is why it is verified first)."""
    devs = []
    rlen = ctx.bufs.recv_stride if ctx.slots > 1 else ctx.rbuf.nbytes
    for root in range(ctx.size):
        ctx.rbuf[:rlen] = 0
        one(root)
        exp = expect(root)
        if exp is not None:
            devs.append(buffers.deviation(ctx.rbuf[: exp.nbytes], exp, ctx.bench.dtype))
    return worst(devs)


def scatter_check(v: bool, op_of=None):
    """Scatter(v)'s verifier; op_of(ctx) -> op(send, recv, root) completing one operation
    (the blocking MPI_Scatter(v) here; IMB-NBC passes its start-and-wait)."""

    def expected(ctx, n):
        timed = check_slots(
            ctx,
            n,
            lambda k: [(0, _block_of(ctx, ctx.members[ctx.root_of(last_rep(n, ctx.slots, k))]))],
        )
        op = (op_of or (lambda c: c.comm.Scatterv if v else c.comm.Scatter))(ctx)
        send = _send(ctx, count=ctx.size * ctx.x)
        s = _vspec(ctx, send, ctx.x)[0] if v else send[0]
        r = _recv(ctx)[0]
        swept = _every_root(
            ctx, lambda root: op(s, r, root), lambda root: _block_of(ctx, ctx.members[root])
        )
        return worst([timed, swept])

    return expected


def _check_alltoall(ctx, n):
    exp = [(j * ctx.x, _block_of(ctx, w)) for j, w in enumerate(ctx.members)]
    return check_slots(ctx, n, lambda k: exp)


def bcast(ctx, n):
    op = ctx.comm.Bcast
    me = ctx.rank
    items = zip(ctx.roots(n), ctx.each(n, _send(ctx), _recv(ctx)))
    t0 = MPI.Wtime()
    for root, (s, r) in items:
        op(s if root == me else r, root)
    return (MPI.Wtime() - t0) / n


def bcast_check(op_of=None):
    """Bcast's verifier; op_of(ctx) -> op(buf, root) completing one operation (see
    scatter_check)."""

    def expected(ctx, n):
        me = ctx.rank

        def last(k):
            i = last_rep(n, ctx.slots, k, lambda i: ctx.root_of(i) != me)
            if i is None:
                return None
            return [(0, buffers.pattern(ctx.members[ctx.root_of(i)], ctx.x, ctx.bench.dtype))]

        timed = check_slots(ctx, n, last)
        op = (op_of or (lambda c: c.comm.Bcast))(ctx)
        s, r = _send(ctx)[0], _recv(ctx)[0]
        swept = _every_root(
            ctx,
            lambda root: op(s if root == me else r, root),
            lambda root: (
                None if root == me else buffers.pattern(ctx.members[root], ctx.x, ctx.bench.dtype)
            ),
        )
        return worst([timed, swept])

    return expected


# The verifiers that re-run their operation once per root, by MPI-1 name: IMB-NBC
# builds its own from these with its nonblocking operation.
ROOT_SWEPT = {
    "Scatter": lambda op_of: scatter_check(False, op_of),
    "Scatterv": lambda op_of: scatter_check(True, op_of),
    "Bcast": bcast_check,
}


def barrier(ctx, n):
    op = ctx.comm.Barrier
    t0 = MPI.Wtime()
    for _ in range(n):
        op()
    return (MPI.Wtime() - t0) / n


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


def _coll(name, kernel, expected, desc, buffers=same, unit=1, root_based=False, since=""):
    """A collective; unit 4 marks a reduction (-red_data_type, float by default)."""
    default = {"default": False, "default_in": (since,)} if since else {}
    return Benchmark(
        name,
        F,
        Kind.COLLECTIVE,
        kernel,
        desc,
        buffers=buffers,
        unit=unit,
        **default,
        typed="red" if unit == 4 else "data",
        root_based=root_based,
        expected=expected,
        native=name.lower(),
        int_extent=_last_displacement if name.endswith("v") else None,
    )


def _last_displacement(x: int, np_: int) -> int:
    """The v-collectives' displacements are j*X: the last one, (NP-1)*X (IMB: "rank*size")."""
    return (np_ - 1) * x


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
    _coll("Allreduce", allreduce, _check_allreduce, "MPI_Allreduce of X/4 floats, MPI_SUM", unit=4),
    _coll(
        "Reduce",
        reduce,
        _check_reduce,
        "MPI_Reduce of X/4 floats to root i%NP",
        unit=4,
        root_based=True,
    ),
    _coll(
        "Reduce_scatter",
        reduce_scatter,
        _check_reduce_scatter,
        "MPI_Reduce_scatter of X/4 floats, even split",
        unit=4,
    ),
    _coll(
        "Allgather",
        allgather,
        _check_allgather,
        "MPI_Allgather, X bytes from each",
        buffers=lambda x, np_: (xp(x), np_ * xp(x)),
    ),
    _coll(
        "Allgatherv",
        allgatherv,
        _check_allgather,
        "MPI_Allgatherv with the data of Allgather",
        buffers=lambda x, np_: (xp(x), np_ * xp(x)),
    ),
    _coll(
        "Gather",
        _gather(False),
        _check_gather,
        "MPI_Gather of X bytes from each to root i%NP",
        buffers=lambda x, np_: (xp(x), np_ * xp(x)),
        root_based=True,
    ),
    _coll(
        "Gatherv",
        _gather(True),
        _check_gather,
        "MPI_Gatherv with the data of Gather",
        buffers=lambda x, np_: (xp(x), np_ * xp(x)),
        root_based=True,
    ),
    _coll(
        "Scatter",
        _scatter(False),
        scatter_check(False),
        "MPI_Scatter of X bytes to each from root i%NP",
        buffers=lambda x, np_: (np_ * xp(x), xp(x)),
        root_based=True,
    ),
    _coll(
        "Scatterv",
        _scatter(True),
        scatter_check(True),
        "MPI_Scatterv with the data of Scatter",
        buffers=lambda x, np_: (np_ * xp(x), xp(x)),
        root_based=True,
    ),
    _coll(
        "Alltoall",
        _alltoall(False),
        _check_alltoall,
        "MPI_Alltoall, X bytes per pair",
        buffers=lambda x, np_: (np_ * xp(x), np_ * xp(x)),
    ),
    _coll(
        "Alltoallv",
        _alltoall(True),
        _check_alltoall,
        "MPI_Alltoallv, X bytes per pair",
        buffers=lambda x, np_: (np_ * xp(x), np_ * xp(x)),
    ),
    _coll("Bcast", bcast, bcast_check(), "MPI_Bcast of X bytes from root i%NP", root_based=True),
    Benchmark(
        "Barrier",
        F,
        Kind.SYNC,
        barrier,
        "MPI_Barrier",
        buffers=lambda x, np_: (0, 0),
        native="barrier",
    ),
    # IMB 2021's additions (commbench.suites.mpi1_2021); Uniband/Biband only by name, as there.
    *(
        Benchmark(
            name,
            F,
            Kind.RATE,
            mpi1_2021._windowed(bi),
            what,
            buffers=same,
            default=False,
            turnover=lambda np_, bi=bi: mpi1_2021.messages(np_, bi, 1),
            procs=Procs(minimum=2),
            expected=mpi1_2021.check_windowed(bi),
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
    _coll(
        "Reduce_local",
        mpi1_2021.reduce_local,
        mpi1_2021.check_reduce_local,
        "MPI_Reduce_local of X/4 floats, MPI_SUM, no communication",
        unit=4,
        since="imb2021",
    ),
    _coll(
        "Reduce_scatter_block",
        mpi1_2021.reduce_scatter_block,
        mpi1_2021.check_reduce_scatter_block,
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
BENCHMARKS = tuple(sorted(_DESCRIPTORS, key=lambda b: _ORDER.index(b.name)))
assert [b.name for b in BENCHMARKS] == _ORDER


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
