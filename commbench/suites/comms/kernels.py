"""COMMS1 and COMMS2's kernels and verifiers (the family and its descriptors: the catalog,
commbench.suites.comms)."""

from __future__ import annotations

from mpi4py import MPI

from commbench import buffers
from commbench.suites.verify import check_slots, worst


def comms1(ctx, n):
    """Pingpong from the master (rank 0) to the slave and back, explicit source."""
    comm = ctx.comm
    send, recv = comm.Send, comm.Recv
    items = ctx.each(n, ctx.send_specs(), ctx.recv_specs())
    if ctx.rank == 0:
        t0 = MPI.Wtime()
        for s, r in items:
            send(s, 1, 1)
            recv(r, 1, 1)
    else:
        # The slave returns the message it received (from its receive buffer).
        t0 = MPI.Wtime()
        for _, r in items:
            recv(r, 0, 1)
            send(r, 0, 1)
    return (MPI.Wtime() - t0) / n


def comms2(ctx, n):
    """Exchange (both send at once), then both return what they received.

    The returned message lands in the sender's own send buffer, so check mode
    can verify both legs: the receive buffer holds the partner's data and the
    send buffer holds this rank's own data after its round trip.
    """
    comm = ctx.comm
    isend, recv = comm.Isend, comm.Recv
    partner = 1 - ctx.rank
    items = ctx.each(n, ctx.send_specs(), ctx.recv_specs())
    t0 = MPI.Wtime()
    for s, r in items:
        req = isend(s, partner, 1)
        recv(r, partner, 1)
        req.Wait()
        req = isend(r, partner, 2)
        recv(s, partner, 2)
        req.Wait()
    return (MPI.Wtime() - t0) / n


def check_comms1(ctx, n):
    # Rank 0 gets its own message back; rank 1 holds rank 0's message.
    origin = ctx.members[0]
    exp = buffers.pattern(origin, ctx.x, ctx.bench.dtype)
    return check_slots(ctx, n, lambda k: [(0, exp)])


def check_comms2(ctx, n):
    partner = buffers.pattern(ctx.members[1 - ctx.rank], ctx.x, ctx.bench.dtype)
    own = buffers.pattern(ctx.world_rank, ctx.x, ctx.bench.dtype)
    got = check_slots(ctx, n, lambda k: [(0, partner)])
    back = check_slots(ctx, n, lambda k: [(0, own)], buf=ctx.sbuf, stride=ctx.bufs.send_stride)
    return worst([got, back])
