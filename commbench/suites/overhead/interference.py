"""Seed 002 §5.2: rank 0 computes a fixed Q while 1..3 neighbours stream
BIGSIZE-byte messages through it. Two roles: the forwarding rank 0, which
computes one unit of Q at a time and forwards each arrived message back
between units, and the streaming ranks 1..k, which keep WINDOW messages in
flight and time the period between messages coming back."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from mpi4py import MPI

from commbench.compute import Calibration, ComputeLoop

if TYPE_CHECKING:
    from commbench.suites.overhead.driver import Driver

BIGSIZE = 2000  # seed 002 §5.2 stream message size
WINDOW = 3  # messages each stream keeps in flight (seed Appendix A, test 8)
T_DATA, T_STOP, T_DONE, T_DUMMY = 31, 32, 33, 34


def interference(drv: Driver, q: ComputeLoop, cal: Calibration, kind: str) -> None:
    """Rank 0 computes a fixed Q while 0..3 neighbours stream messages through
    it (it forwards each back between compute units, polling with Testsome)."""
    units = max(10, round(drv.st.stream_s / cal.unit_s))
    streams = min(3, drv.size - 1)
    for k in range(1, streams + 1):
        base = _stream_round(drv, q, 0, units)
        drv.settle()
        loaded = _stream_round(drv, q, k, units)
        drv.settle()
        got = drv.comm.gather(loaded if 1 <= drv.rank <= k else None, root=0)
        if drv.rank == 0:
            periods = [g[0] for g in got[1 : k + 1]]
            msgs = [g[1] for g in got[1 : k + 1]]
            drv.emit("interference", BIGSIZE, [loaded[0]], {
                "q": kind, "streams": k, "units": units, "t_base_s": base[0], "t_loaded_s": loaded[0],
                "slowdown": loaded[0] / base[0], "period_us": [p * 1e6 for p in periods],
                "messages": msgs, "forwarded": loaded[1]}, np_=k + 1)


def _stream_round(drv: Driver, q, k: int, units: int):
    """One round with k streams (k = 0: rank 0's baseline, nobody streams).
    Rank 0 returns (timed seconds, messages forwarded), a streaming rank
    (seconds per message, messages counted), the others None."""
    r = drv.rank
    if r == 0:
        return _forward(drv.comm, drv.w, q, k, units)
    if r <= k:
        return _stream(drv.comm, drv.w)
    return None


def _forward(comm, w, q, k: int, units: int):
    """Rank 0: the timed Q, forwarding what arrived after each unit; then stop
    the streams and forward until each has answered T_DONE."""
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
                send([bufs[i], MPI.BYTE], i + 1, T_DATA)
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
        if st.Get_tag() == T_DATA:
            send([bufs[i], MPI.BYTE], i + 1, T_DATA)
            reqs[i] = irecv([bufs[i], MPI.BYTE], i + 1, MPI.ANY_TAG)
        else:  # T_DONE: this stream is drained up to here
            done += 1
    return t1 - t0, forwarded


def _stream(comm, w):
    """A streaming rank: WINDOW messages in flight to rank 0, one more sent for
    each that comes back until T_STOP; then T_DONE, and wait for the rest."""
    sb = np.ones(BIGSIZE, np.uint8)
    rb = np.zeros(BIGSIZE, np.uint8)
    st = MPI.Status()
    sent = back = counted = 0
    stopped = False
    t_start = w()
    t_stop = t_start
    for _ in range(WINDOW):
        comm.Send([sb, MPI.BYTE], 0, T_DATA)
        sent += 1
    while True:
        comm.Recv([rb, MPI.BYTE], 0, MPI.ANY_TAG, st)
        if st.Get_tag() == T_DATA:
            back += 1
            if not stopped:
                comm.Send([sb, MPI.BYTE], 0, T_DATA)
                sent += 1
        else:
            t_stop, counted, stopped = w(), back, True
            comm.Send([sb[:1], MPI.BYTE], 0, T_DONE)
        if stopped and back == sent:
            break
    return (t_stop - t_start) / max(counted, 1), counted
