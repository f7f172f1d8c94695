"""The calibrated compute loop Q of seed 002 (Krumme and Greenfield), in numpy.

The seed runs a chosen loop Q whenever timed communication is in progress,
in an integer variant (adds, multiplies: the Fibonacci-like qint) and a
floating-point one (qfloat), and measures communication costs as the extra
time Q takes. In Python a scalar loop would be interpreter dispatch, not
arithmetic, and its jitter would swamp microsecond effects. So one *unit* of
Q is three numpy ufunc calls over arrays of 4096 elements (32 KiB each, five
arrays: cache resident), ~10-15 µs of arithmetic per unit against well under
1 µs of call overhead per ufunc:

  int:   k = i + j; t = k*k; acc += t; (i, j, k) = (j, k, i)    (int64, wraps)
  float: t = x*c; x = t + b; acc += x*x                          (float64, bounded)

Q(units) runs `units` units. `calibrate` measures, without communication,
the seconds one Q(units) takes (best estimate: mean of repeated runs) and the
cost of reading the timer, as the seed's node 0 does before its tests.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass

import numpy as np
from mpi4py import MPI

from commbench.policy import COMPUTE_KINDS as KINDS

LENGTH = 4096


class ComputeLoop:
    def __init__(self, kind: str = "int", length: int = LENGTH):
        if kind not in KINDS:
            raise ValueError(f"Q kind must be one of {KINDS}, got {kind!r}")
        self.kind = kind
        if kind == "int":
            self.i = np.full(length, 2, np.int64)
            self.j = np.full(length, 3, np.int64)
            self.k = np.empty(length, np.int64)
            self.t = np.empty(length, np.int64)
            self.acc = np.zeros(length, np.int64)
            self.run = self._run_int
        else:
            self.x = np.linspace(0.5, 1.5, length)
            self.t = np.empty(length)
            self.acc = np.zeros(length)
            self.c = np.float64(0.999)
            self.b = np.float64(0.001)
            self.run = self._run_float

    def _run_int(self, units: int) -> None:
        add, mul = np.add, np.multiply
        i, j, k, t, acc = self.i, self.j, self.k, self.t, self.acc
        for _ in range(units):
            add(i, j, out=k)
            mul(k, k, out=t)
            add(acc, t, out=acc)
            i, j, k = j, k, i
        self.i, self.j, self.k = i, j, k

    def _run_float(self, units: int) -> None:
        add, mul = np.add, np.multiply
        x, t, acc, c, b = self.x, self.t, self.acc, self.c, self.b
        for _ in range(units):
            mul(x, c, out=t)
            add(t, b, out=x)
            mul(x, x, out=t)
            add(acc, t, out=acc)
        acc *= 0.5  # keep acc finite whatever the number of units


@dataclass(frozen=True)
class Calibration:
    kind: str
    unit_s: float  # seconds per unit
    comp_units: int  # the seed's COMPTIME
    send_units: int  # the seed's SENDTIME = COMPTIME * 5 / 25
    comptime: float  # measured seconds of Q(comp_units) without communication
    sendtime: float  # measured seconds of Q(send_units)
    comptime_std: float
    timer: float  # seconds one MPI.Wtime() call costs
    comptime_median: float = 0.0  # medians and minima, for --statistic median|min
    sendtime_median: float = 0.0
    comptime_min: float = 0.0
    sendtime_min: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def timer_cost(calls: int = 1200, tries: int = 5) -> float:
    """Seconds per MPI.Wtime() call (the seed's 12 x NOTIMES ntime() calls); the
    best of a few tries, since a preempted try measures the scheduler."""
    w = MPI.Wtime
    best = float("inf")
    for _ in range(tries):
        t0 = w()
        for _ in range(calls // 12):
            w()
            w()
            w()
            w()
            w()
            w()
            w()
            w()
            w()
            w()
            w()
            w()  # noqa: E702 - unrolled timer calls
        best = min(best, (w() - t0) / (calls + 1))
    return best


def calibrate(q: ComputeLoop, comp_target_s: float, runs: int = 30) -> Calibration:
    """Size Q(COMPTIME) to about comp_target_s and measure it without communication."""
    w = MPI.Wtime
    q.run(50)  # warm caches and the allocator
    tries = []
    for _ in range(5):  # the fastest try sizes Q: the others were preempted
        t0 = w()
        q.run(40)
        tries.append((w() - t0) / 40)
    unit = max(min(tries), 1e-9)
    comp_units = max(5, round(comp_target_s / unit))
    send_units = max(1, round(comp_units * 5 / 25))
    tc = timer_cost()
    comp, send = [], []
    for _ in range(runs):
        t0 = w()
        q.run(comp_units)
        t1 = w()
        q.run(send_units)
        t2 = w()
        comp.append(t1 - t0 - tc)
        send.append(t2 - t1 - tc)
    # Plain means, like the seed and like the experiments that subtract them.
    mean = sum(comp) / runs
    std = (sum((v - mean) ** 2 for v in comp) / max(1, runs - 1)) ** 0.5
    return Calibration(
        q.kind,
        mean / comp_units,
        comp_units,
        send_units,
        mean,
        sum(send) / runs,
        std,
        tc,
        statistics.median(comp),
        statistics.median(send),
        min(comp),
        min(send),
    )
