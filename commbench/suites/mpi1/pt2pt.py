"""IMB-MPI1's point-to-point kernels and verifiers (spec §8): PingPong, PingPing (and their
*SpecificSource / *AnySource forms), Sendrecv, Exchange; the descriptors are the catalog's
(commbench.suites.mpi1)."""

from __future__ import annotations

from mpi4py import MPI

from commbench import buffers
from commbench.suites.base import xp
from commbench.suites.message_specs import lean_recv as _recv
from commbench.suites.message_specs import lean_send as _send
from commbench.suites.verify import check_slots

# ---------------------------------------------------------------- point to point


def _source(ctx, specific: bool | None) -> int:
    """The receive source of PingPong/PingPing: the partner for *SpecificSource,
    MPI_ANY_SOURCE for *AnySource, and the methodology's choice for the plain names
    (IMB 4.0: any source; IMB 2021: the partner)."""
    if specific is None:
        specific = not ctx.any_source
    return 1 - ctx.rank if specific else MPI.ANY_SOURCE


def pingpong(specific: bool | None):
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


def pingping(specific: bool | None):
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


def from_partner(ctx, n):
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


def check_sendrecv(ctx, n):
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


def check_exchange(ctx, n):
    # Both receives land in one area: the last one is the right neighbour's second half.
    right = ctx.members[(ctx.rank + 1) % ctx.size]
    half = xp(ctx.x)
    exp = buffers.pattern(right, half + ctx.x, ctx.bench.dtype)[half:]
    return check_slots(ctx, n, lambda k: [(0, exp)])
