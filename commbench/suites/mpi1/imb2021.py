"""What IMB 2021 added to IMB-MPI1: Uniband, Biband, Reduce_local, Reduce_scatter_block.

Semantics as IMB 2021.11 runs them (its binary in ../shared/peers/imb, checked
side by side by benchmarks/imb_side_by_side.py):

- Uniband: rank r < NP/2 sends a window of -window_size messages (Isend ×W,
  Waitall) to r + NP/2, which receives them (Irecv ×W, Waitall) and answers
  with a 1-byte ack; one repetition is one window. Biband: both sides Irecv ×W
  then Isend ×W, Waitall, then the ack. Rows: Mbytes/sec and Msg/sec from the
  slowest rank's time, W·NP/2 messages per repetition (×2 for Biband).
  IMB 2021 at an odd NP reports NP−1 processes and its MPI_Finalize aborts on
  an unmatched message; here the last rank of an odd NP sits idle.
- Reduce_local: MPI_Reduce_local of X/4 floats, SUM, into the receive buffer;
  no communication (the time of the reduction loop of each rank).
- Reduce_scatter_block: MPI_Reduce_scatter_block of NP·X/4 floats, SUM, X/4
  floats to each rank (IMB 2021's counts: its receive count is X/4).
"""

from __future__ import annotations

from mpi4py import MPI

from commbench import buffers
from commbench.suites.message_specs import lean_recv, lean_send
from commbench.suites.mpi1 import collectives
from commbench.suites.verify import check_slots

NO_TIME = -1.0  # the idle last rank of an odd NP: left out of the row's times
ACK = bytearray(1)


def _peers(ctx) -> tuple[int, int | None]:
    """(pairs, my partner or None when idle): rank r < NP/2 pairs with r + NP/2."""
    pairs = ctx.size // 2
    me = ctx.rank
    if me >= 2 * pairs:
        return pairs, None
    return pairs, me + pairs if me < pairs else me - pairs


def windowed(bidirectional: bool):
    def kernel(ctx, n):
        _, partner = _peers(ctx)
        if partner is None:
            return NO_TIME
        w = ctx.params.get("mpi1_window_size", 256)
        sends, recvs = lean_send(ctx), lean_recv(ctx)
        swin = [sends[k % len(sends)] for k in range(w)]  # message k of a window: slot k % slots
        rwin = [recvs[k % len(recvs)] for k in range(w)]
        comm, waitall, sender = ctx.comm, MPI.Request.Waitall, ctx.rank < partner
        isend, irecv, send, recv = comm.Isend, comm.Irecv, comm.Send, comm.Recv
        t0 = MPI.Wtime()
        for _ in range(n):
            if bidirectional:
                reqs = [irecv(r, partner, 1) for r in rwin] + [isend(s, partner, 1) for s in swin]
            elif sender:
                reqs = [isend(s, partner, 1) for s in swin]
            else:
                reqs = [irecv(r, partner, 1) for r in rwin]
            waitall(reqs)
            if sender:
                recv(ACK, partner, 1)
            else:
                send(ACK, partner, 1)
        return (MPI.Wtime() - t0) / n

    return kernel


def check_windowed(bidirectional: bool):
    def expected(ctx, n):
        _, partner = _peers(ctx)
        if partner is None or (not bidirectional and ctx.rank < partner):
            return None  # idle, or Uniband's sender: it receives nothing
        exp = buffers.pattern(ctx.members[partner], ctx.x, ctx.bench.dtype)
        used = min(ctx.slots, ctx.params.get("mpi1_window_size", 256))
        return check_slots(ctx, used, lambda k: [(0, exp)])

    return expected


def reduce_local(ctx, n):
    op, SUM = MPI.Op.Reduce_local, MPI.SUM
    items = ctx.each(n, lean_send(ctx, dtype=ctx.red_dtype), lean_recv(ctx, dtype=ctx.red_dtype))
    t0 = MPI.Wtime()
    for s, r in items:
        op(SUM, s, r)
    return (MPI.Wtime() - t0) / n


def check_reduce_local(ctx, n):
    """The timed loop accumulates into its receive slots over every run (warm-up,
    calibration, samples), so their contents say nothing checkable: one more
    untimed MPI_Reduce_local into a zeroed slot 0 must leave this rank's data."""
    s, r = lean_send(ctx, dtype=ctx.red_dtype)[0], lean_recv(ctx, dtype=ctx.red_dtype)[0]
    nbytes = ctx.x // ctx.red_width * ctx.red_width
    ctx.rbuf[:nbytes] = 0
    MPI.Op.Reduce_local(MPI.SUM, s, r)
    return buffers.deviation(ctx.rbuf[:nbytes], buffers.pattern(ctx.world_rank, nbytes), ctx.red_np)


def reduce_scatter_block(ctx, n):
    op, SUM = ctx.comm.Reduce_scatter_block, MPI.SUM
    items = ctx.each(
        n,
        lean_send(ctx, count=ctx.size * ctx.x, dtype=ctx.red_dtype),
        lean_recv(ctx, dtype=ctx.red_dtype),
    )
    t0 = MPI.Wtime()
    for s, r in items:
        op(s, r, SUM)
    return (MPI.Wtime() - t0) / n


def check_reduce_scatter_block(ctx, n):
    """Block j of the NP·X/4-float SUM goes to rank j (commbench.suites.collops)."""
    exp = collectives.pieces(ctx, "reduce_scatter_block")
    return check_slots(ctx, n, lambda k: exp, dtype=ctx.red_np)
