"""LogGP the way Netgauge measures it: parametrised round trips PRTT(n,d,s)
between two roles, the client (rank 0, which times the round trips and
emits the records) and the server (rank 1, which answers each round and
times its own receives for o_r)."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

import numpy as np
from mpi4py import MPI

if TYPE_CHECKING:
    from commbench.suites.overhead.shared import Plumbing

T_LOGGP = 25


def loggp(drv: Plumbing, trial: int, n: int) -> None:
    """One size of one trial: PRTT(1,0,s), PRTT(n,0,s), PRTT(n,d,s) and o_r."""
    buf = np.zeros(max(n, 1), np.uint8)
    spec = [buf[:n], MPI.BYTE]
    if drv.rank == 0:
        _client_side(drv, spec, trial, n)
    elif drv.rank == 1:
        _server_side(drv, spec)
    drv.settle()


def _spin(w, sec: float) -> None:
    end = w() + sec
    while w() < end:
        pass


def _client(comm, w, spec, reps: int, count: int, d: float) -> list[float]:
    """PRTT(count, d, s): count messages d apart, then the answer; timed."""
    out = []
    for a in range(reps + 1):
        t0 = w()
        comm.Send(spec, 1, T_LOGGP)
        for _ in range(count - 1):
            if d:
                _spin(w, d)
            comm.Send(spec, 1, T_LOGGP)
        comm.Recv(spec, 1, T_LOGGP)
        t1 = w()
        if a:
            out.append(t1 - t0)
    return out


def _server(comm, spec, reps: int, count: int) -> None:
    for _a in range(reps + 1):
        for _ in range(count):
            comm.Recv(spec, 0, T_LOGGP)
        comm.Send(spec, 0, T_LOGGP)


def _client_side(drv: Plumbing, spec, trial: int, n: int) -> None:
    """Rank 0: the three PRTT rounds, d for the server, the o_r round's
    messages back to back; then the server's o_r and the records."""
    comm, w, reps, m = drv.comm, drv.w, drv.st.reps, drv.st.loggp_n
    res = {}
    res["prtt_1_0"] = _client(comm, w, spec, reps, 1, 0.0)
    res["prtt_n_0"] = _client(comm, w, spec, reps, m, 0.0)
    d = statistics.median(res["prtt_1_0"])
    comm.send(d, 1, T_LOGGP)
    res["prtt_n_d"] = _client(comm, w, spec, reps, m, d)
    # o_r: the client sends back to back, the server waits d before each
    # receive so the message is surely there, and times the receives.
    for _ in range(reps + 1):
        for _ in range(m):
            comm.Send(spec, 1, T_LOGGP)
        comm.Recv(spec, 1, T_LOGGP)
    o_r = comm.recv(source=1, tag=T_LOGGP)
    base = {"trial": trial, "n": m, "d_us": d * 1e6}
    for key in ("prtt_1_0", "prtt_n_0", "prtt_n_d"):
        drv.emit(key, n, res[key], base)
    drv.emit("o_r", n, o_r, base)


def _server_side(drv: Plumbing, spec) -> None:
    """Rank 1: answer the three PRTT rounds, then time the receives of the
    o_r round (each after waiting d) and send their means to the client."""
    comm, w, reps, m = drv.comm, drv.w, drv.st.reps, drv.st.loggp_n
    _server(comm, spec, reps, 1)
    _server(comm, spec, reps, m)
    d = comm.recv(source=0, tag=T_LOGGP)
    _server(comm, spec, reps, m)
    o_r = []
    tm = MPI.Wtime
    for a in range(reps + 1):
        comm.Recv(spec, 0, T_LOGGP)
        _spin(w, d)
        total = 0.0
        for _ in range(m - 1):
            _spin(w, d)
            t0 = tm()
            comm.Recv(spec, 0, T_LOGGP)
            total += tm() - t0
        comm.Send(spec, 0, T_LOGGP)
        if a:
            o_r.append(total / (m - 1))
    comm.send(o_r, 0, T_LOGGP)
