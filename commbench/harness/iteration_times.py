"""--per-iteration and --sync-start window: a row's repetitions timed one by one, on
each rank (the summary on world rank 0 is commbench.harness.iteration_summary).

Aligned (--per-iteration, barrier start): call i (Context.first = i: its slot and
root) is timed alone by the kernel itself, kernel(ctx, 1), so with the native
engine the timed region stays in C; a barrier (the harness's, ctx.barrier)
follows each call outside its time, so repetition i starts together on every
rank and its times on the ranks belong together. This is IMB 2021's -sync on,
for every eligible row, keeping each call's time.

Window (--sync-start window, collectives): the clocks are synchronized
(commbench.harness.clocksync); for every block of BLOCK calls rank 0 picks a
start time S in its clock and broadcasts it, and the block's call j
starts on every rank when its clock reaches S + j*W, converted to local time
with its offset; the window W is twice the slowest rank's median cycle of a
few warm-up calls plus four times the largest sync error. A rank that reaches a
start already past it marks the repetition late (ReproMPI's invalid
measurement); the blocks keep one late start (a rank descheduled for a
while) from making every later window of the row late. The time of a call on
a rank is its end in rank 0's time minus its start; its end is the first clock
reading at or after its start plus the kernel's own time of the call (the
harness's call overhead in between, the same in every repetition, is left
out). A second sync after the calls gives the drift, and ends are converted
by the line between the two syncs.

COMMBENCH_FAULT_TIMER_TICK (tests): every per-repetition time, and the timer
resolution, as a timer of that step would read them. COMMBENCH_FAULT_DESCHEDULE
(tests): the ranks it names sleep before each block's first start, as a rank
descheduled there would, so late starts show on a quiet machine too.
"""

from __future__ import annotations

import ctypes
import os
import statistics
import time
from typing import Any

import numpy as np
from mpi4py import MPI

from commbench import native, row_measurement
from commbench.harness import clocksync
from commbench.harness.context import Context

WARM = 7  # untimed calls that size the window
# seconds from rank 0's choice of the first start to it (the broadcast reaches every rank)
MARGIN = 2e-3
BLOCK = 16  # repetitions per broadcast start: a late start spoils at most the rest of its block
YIELD = 1e-4  # seconds before a start from which the wait spins without yielding the core
LEAD = 1e-4  # seconds from rank 0's choice of a later block's start to it, at least

_floors: dict[tuple[str, float], dict[str, float]] = {}


def _tick() -> float:
    return row_measurement.parse_tick(os.environ.get(row_measurement.TIMER_TICK_ENV, ""))


def _coarse(s: float, d: float, tick: float) -> float:
    """A duration d started at s, as a timer of step `tick` reads it."""
    return (np.floor((s + d) / tick) - np.floor(s / tick)) * tick


def timer_floor(engine: str) -> dict[str, float]:
    """This rank's timer resolution (the smallest non-zero difference of two MPI_Wtime
    readings in a row, as the engine reads them; and MPI_Wtick) and the cost of timing
    an empty region with the engine (the median of 1000), in µs; measured once."""
    tick = _tick()
    key = (engine, tick)
    if key not in _floors:
        spans = _empty_regions(engine, tick)
        steps = [s for s in spans if s > 0]
        _floors[key] = {
            "resolution": (min(steps) if steps else _step(tick)) * 1e6,
            "wtick": MPI.Wtick() * 1e6,
            "overhead": statistics.median(spans) * 1e6,
        }
    return _floors[key]


def _empty_regions(engine: str, tick: float) -> list[float]:
    """1000 empty timed regions: in C (kernels.c's cb_empty) for the native engine."""
    lib = native.library() if engine == "native" else None
    if lib is not None:
        lib.dll.cb_empty.restype = ctypes.c_double
        empty = lib.dll.cb_empty
    else:

        def empty() -> float:
            t0 = MPI.Wtime()
            return MPI.Wtime() - t0

    spans = []
    for _ in range(1000):
        s = MPI.Wtime() if tick else 0.0
        d = empty()
        spans.append(_coarse(s, d, tick) if tick else d)
    return spans


def _step(tick: float) -> float:
    """The clock's step where no empty region saw it move: read until it does (at most 0.2 s)."""
    read = MPI.Wtime if not tick else (lambda: float(np.floor(MPI.Wtime() / tick) * tick))
    deadline = time.monotonic() + 0.2
    first = last = read()
    while last == first and time.monotonic() < deadline:
        last = read()
    while time.monotonic() < deadline:
        now = read()
        if now != last:
            return now - last
    return max(last - first, MPI.Wtick())


def _spin(clock: clocksync.Clock, target: float) -> float:
    """Wait until the clock reaches target; the first reading at or after it."""
    while True:
        now = clock()
        left = target - now
        if left <= 0:
            return now
        if left > 2e-3:
            time.sleep(left - 1e-3)
        elif left > YIELD:
            os.sched_yield()  # an oversubscribed core runs the other ranks meanwhile


class RowTimer:
    """One row on one rank: every timed run's per-repetition times (seconds)."""

    def __init__(self, ctx: Context, engine: str, window: bool):
        self.engine = engine
        self.window = window
        self.tick = _tick()
        self.floor = timer_floor(engine)
        self.clock = clocksync.Clock(ctx.world_rank) if window else None
        faults = row_measurement.parse_deschedule(
            os.environ.get(row_measurement.DESCHEDULE_ENV, "")
        )
        self.descheduled = faults.get(ctx.world_rank, 0.0)
        self.runs: list[np.ndarray] = []
        self.late: list[np.ndarray] = []
        self.syncs: list[dict[str, float]] = []

    def timed(self, ctx: Context, kernel: Any, n: int) -> float:
        """n repetitions timed one by one; this rank's mean (the IMB columns). IMB 2021's
        -sync barriers inside a native call are left out: this loop places its own."""
        sync, ctx.sync = ctx.sync, 0
        try:
            t = self._windowed(ctx, kernel, n) if self.window else self._aligned(ctx, kernel, n)
        finally:
            ctx.first, ctx.sync = 0, sync
        self.runs.append(t)
        ok = t if not self.window else t[~self.late[-1]]
        return float(np.mean(ok if len(ok) else t))

    def _aligned(self, ctx: Context, kernel: Any, n: int) -> np.ndarray:
        t, barrier, tick = np.empty(n), ctx.barrier, self.tick
        for i in range(n):
            ctx.first = i
            if tick:
                s = MPI.Wtime()
                t[i] = _coarse(s, kernel(ctx, 1), tick)
            else:
                t[i] = kernel(ctx, 1)
            barrier()
        return t

    def _windowed(self, ctx: Context, kernel: Any, n: int) -> np.ndarray:
        comm, clock, tick = ctx.comm, self.clock, self.tick
        assert clock is not None
        before = clocksync.synchronize(comm, clock)
        w = self._window(ctx, kernel, before)
        starts, ends, late = np.empty(n), np.empty(n), np.zeros(n, dtype=bool)
        anchor = np.zeros(1)
        for i in range(n):
            if i % BLOCK == 0:  # rank 0's start of the block's first window, in its clock
                anchor[0] = (
                    clock() + (MARGIN if i == 0 else max(2 * w, LEAD)) if ctx.rank == 0 else 0.0
                )
                comm.Bcast([anchor, MPI.DOUBLE], root=0)
                if self.descheduled:
                    time.sleep(self.descheduled)
            starts[i] = anchor[0] + (i % BLOCK) * w
            target = starts[i] + before.offset
            now = clock()
            if now > target:
                late[i] = True
            else:
                now = _spin(clock, target)
            ctx.first = i
            d = kernel(ctx, 1)
            ends[i] = now + (_coarse(now, d, tick) if tick else d)
        after = clocksync.synchronize(comm, clock)
        bracket = clocksync.Bracket(before, after)
        self.late.append(late)
        self.syncs.append(
            {
                "offset": before.offset,
                "error": bracket.error,
                "drift": bracket.drift,
                "drift_error": bracket.drift_error,
                "window": w,
            }
        )
        return bracket.to_reference(ends) - starts

    def _window(self, ctx: Context, kernel: Any, before: clocksync.Offset) -> float:
        """The window: twice the slowest rank's median cycle of WARM calls, plus four
        times the largest sync error (a start may be off by it on any rank)."""
        clock, cycles = self.clock, []
        assert clock is not None
        for i in range(WARM):
            ctx.barrier()
            c0 = clock()
            ctx.first = i
            kernel(ctx, 1)
            cycles.append(clock() - c0)
        mine = np.array([statistics.median(cycles), before.error])
        worst = np.empty(2)
        ctx.comm.Allreduce(mine, worst, op=MPI.MAX)
        return 2 * float(worst[0]) + 4 * float(worst[1])

    def mine(self) -> dict | None:
        """This rank's data for the gather to world rank 0."""
        if not self.runs:
            return None
        return {
            "t": np.concatenate(self.runs).tolist(),
            "late": np.concatenate(self.late).tolist() if self.window else None,
            "sync": self.syncs[0] if self.syncs else None,
            "sync_error": max(s["error"] for s in self.syncs) if self.syncs else None,
            "floor": self.floor,
            "engine": self.engine,
        }


def arm(ctx: Context, how: row_measurement.Measuring, engine: str) -> None:
    """Per-repetition timing for this row's timed runs (engine), where it applies."""
    ctx.row_timer = None
    b = ctx.bench
    kind = b.kind.value if hasattr(b.kind, "value") else str(b.kind)
    window = how.sync_start == "window" and row_measurement.window_applies(
        b.family, b.name, kind, ctx.mode
    )
    each = (
        how.per_iteration
        and row_measurement.per_iteration_skip(b.family, b.name, kind, ctx.mode) is None
    )
    if window or each:
        ctx.row_timer = RowTimer(ctx, engine, window)


def timer(ctx: Context) -> RowTimer | None:
    """The armed RowTimer of the row's timed runs, or None (IMB's loop)."""
    return ctx.row_timer


def finish(ctx: Context | None) -> None:
    """The timed runs are done: later calls (another engine's warm-up) run IMB's loop."""
    if ctx is not None and ctx.row_timer is not None:
        ctx.row_timer_done, ctx.row_timer = ctx.row_timer, None


def data(ctx: Context | None) -> dict | None:
    """What this rank sends to world rank 0 for the row: None when it did not time it so."""
    if ctx is None or ctx.row_timer_done is None:
        return None
    t, ctx.row_timer_done = ctx.row_timer_done, None
    return t.mine()
