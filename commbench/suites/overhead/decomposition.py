"""Seed 002's tests 1-6 for one message size of one trial: the measured
combinations R, A+U, F+S (tests 2-4), R+S (test 5), 2(F+E+U) (test 6) and
the echo chain at distances 1..k (test 1), each a function taking the
Plumbing; rank 0 times, rank 1 echoes, rank 2 receives the forwarded message
of R+S, ranks 1..d-1 forward the echo at distance d."""

from __future__ import annotations

import statistics
import time
from typing import TYPE_CHECKING

import numpy as np
from mpi4py import MPI

from commbench.compute import Calibration, ComputeLoop

if TYPE_CHECKING:
    from commbench.suites.overhead.shared import Plumbing

T_RAUFS, T_RS, T_FEU, T_ECHO = 21, 22, 23, 24


# -- seed §3: one size of one trial ------------------------------------------
def decomposition(
    drv: Plumbing,
    q: ComputeLoop,
    cal: Calibration,
    every: list[dict],
    kind: str,
    trial: int,
    n: int,
) -> None:
    base = {"q": kind, "trial": trial}
    buf = np.zeros(max(n, 1), np.uint8)
    spec = [buf[:n], MPI.BYTE]
    raufs = exp_raufs(drv, q, cal, spec)
    drv.settle()
    rs = exp_rs(drv, q, cal, spec, n)
    drv.settle()
    feu = exp_feu(drv, q, cal, every, spec)
    drv.settle()
    echoes, idle = [], []
    for d in range(1, drv.distance + 1):
        echoes.append(exp_echo(drv, q, cal, every, spec, d))
        drv.settle()
    for d in range(1, drv.distance + 1):  # seed test 7 (§5.1): the same chains, nobody computing
        idle.append(exp_echo(drv, q, cal, every, spec, d, idle=True))
        drv.settle()
    if drv.rank == 0:
        r, au, fs, bc, bs = raufs
        mine = every[0]
        drv.emit("Q(COMPTIME)", n, bc, base)
        drv.emit("Q(SENDTIME)", n, bs, base)
        drv.emit("R", n, r, base, calib=(mine, "comptime"))
        drv.emit("A+U", n, au, base)
        drv.emit("F+S", n, fs, base, calib=(mine, "sendtime"))
        drv.emit("R+S", n, rs, base, np_=3, calib=(mine, "comptime"))
        drv.emit("2(F+E+U)", n, feu, base, calib=(every[1], "comptime"))
        for name, chains in (("echo", echoes), ("echo_idle", idle)):
            for d, (t, fwd) in enumerate(chains, 1):
                drv.emit(
                    name,
                    n,
                    t,
                    dict(
                        base,
                        distance=d,
                        forwarding_us=fwd[0] * 1e6,
                        forwarding_median_us=fwd[1] * 1e6,
                        forwarding_min_us=fwd[2] * 1e6,
                    ),
                    np_=d + 1,
                    calib=(every[d], "sendtime") if name == "echo" else None,
                )


def exp_raufs(drv: Plumbing, q, cal, spec):
    """Seed tests 2-4 in one loop: R, A+U and F+S on rank 0, rank 1 echoes."""
    comm, w, reps = drv.comm, drv.w, drv.st.reps
    su, cu, run = cal.send_units, cal.comp_units, q.run
    send, recv = comm.Send, comm.Recv
    R, AU, FS, BC, BS = [], [], [], [], []
    if drv.rank == 0:
        for a in range(reps + 1):
            send(spec, 1, T_RAUFS)
            run(su)  # let the output clear
            t0 = w()
            run(cu)  # the echo arrives during this
            t1 = w()
            recv(spec, 1, T_RAUFS)  # already arrived: A + U
            t2 = w()
            send(spec, 1, T_RAUFS)
            run(su)
            t3 = w()
            recv(spec, 1, T_RAUFS)
            # Paired baseline (nothing in flight now; rank 1 waits for the next
            # round): the same Q(COMPTIME) and Q(SENDTIME), for --baseline paired.
            t4 = w()
            run(cu)
            t5 = w()
            run(su)  # also the seed's closing Q(SENDTIME)
            t6 = w()
            if a:
                R.append(t1 - t0 - cal.comptime - cal.timer)
                AU.append(t2 - t1 - cal.timer)
                FS.append(t3 - t2 - cal.sendtime - cal.timer)
                BC.append(t5 - t4 - cal.timer)
                BS.append(t6 - t5 - cal.timer)
    elif drv.rank == 1:
        for _ in range(reps + 1):
            recv(spec, 0, T_RAUFS)
            run(su)
            run(su)  # make sure the return lands in rank 0's timed Q
            send(spec, 0, T_RAUFS)
            run(su)
            recv(spec, 0, T_RAUFS)
            run(su)
            run(su)  # make sure rank 0's F+S timing is over
            send(spec, 0, T_RAUFS)
    return R, AU, FS, BC, BS


def exp_rs(drv: Plumbing, q, cal, spec, n):
    """Seed test 5: a message comes in (from rank 1) and one goes out (to rank 2)
    through rank 0 while it computes; the excess of Q is R + S. MPI forwards
    only through the application, so the outgoing Isend is started just
    before the timed Q (its F untimed) and its transfer, like the incoming
    one, falls into Q."""
    comm, w, reps = drv.comm, drv.w, drv.st.reps
    su, cu, run = cal.send_units, cal.comp_units, q.run
    out = np.zeros(max(n, 1), np.uint8)
    ospec = [out[:n], MPI.BYTE]
    RS = []
    if drv.rank == 0:
        for a in range(reps + 1):
            comm.Send(spec, 1, T_RS)
            run(su)
            req = comm.Isend(ospec, 2, T_RS)
            t0 = w()
            run(cu)
            t1 = w()
            comm.Recv(spec, 1, T_RS)
            req.Wait()
            if a:
                RS.append(t1 - t0 - cal.comptime - cal.timer)
            run(su)
    elif drv.rank == 1:
        for _ in range(reps + 1):
            comm.Recv(spec, 0, T_RS)
            run(su)
            run(su)
            comm.Send(spec, 0, T_RS)
    elif drv.rank == 2:
        for _ in range(reps + 1):
            req = comm.Irecv(ospec, 0, T_RS)
            while not req.Test():
                time.sleep(5e-5)
    return RS


def _round_trips(drv: Plumbing, q, cal, spec, tag, x, idle: bool = False):
    """Rank 0's side of tests 1 and 6: send to rank 1, compute Q(SENDTIME),
    receive the echo; each round trip minus the partner's known compute x
    and the timer cost (the first, warm-up round is dropped). idle (test 7):
    no Q at all, x = 0."""
    comm, w, su = drv.comm, drv.w, cal.send_units
    run = _nothing if idle else q.run
    out = []
    for a in range(drv.st.reps + 1):
        t0 = w()
        comm.Send(spec, 1, tag)
        run(su)
        comm.Recv(spec, 1, tag)
        t1 = w()
        if a:
            out.append(t1 - t0 - x - cal.timer)
        run(su)
    return out


def _nothing(units: int) -> None:
    """Test 7's Q: none (the processor waits in MPI instead of computing)."""


def exp_feu(drv: Plumbing, q, cal, every, spec):
    """Seed test 6: rank 0 writes, computes, reads before the echo arrives;
    rank 1 (read posted in advance) computes X = its Q(COMPTIME), echoes."""
    comm, reps = drv.comm, drv.st.reps
    su, cu, run = cal.send_units, cal.comp_units, q.run
    out = []
    if drv.rank == 0:
        out = _round_trips(drv, q, cal, spec, T_FEU, every[1]["comptime"])
    elif drv.rank == 1:
        for _ in range(reps + 1):
            comm.Recv(spec, 0, T_FEU)
            run(cu)
            comm.Send(spec, 0, T_FEU)
            run(su)
    return out


def exp_echo(drv: Plumbing, q, cal, every, spec, d, idle: bool = False):
    """Seed test 1 at distance d: rank 0 -> 1 -> ... -> d and back. Ranks
    1..d-1 forward: Probe (the message has arrived), then Recv + Send, timed;
    the forwarding time is removed from T_d (the seed's OS forwarding had no
    F, A or U on intermediate nodes). Returns (T_d samples, (mean, median)
    forwarding seconds summed over the forwarders). idle: the seed's test 7
    (§5.1), every processor idle instead of computing: no Q anywhere, X = 0."""
    comm, w, reps = drv.comm, drv.w, drv.st.reps
    su, run = cal.send_units, (_nothing if idle else q.run)
    r = drv.rank
    T: list[float] = []
    fwd = (0.0, 0.0, 0.0)
    if r == 0:
        T = _round_trips(drv, q, cal, spec, T_ECHO, 0.0 if idle else every[d]["sendtime"], idle)
    elif r < d:
        probe, recv, send = comm.Probe, comm.Recv, comm.Send
        work = []
        for a in range(reps + 1):
            probe(r - 1, T_ECHO)
            ta = w()
            recv(spec, r - 1, T_ECHO)
            send(spec, r + 1, T_ECHO)
            tb = w()
            probe(r + 1, T_ECHO)
            tc = w()
            recv(spec, r + 1, T_ECHO)
            send(spec, r - 1, T_ECHO)
            td = w()
            if a:
                work.append(tb - ta + td - tc - 2 * cal.timer)
        fwd = (statistics.fmean(work), statistics.median(work), min(work))
    elif r == d:
        for _ in range(reps + 1):
            comm.Recv(spec, d - 1, T_ECHO)
            run(su)
            comm.Send(spec, d - 1, T_ECHO)
            run(su)
    drv.settle()
    fwds = comm.gather(fwd, root=0)
    if r != 0:
        return T, (0.0, 0.0, 0.0)
    return T, tuple(sum(f[i] for f in fwds) for i in range(3))
