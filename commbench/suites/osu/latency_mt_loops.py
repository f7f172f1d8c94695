"""latency_mt's threads, their loop, its row and extras (the descriptor, -t's threads and
the procedure: latency_mt.py, which names these as base.Lazy)."""

from __future__ import annotations

import threading

from mpi4py import MPI

from commbench.suites.osu.latency_mt import threads
from commbench.suites.osu.spec import latency_row

TAG_THERE, TAG_BACK, TAG_MAX = 1, 2, 32000


def prepare(ctx, size: int) -> None:
    ctx.ints.senders, ctx.ints.receivers = threads(ctx.s)


def loop(ctx, n: int, times) -> None:
    senders, receivers = threads(ctx.s)
    k = senders if ctx.rank == 0 else receivers
    comm, p, count, wtime = ctx.comm, ctx.peer, ctx.count, MPI.Wtime
    timed = times is not None and ctx.rank == 0

    def work(j: int) -> None:
        for i in range(j, n, k):
            there = i % TAG_MAX if senders > 1 else TAG_THERE
            back = there if senders > 1 else TAG_BACK
            if ctx.rank == 0:
                t0 = wtime()
                comm.Send([ctx.sbuf, count, ctx.mpi_type], p, there)
                comm.Recv([ctx.rbuf, count, ctx.mpi_type], p, back)
                if timed:
                    times[i] = wtime() - t0
            else:
                comm.Recv([ctx.rbuf, count, ctx.mpi_type], p, there)
                comm.Send([ctx.sbuf, count, ctx.mpi_type], p, back)

    pool = [threading.Thread(target=work, args=(j,), daemon=True) for j in range(k)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()


def row(ctx, s, times) -> dict:
    return latency_row(times, 2, s.percentiles)


def extra(ctx, s, ex) -> dict:
    senders, receivers = threads(s)
    return {"sender_threads": senders, "receiver_threads": receivers}
