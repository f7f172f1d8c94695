"""COMMS: Hockney's COMMS1 (pingpong) and COMMS2 (message exchange), seed 000.

Both run over the standard size sweep (0, 1, 2, 4, … 4 MiB) between two
processes and are meant to be read with the Hockney model
t = (n + n_1/2) / r_inf (commbench.models.hockney; `commbench run COMMS1
COMMS2 --fit`).

COMMS1: the master sends n bytes, the slave receives them and immediately
returns them; half the round trip is the time t of one message (seed 000).

COMMS2: both processes send n bytes to each other at the same time, wait for
the partner's message, and then both return what they received. Seed 000 says
only "simultaneously send messages to each other and return them"; the
original Genesis COMMS2 (Hockney, release 2.0, 1992) records one QUARTER of the
time of this exchange-and-return as t, "because four messages are sent during
the exchange". We follow Genesis: the reported time is round/4 and the
turnover is 1, so the rate n/t is the aggregate rate of both directions
(4n bytes in one round) and a link that carries both directions at once shows
a higher r_inf than COMMS1, as the seed says it should.
"""

from __future__ import annotations

from mpi4py import MPI

from commbench import buffers
from commbench.suites.base import TWO, Benchmark, Family, Kind, same
from commbench.suites.verify import check_slots, worst

F = "comms"


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


def _check_comms1(ctx, n):
    # Rank 0 gets its own message back; rank 1 holds rank 0's message.
    origin = ctx.members[0]
    exp = buffers.pattern(origin, ctx.x, ctx.bench.dtype)
    return check_slots(ctx, n, lambda k: [(0, exp)])


def _check_comms2(ctx, n):
    partner = buffers.pattern(ctx.members[1 - ctx.rank], ctx.x, ctx.bench.dtype)
    own = buffers.pattern(ctx.world_rank, ctx.x, ctx.bench.dtype)
    got = check_slots(ctx, n, lambda k: [(0, partner)])
    back = check_slots(ctx, n, lambda k: [(0, own)], buf=ctx.sbuf, stride=ctx.bufs.send_stride)
    return worst([got, back])


BENCHMARKS = (
    Benchmark(
        "COMMS1",
        F,
        Kind.SINGLE,
        comms1,
        "pingpong: half the round trip of an n-byte message (Hockney r_inf, n_1/2)",
        buffers=same,
        time_factor=0.5,
        procs=TWO,
        expected=_check_comms1,
        comments=("t = half the round-trip time; rate = n / t",),
        native="comms1",
        fit=True,
    ),
    Benchmark(
        "COMMS2",
        F,
        Kind.SINGLE,
        comms2,
        "exchange: both send at once and return; t = a quarter of the round (4 messages)",
        buffers=same,
        time_factor=0.25,
        procs=TWO,
        expected=_check_comms2,
        comments=(
            "t = one quarter of exchange-and-return (4 messages, Genesis COMMS2);",
            "rate = n / t = aggregate rate of both directions",
        ),
        native="comms2",
        fit=True,
    ),
)

FAMILY = Family(
    name=F,
    title="COMMS",
    part="COMMS part",
    benchmarks=BENCHMARKS,
    description=(
        "Hockney's COMMS1 pingpong and COMMS2 exchange (seed 000), for r_inf and n_1/2 fits"
    ),
    aliases=("COMMS",),
    fits=True,  # COMMS1/COMMS2 print r_inf, n_1/2, t0 and pi0 after each table (seed 000)
)
