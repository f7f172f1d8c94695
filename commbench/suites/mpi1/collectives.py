"""IMB-MPI1's collectives (spec §8): their kernels and verifiers.

The kernels are the timed loops of Allreduce … Barrier, with buffer specs prebuilt
by the harness; each returns seconds per repetition on this rank. The verifiers
take what a rank must hold after one call from commbench.suites.collops.expected,
given IMB's data (spec §6.3): a rank's send buffer holds buffers.pattern of its
world rank, a reduction's result is buffers.reduce_pattern over the group.
IMB-NBC and IMB-MPI4 reuse these verifiers through the descriptors (FAMILY.get)
and the catalog's ROOT_SWEPT; the descriptors, order and options are the catalog's,
commbench.suites.mpi1, which names these functions as base.Lazy.
"""

from __future__ import annotations

from mpi4py import MPI

from commbench import buffers, policy
from commbench.suites import collops
from commbench.suites.base import xp
from commbench.suites.message_specs import lean_recv as _recv
from commbench.suites.message_specs import lean_send as _send
from commbench.suites.verify import check_slots, last_rep, worst

# ---------------------------------------------------------------- the data a call leaves


def received(ctx, name: str, root: int = 0):
    """The bytes this rank's receive buffer must hold, from its start, after one call of
    the collective `name` (collops' spelling) rooted at group rank `root`; None when it
    receives nothing. IMB's data: group rank src sends the bytes of buffers.pattern of
    its world rank (ctx.members[src]) in a send buffer of X bytes, NP·X' for an
    operation that sends a block per rank; a reduction counts in elements of
    -red_data_type (ctx.red_width bytes) over X bytes, NP·X for Reduce_scatter_block."""
    o, x, p = collops.OPS[name], ctx.x, ctx.size
    nbytes = p * xp(x) if o.blocks[0] == "P" else x

    def sent(src: int, n: int, at: int):
        return buffers.pattern(ctx.members[src], nbytes, ctx.bench.dtype)[at : at + n]

    if not o.reduces:
        return collops.expected(o, ctx.rank, p, x, sent, None, root)
    w = ctx.red_width
    total = p * x if name == "reduce_scatter_block" else x
    if name == "reduce_scatter":
        total = reduce_scatter_items(ctx) * w

    def summed(lo: int, hi: int, ranks: range):
        over = [ctx.members[q] for q in ranks]
        return buffers.reduce_pattern(over, total, ctx.red_np)[lo * w : hi * w]

    return collops.expected(o, ctx.rank, p, total // w, sent, summed, root)


def pieces(ctx, name: str, root: int = 0) -> list | None:
    """received() as check_slots compares it: [(offset, bytes)], a piece per rank's block
    (X bytes at j·X) where the buffer holds one block per rank, else the whole."""
    exp = received(ctx, name, root)
    if exp is None:
        return None
    if collops.OPS[name].blocks[1] != "P":
        return [(0, exp)]
    x = ctx.x
    return [(j * x, exp[j * x : j * x + x]) for j in range(ctx.size)]


# ---------------------------------------------------------------- reductions


def reduction(method: str):
    """The kernel of a reduction whose call is Allreduce's, (send, recv, MPI_SUM):
    Allreduce, and the operations of collops declared like it."""

    def kernel(ctx, n):
        op, SUM = getattr(ctx.comm, method), MPI.SUM
        items = ctx.each(n, _send(ctx, dtype=ctx.red_dtype), _recv(ctx, dtype=ctx.red_dtype))
        t0 = MPI.Wtime()
        for s, r in items:
            op(s, r, SUM)
        return (MPI.Wtime() - t0) / n

    return kernel


# The kernels written once per call: an operation of commbench's own (collops.OURS) takes
# the kernel of the operation it is declared like, with its own method.
KERNEL_OF_CALL = {"allreduce": reduction}


def kernel_like(like: str, method: str):
    """The kernel of an operation called like collops operation `like`, with `method`."""
    if like not in KERNEL_OF_CALL:
        raise ValueError(f"MPI_{method} is declared like {like}, whose kernel takes no method")
    return KERNEL_OF_CALL[like](method)


def reduce(ctx, n):
    op, SUM = ctx.comm.Reduce, MPI.SUM
    items = zip(
        ctx.roots(n), ctx.each(n, _send(ctx, dtype=ctx.red_dtype), _recv(ctx, dtype=ctx.red_dtype))
    )
    t0 = MPI.Wtime()
    for root, (s, r) in items:
        op(s, r, SUM, root)
    return (MPI.Wtime() - t0) / n


def reduce_scatter_items(ctx) -> int:
    """The floats (-red_data_type elements) this run's Reduce_scatter sums at ctx.x."""
    each = ctx.cfg.method.reduce_scatter_each
    return policy.reduce_scatter_items(ctx.x, ctx.red_width, ctx.size, each)


def reduce_scatter(ctx, n):
    op, SUM = ctx.comm.Reduce_scatter, MPI.SUM
    counts = collops.split(reduce_scatter_items(ctx), ctx.size)
    items = ctx.each(
        n,
        _send(ctx, count=ctx.red_width * sum(counts), dtype=ctx.red_dtype),
        _recv(ctx, count=ctx.red_width * counts[ctx.rank], dtype=ctx.red_dtype),
    )
    t0 = MPI.Wtime()
    for s, r in items:
        op(s, r, counts, SUM)
    return (MPI.Wtime() - t0) / n


def _dtype(ctx, name: str) -> str | None:
    """How a verifier compares: a reduction's -red_data_type, else the benchmark's type."""
    return ctx.red_np if collops.OPS[name].reduces else None


def check_every_slot(name: str):
    """The verifier of an unrooted collective: every used slot holds one call's data."""

    def expected(ctx, n):
        exp = pieces(ctx, name)
        return check_slots(ctx, n, lambda k: exp, dtype=_dtype(ctx, name))

    return expected


def check_as_root(name: str):
    """The verifier of Reduce and Gather(v): the slots that a call rooted here used last
    hold the root's data."""

    def expected(ctx, n):
        me = ctx.rank
        exp = pieces(ctx, name, root=me)

        def mine(k):
            return (
                exp
                if last_rep(n, ctx.slots, k, lambda i: ctx.root_of(i) == me) is not None
                else None
            )

        return check_slots(ctx, n, mine, dtype=_dtype(ctx, name))

    return expected


# ---------------------------------------------------------------- gather, scatter, alltoall


def vspec(ctx, specs, x):
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
    items = ctx.each(n, _send(ctx), vspec(ctx, _recv(ctx, count=ctx.size * ctx.x), ctx.x))
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


def gather(v: bool):
    def kernel(ctx, n):
        op = ctx.comm.Gatherv if v else ctx.comm.Gather
        recv = _recv(ctx, count=ctx.size * ctx.x)
        items = zip(ctx.roots(n), ctx.each(n, _send(ctx), vspec(ctx, recv, ctx.x) if v else recv))
        return _rooted_loop(op, items, n)

    return kernel


def scatter(v: bool):
    def kernel(ctx, n):
        op = ctx.comm.Scatterv if v else ctx.comm.Scatter
        send = _send(ctx, count=ctx.size * ctx.x)
        items = zip(ctx.roots(n), ctx.each(n, vspec(ctx, send, ctx.x) if v else send, _recv(ctx)))
        return _rooted_loop(op, items, n)

    return kernel


def alltoall(v: bool):
    def kernel(ctx, n):
        op = ctx.comm.Alltoallv if v else ctx.comm.Alltoall
        send = _send(ctx, count=ctx.size * ctx.x)
        recv = _recv(ctx, count=ctx.size * ctx.x)
        if v:
            send, recv = vspec(ctx, send, ctx.x), vspec(ctx, recv, ctx.x)
        items = ctx.each(n, send, recv)
        t0 = MPI.Wtime()
        for s, r in items:
            op(s, r)
        return (MPI.Wtime() - t0) / n

    return kernel


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
    name = "scatterv" if v else "scatter"

    def expected(ctx, n):
        timed = check_slots(
            ctx, n, lambda k: pieces(ctx, name, ctx.root_of(last_rep(n, ctx.slots, k)))
        )
        op = (op_of or (lambda c: c.comm.Scatterv if v else c.comm.Scatter))(ctx)
        send = _send(ctx, count=ctx.size * ctx.x)
        s = vspec(ctx, send, ctx.x)[0] if v else send[0]
        r = _recv(ctx)[0]
        swept = _every_root(
            ctx, lambda root: op(s, r, root), lambda root: received(ctx, name, root)
        )
        return worst([timed, swept])

    return expected


# ---------------------------------------------------------------- bcast, barrier


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
            return None if i is None else pieces(ctx, "bcast", ctx.root_of(i))

        timed = check_slots(ctx, n, last)
        op = (op_of or (lambda c: c.comm.Bcast))(ctx)
        s, r = _send(ctx)[0], _recv(ctx)[0]
        swept = _every_root(
            ctx,
            lambda root: op(s if root == me else r, root),
            lambda root: received(ctx, "bcast", root),
        )
        return worst([timed, swept])

    return expected


def barrier(ctx, n):
    op = ctx.comm.Barrier
    t0 = MPI.Wtime()
    for _ in range(n):
        op()
    return (MPI.Wtime() - t0) / n
