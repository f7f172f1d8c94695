"""The progress line of a run: one updating line for a terminal, written by world rank 0.

A view like the others (job.build_sinks puts it first): it hears where the
run is (Session.progress names each row: `position`) and each record, and
draws with rich only then, between rows: rich draws when told to (no
refresh thread), so nothing runs beside a timed loop. It is there only when
stderr reaches a terminal (process_origin.progress_terminal: rank 0's own, or
under `commbench run -n N` the self-launcher's, since mpiexec gives the
ranks pipes), never with --no-progress, and rich is imported only then.

The line goes to stderr, and the tables stay alone on stdout: before a
record reaches the text views the line is erased, and before it is drawn
again the tables are flushed, so a row never lands on it. Under mpiexec,
whose separate pipes reorder the two streams, a line for a terminal that
stdout shares travels in stdout's stream (process_origin.progress_terminal says why).

It shows the family, benchmark, NP, mode and size being measured, the sizes
done of the plan's, the time elapsed, and the most the rest can take by the
-time budget (Plan.sweep_bound: every size is cut at -time, every sweep at
its budget). Families that drive their own experiments (overhead, msgrate,
p2p, mt) have no such plan: the line then names what runs and the time.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from commbench import process_origin
from commbench.row_measurement import samples_taken


def terminal(cfg) -> tuple[int, bool] | None:
    """(width, through stdout) of the terminal to draw on (process_origin.progress_terminal), or
    None: no progress line for this run."""
    if "no_progress" in cfg.given:
        return None
    return process_origin.progress_terminal()


def size_text(n: int | None) -> str:
    if n is None:
        return ""
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def duration(s: float) -> str:
    s = int(round(s))
    return (
        f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"
    )


class Schedule:
    """Where a harness run is in its plan: the sweeps (Plan.sweeps), the sizes done, the bound."""

    def __init__(self, plan):
        self.plan = plan
        self.sweeps = plan.sweeps()
        self.rows = sum(n for *_, n in self.sweeps)
        cfg = plan.cfg
        # --samples K in rounds (harness.rounds): K visits of every row, the later K - 1 rounds
        # counted as visits
        rounds = samples_taken(cfg.samples, cfg.measuring.as_dict()) == "rounds"
        self.total = self.rows * (cfg.samples if rounds else 1)
        self.i = -1  # the current sweep
        self.row = 0  # its current size (0-based)
        self.before = 0  # the sizes of the sweeps before it
        self.since = time.monotonic()
        self.later = 0  # visits of the later rounds so far
        self.later_since = 0.0

    def advance(self, where: dict) -> None:
        if (where.get("round") or 1) > 1:
            self.later_since = self.later_since or time.monotonic()
            self.later += 1
            return
        key = (where.get("benchmark"), where.get("np"), where.get("mode") or "")
        if 0 <= self.i < len(self.sweeps) and self.sweeps[self.i][:3] == key:
            self.row += 1
            return
        for j in range(self.i + 1, len(self.sweeps)):
            if self.sweeps[j][:3] == key:  # a sweep cut by its time budget counts as done
                self.before = sum(n for *_, n in self.sweeps[:j])
                self.i, self.row, self.since = j, 0, time.monotonic()
                return

    @property
    def done(self) -> int:
        return min(min(self.before + self.row, self.rows) + self.later, self.total)

    def left(self) -> float:
        """The most the rest of the run can take (seconds) by the -time budget; in the later
        rounds of --samples, the visits left at the pace of those done."""
        if self.later:
            pace = (time.monotonic() - self.later_since) / self.later
            return pace * (self.total - self.done)
        if not 0 <= self.i < len(self.sweeps):
            return sum(self.plan.sweep_bound(n) for *_, n in self.sweeps[self.i + 1 :])
        n = self.sweeps[self.i][3]
        now = self.plan.sweep_bound(n - self.row, spent=time.monotonic() - self.since)
        return now + sum(self.plan.sweep_bound(m) for *_, m in self.sweeps[self.i + 1 :])


class ProgressView:
    """Sink (records.Sink with position): the line, on out (stderr, or stdout's stream: see
    process_origin.progress_terminal), drawn width columns wide; tables: the text views' stream."""

    def __init__(self, cfg, width: int, out: TextIO | None = None, tables: TextIO | None = None):
        self.cfg, self.width = cfg, width
        self.out, self.tables = out or sys.stderr, tables or sys.stdout
        self.progress: Any = None  # rich.progress.Progress, from start()
        self.task: Any = None
        self.schedule: Schedule | None = None
        self.family = ""
        self.ended = False

    def start(self, header: dict) -> None:
        self._guard(lambda: self._begin(header))

    def _begin(self, header: dict) -> None:
        from commbench.harness.plan import Plan

        fam = header.get("family") or {}
        self.family = str(fam.get("title") or fam.get("name") or "")
        world = (header.get("metadata") or {}).get("world_size") or 1
        plan = Plan(self.cfg, world)
        if plan.family.kernels:
            self.schedule = Schedule(plan)
        self._make()

    def _make(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        console = Console(file=self.out, force_terminal=True, width=self.width, highlight=False)
        cols: list = [TextColumn("{task.description}", markup=False)]
        if self.schedule is not None:
            cols += [BarColumn(bar_width=10), MofNCompleteColumn()]
        cols += [TimeElapsedColumn(), TextColumn("{task.fields[left]}", markup=False)]
        # A message rank 0 prints to stderr while the line is up (the watchdog's "overdue")
        # goes above it, not onto it; stdout is never redirected.
        self.progress = Progress(
            *cols,
            console=console,
            auto_refresh=False,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=self.out is sys.stderr,
        )
        total = self.schedule.total if self.schedule is not None else None
        self.task = self.progress.add_task("", total=total, left="")

    def _guard(self, step) -> None:
        """A progress line must never cost the run: any failure to draw ends the line only."""
        if self.ended:
            return
        try:
            step()
        except Exception:  # noqa: BLE001 - a terminal gone, a pipe closed: the run goes on
            self.ended = True

    def position(self, where: dict) -> None:
        """A new row is measured next (between rows: Session.progress)."""
        self._guard(lambda: self._draw(where))

    def _draw(self, where: dict) -> None:
        if self.progress is None:
            return
        text = f"{self.family} {where.get('benchmark')} NP {where.get('np')}"
        if where.get("mode"):
            text += f" {where['mode']}"
        if where.get("bytes") is not None:
            text += f" {size_text(where['bytes'])}"
        fields: dict = {"description": text}
        if (
            self.schedule is not None and "bytes" in where
        ):  # a size of a sweep (harness.core.Harness.watch)
            self.schedule.advance(where)
            fields.update(
                completed=self.schedule.done, left=f"\u2264{duration(self.schedule.left())} left"
            )
        self.progress.update(self.task, **fields)
        self.tables.flush()  # every table row before the line
        if self.progress.live.is_started:
            self.progress.refresh()
        else:
            self.progress.start()

    def _erase(self) -> None:
        if self.progress is not None and self.progress.live.is_started:
            self.progress.stop()

    def record(self, rec) -> None:
        """A row is done: the line goes before the text views print it."""
        self._guard(self._erase)

    def finish(self, summary: dict) -> None:
        self._guard(self._erase)
        self.ended = True
