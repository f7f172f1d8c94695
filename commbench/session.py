"""The one interface between the core and a family: a Session.

A family sees the run through a Session: the validated RunConfig, the world
communicator, `emit(record)` that hands a record to the views (world rank 0,
under the lock the watchdog also takes to finish them), `progress(phase)`
that tells the watchdog where this rank is, and the fault-injection switch
the tests use. The harness runs every family (its kernels, or the rows of
its procedure: commbench.harness.rows) and hands the same Session to their
measurements and to their start/finish/np_setup hooks.
No family sees the harness.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Sequence
from typing import Any

from commbench import records
from commbench.models import limits
from commbench.records import Measurement, Sink


class Session:
    def __init__(self, cfg: Any, comm: Any, sinks: Sequence[Sink] = (), watchdog: Any = None):
        self.cfg = cfg  # commbench.run_config.RunConfig
        self.comm = comm  # the world communicator of the run
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.sinks = list(sinks) if self.rank == 0 else []
        # Views that follow where the run is (records.Sink: position), e.g. the progress line.
        self.trackers = [s for s in self.sinks if hasattr(s, "position")]
        self.where: dict[str, Any] = {}  # the row the trackers last heard of
        self.lock = threading.Lock()  # the watchdog thread may finish the sinks
        self.watchdog = watchdog  # commbench.watchdog.Watchdog or None
        self.records: list[Measurement] = []  # world rank 0: everything emitted, for analyses
        self.rank_hosts: list[str] = []  # world rank 0: every rank's host (job.configure)
        # world rank 0: the hosts' physical limits (commbench.harness.limits), which every
        # emitted row is held against (its extra["limit"], commbench.models.limits)
        self.limits: dict = {}
        self.held: list[Measurement] = []  # world rank 0: emitted with hold=True, not yet delivered
        # The --samples row being measured (commbench.harness.live.LiveRow): what a
        # stopped run keeps of it. Set by the harness; cleared when its record is emitted.
        self.live: Any = None
        self.closed = False
        # COMMBENCH_FAULT_CORRUPT=<world rank>: that rank sends corrupted data, so
        # tests can prove check mode catches it.
        self.corrupt = os.environ.get("COMMBENCH_FAULT_CORRUPT") == str(self.rank)
        # COMMBENCH_FAULT_ABORT=<records>: rank 0 calls MPI_Abort(1) after that many records, as
        # an MPI library's fatal error does (tests: the launcher tells an abort from a check
        # failure, and the results file says how the run ended).
        after = os.environ.get("COMMBENCH_FAULT_ABORT", "")
        self.abort_after = int(after) if self.rank == 0 and after.isdigit() else None
        self.emitted = 0

    @property
    def params(self) -> dict:
        """The family's own options (every one present: given or its default)."""
        return self.cfg.params

    def emit(self, rec: Measurement, hold: bool = False) -> None:
        """One record to every view; a no-op except on world rank 0. hold: a record of
        a later table (--engine both), delivered by release() or, if the run is
        stopped first, by stop()."""
        self.emitted += 1
        if self.abort_after is not None and self.emitted > self.abort_after:
            self.comm.Abort(1)
        if self.rank != 0:
            return
        if self.cfg.check and rec.status == records.OK:
            # Every row says whether a verifier looked at it: never "successful" unchecked.
            rec = dataclasses.replace(
                rec, extra={**rec.extra, "check": records.check_verdict(rec.defects)}
            )
        found = limits.of_row(rec, self.limits, self.rank_hosts) if self.limits else None
        if found:
            rec = dataclasses.replace(rec, extra={**rec.extra, "limit": found})
        with self.lock:
            if not getattr(self.live, "spans_rows", False):  # harness.rounds: every row's
                self.live = None  # the row is whole: nothing of it is left to keep at a stop
            if hold:
                self.held.append(rec)
            else:
                self._deliver(rec)

    def release(self) -> None:
        """The held records, to every view (the end of a sweep)."""
        with self.lock:
            held, self.held = self.held, []
            for rec in held:
                self._deliver(rec)

    def stop(self, partials: dict[int, Any] | None) -> None:
        """Rank 0, the run being stopped, under the lock: deliver what is kept in
        memory (held records; the live --samples row from every rank's completed
        samples), and nothing after."""
        for rec in self.held:
            self._deliver(rec)
        self.held = []
        if not partials and getattr(self.live, "spans_rows", False):
            partials = {0: self.live.mine()}  # an error, not a signal: rank 0's own samples
        if self.live is not None and partials:
            rec = self.live.record(partials)  # one row, or every row of rounds (harness.rounds)
            for r in rec if isinstance(rec, list) else [rec] if rec is not None else []:
                self._deliver(r)
        self.live = None
        self.closed = True

    def _deliver(self, rec: Measurement) -> None:
        if self.closed:  # stopped: the views are finished
            return
        # Beyond --rank-detail ranks a row keeps its distribution over ranks, not every
        # rank's times: rank 0's memory and the file grow by O(1) a row (docs/scale.md).
        rec = records.summarise(rec, self.cfg.rank_detail, self.rank_hosts)
        self.records.append(rec)
        for s in self.sinks:
            s.record(rec)

    def beat(self) -> None:
        """One step of a long stage (commbench.watchdog.Watchdog.beat); never in a timed loop."""
        if self.watchdog is not None:
            self.watchdog.beat()

    def progress(self, phase: str, **where: Any) -> None:
        """Tell the watchdog where this rank is; naming a benchmark starts a new measurement clock.
        On world rank 0 a row named anew (benchmark, NP, mode, bytes) goes to the trackers too;
        callers name rows between measurements, never inside a timed loop."""
        wd = self.watchdog
        if wd is not None:
            if where:
                wd.progress(phase=phase, **where)
            else:
                wd.phase(phase)
        if where and self.trackers:
            self._track(where)

    def _track(self, where: dict[str, Any]) -> None:
        row = {k: where.get(k) for k in ("benchmark", "np", "mode", "bytes", "round")}
        if row == self.where:  # the same row's next phase
            return
        self.where = row
        with self.lock:
            if self.closed:
                return
            for t in self.trackers:
                t.position(dict(where))
