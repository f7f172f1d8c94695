"""Seed 002 §5.2: rank 0 computes a fixed Q while 1..3 neighbours stream
BIGSIZE-byte messages through it to other neighbours (the seed's test 8:
node 1 to 2, 4 to 8, 16 to 32, forwarded by node 0's operating system).
Three roles: the forwarding rank 0, which computes one unit of Q at a time
and forwards each arrived message between units (MPI has no forwarding below
the application); the sources 1..k, which keep WINDOW messages in flight and
time the period between acknowledgements; the sinks k+1..2k, which
acknowledge each message to its source directly, as the seed's receivers do."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from mpi4py import MPI

from commbench.compute import Calibration, ComputeLoop

if TYPE_CHECKING:
    from commbench.suites.overhead.shared import Plumbing

BIGSIZE = 2000  # seed 002 §5.2 stream message size
WINDOW = 3  # messages each stream keeps in flight (seed Appendix A, test 8)
T_DATA, T_STOP, T_DONE, T_DUMMY, T_ACK = 31, 32, 33, 34, 35


def interference(drv: Plumbing, q: ComputeLoop, cal: Calibration, kind: str) -> None:
    """Rank 0 computes a fixed Q while k = 1..3 streams pass through it: source rank
    i sends to rank 0, which forwards each message to sink rank k+i between
    compute units (polling with Testsome); the sink acknowledges to the source.
    Each stream keeps two of rank 0's channels busy (in from the source, out to
    the sink), so k streams are the seed's 2, 4 and 6 active channels."""
    units = max(10, round(drv.st.stream_s / cal.unit_s))
    streams = min(3, (drv.size - 1) // 2)
    for k in range(1, streams + 1):
        base = _stream_round(drv, q, 0, units)
        drv.settle()
        loaded = _stream_round(drv, q, k, units)
        drv.settle()
        got = drv.comm.gather(loaded if 1 <= drv.rank <= k else None, root=0)
        if drv.rank == 0:
            periods = [g[0] for g in got[1 : k + 1]]
            msgs = [g[1] for g in got[1 : k + 1]]
            drv.emit(
                "interference",
                BIGSIZE,
                [loaded[0]],
                {
                    "q": kind,
                    "streams": k,
                    "channels": 2 * k,
                    "units": units,
                    "t_base_s": base[0],
                    "t_loaded_s": loaded[0],
                    "slowdown": loaded[0] / base[0],
                    "period_us": [p * 1e6 for p in periods],
                    "messages": msgs,
                    "forwarded": loaded[1],
                },
                np_=2 * k + 1,
            )


def _stream_round(drv: Plumbing, q, k: int, units: int):
    """One round with k streams (k = 0: rank 0's baseline, nobody streams).
    Rank 0 returns (timed seconds, messages forwarded), a source rank (seconds
    per message, messages counted), the others None."""
    r = drv.rank
    if r == 0:
        return _forward(drv.comm, drv.w, q, k, units)
    if r <= k:
        return _source(drv.comm, drv.w, sink=r + k)
    if r <= 2 * k:
        _sink(drv.comm, source=r - k)
    return None


def _forward(comm, w, q, k: int, units: int):
    """Rank 0: the timed Q, forwarding what arrived from source i to sink k+i
    after each unit; then stop the sources and forward until each has sent T_DONE,
    which goes on to its sink."""
    bufs = [np.zeros(BIGSIZE, np.uint8) for _ in range(max(k, 1))]
    stats = [MPI.Status() for _ in range(max(k, 1))]
    if k == 0:  # the same polling on a receive that never completes
        reqs = [comm.Irecv([bufs[0], MPI.BYTE], 0, T_DUMMY)]
    else:
        reqs = [comm.Irecv([bufs[i], MPI.BYTE], i + 1, MPI.ANY_TAG) for i in range(k)]
    testsome, send, irecv, run = MPI.Request.Testsome, comm.Send, comm.Irecv, q.run
    forwarded = 0
    t0 = w()
    for _ in range(units):
        run(1)
        idx = testsome(reqs, stats)
        if idx:
            for i in idx:
                send([bufs[i], MPI.BYTE], k + i + 1, T_DATA)
                reqs[i] = irecv([bufs[i], MPI.BYTE], i + 1, MPI.ANY_TAG)
                forwarded += 1
    t1 = w()
    if k == 0:
        reqs[0].Cancel()
        reqs[0].Wait()
        return t1 - t0, 0
    for i in range(k):
        send([bufs[i][:1], MPI.BYTE], i + 1, T_STOP)
    done = 0
    st = MPI.Status()
    while done < k:
        i = MPI.Request.Waitany(reqs, st)
        tag = st.Get_tag()
        send([bufs[i], MPI.BYTE] if tag == T_DATA else [bufs[i][:1], MPI.BYTE], k + i + 1, tag)
        if tag == T_DATA:
            reqs[i] = irecv([bufs[i], MPI.BYTE], i + 1, MPI.ANY_TAG)
        else:  # T_DONE: this stream is drained up to here, and its sink told
            done += 1
    return t1 - t0, forwarded


def _source(comm, w, sink: int):
    """A source: WINDOW messages in flight through rank 0, one more for each the sink
    acknowledges, until rank 0 says T_STOP; then T_DONE, and wait for the last acks."""
    sb = np.ones(BIGSIZE, np.uint8)
    ack = np.zeros(1, np.uint8)
    st = MPI.Status()
    sent = back = counted = 0
    stopped = False
    t_start = w()
    t_stop = t_start
    for _ in range(WINDOW):
        comm.Send([sb, MPI.BYTE], 0, T_DATA)
        sent += 1
    while not (stopped and back == sent):
        comm.Recv([ack, MPI.BYTE], MPI.ANY_SOURCE, MPI.ANY_TAG, st)
        if st.Get_source() == sink:
            back += 1
            if not stopped:
                comm.Send([sb, MPI.BYTE], 0, T_DATA)
                sent += 1
        else:  # T_STOP from rank 0
            t_stop, counted, stopped = w(), back, True
            comm.Send([sb[:1], MPI.BYTE], 0, T_DONE)
    return (t_stop - t_start) / max(counted, 1), counted


def _sink(comm, source: int) -> None:
    """A sink: receive what rank 0 forwards, acknowledge each to its source, until T_DONE."""
    rb = np.zeros(BIGSIZE, np.uint8)
    st = MPI.Status()
    while True:
        comm.Recv([rb, MPI.BYTE], 0, MPI.ANY_TAG, st)
        if st.Get_tag() != T_DATA:
            return
        comm.Send([rb[:1], MPI.BYTE], source, T_ACK)
