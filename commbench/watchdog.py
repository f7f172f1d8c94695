"""Per-rank watchdog: a stuck measurement, a signal, or a dead peer ends the job cleanly.

Why a thread that never calls MPI: commbench initialises MPI with
MPI_THREAD_SINGLE (IMB's plain MPI_Init), so only the main thread may call
MPI. When the main thread is blocked inside MPI (a peer stopped, a network
that hangs), nothing in it can run, not even a Python signal handler. The
watchdog thread therefore uses only the operating system:

- The signals that end a job (SIGINT from Ctrl-C, SIGTERM from the process
  manager or a scheduler, SIGHUP) are blocked in every thread before MPI is
  initialised (block_signals), and the watchdog receives them with
  sigtimedwait, so they are seen even while the main thread sits in MPI.
- Every rank knows its own state (benchmark, NP, group, size, phase), set by
  the harness through progress()/phase(). When no progress is made for
  --timeout seconds the watchdog fires.
- "Which ranks were stuck": rank 0 listens on a TCP socket (plain sockets, no
  MPI) whose addresses every rank learns at start. A rank whose watchdog
  fires sends its state there; rank 0 waits a few seconds for these reports
  and names the ranks that answered (and where they were) and the ranks that
  did not answer (stopped, hung outside Python, or dead).
- Rank 0 then finishes the results file (interrupted, with the reason),
  prints the report and leaves with os._exit. The process manager (Hydra,
  Open MPI's prterun, srun --kill-on-bad-exit) ends the other ranks when one
  exits with a non-zero status, so no MPI call (not even MPI_Abort, which is
  not thread-safe under MPI_THREAD_SINGLE) is needed. A non-zero rank whose
  report found no rank 0 leaves by itself after a grace period, with its own
  message, so a stopped rank 0 cannot hang the job either.
- A rank that ends without finishing the run (killed, crashed, its node's
  daemons and tasks killed) closes its connection to rank 0 (commbench.peers:
  every rank holds one open from the start, and says "bye" when it
  finishes). Rank 0 then knows within a tick which rank is lost and on which
  host. A process manager normally ends the job at once (Hydra, srun
  --kill-on-bad-exit): then the reason rank 0 writes at the SIGTERM names the
  lost ranks and hosts. If the job is still running LOST_GRACE seconds later
  (srun without --kill-on-bad-exit leaves the other ranks blocked in MPI),
  rank 0 ends it: the reason names them, and every rank leaves at rank 0's
  word (or when rank 0's own connection ends).

Exit status: 124 watchdog, 128 + signal number for SIGINT/SIGTERM/SIGHUP,
3 a lost rank.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from commbench import peers
from commbench.watchdog_report import SIGNAL_WHY, describe, hosts, main_thread_at, say, stuck

END_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
EXIT_TIMEOUT = 124
# sigtimedwait is POSIX but not on macOS: there the watchdog keeps only its clock
# and the signals keep Python's default handling.
HAVE_SIGWAIT = hasattr(signal, "sigtimedwait") and hasattr(signal, "pthread_sigmask")
REPORT_GRACE = 3.0  # rank 0 waits this long for the other ranks' reports
PARTIAL_GRACE = 2.0  # at a signal, rank 0 waits this long for the other ranks' samples (--samples)
SELF_EXIT_GRACE = 15.0  # a non-zero rank leaves by itself this long after firing
# Rank 0 ends the job this long after a rank was lost, if nothing else has ended it:
# time for the process manager to end it (and for rank 0 to write why, at its SIGTERM).
LOST_GRACE = 3.0
EXIT_LOST = 3
# On a signal a non-zero rank lingers this long before it exits: a process
# manager (Hydra, srun) kills the whole job as soon as one process dies, and
# rank 0 is still writing the record of why the run ended. Rank 0's own exit
# ends the lingering ranks sooner.
SIGNAL_LINGER = 5.0
# Rank 0 says on stderr that a measurement is overdue after this long without
# progress (or a quarter of --timeout, if shorter): a sign of life long before
# the watchdog ends the job.
OVERDUE_S = 30.0


# Callbacks run on this rank just before the watchdog ends the process (after a
# signal or a timeout), with a short reason such as "SIGINT": cleanup that needs
# no MPI, e.g. removing IO files. Families register them instead of installing
# signal handlers of their own, which could not run while signals are blocked.
EXIT_HOOKS: list = []


def at_exit(hook) -> None:
    if hook not in EXIT_HOOKS:
        EXIT_HOOKS.append(hook)


def _run_exit_hooks(why: str) -> None:
    for hook in EXIT_HOOKS:
        try:
            hook(why)
        except Exception as e:  # noqa: BLE001 - the exit must happen regardless
            say(f"cleanup at exit failed: {e}")


_signals_blocked = False


def signals_blocked() -> bool:
    """True when the ending signals reach the watchdog thread, not Python handlers."""
    return _signals_blocked


def block_signals() -> None:
    """Block the ending signals in this thread and every thread created later.

    Call before MPI is initialised so the MPI library's own threads inherit the
    mask, and start a Watchdog right after (it is the one that receives them).
    """
    if HAVE_SIGWAIT:
        signal.pthread_sigmask(signal.SIG_BLOCK, END_SIGNALS)
        global _signals_blocked
        _signals_blocked = True


class Watchdog:
    """One per rank. Rank 0 passes on_end(reason) to finish the results file."""

    def __init__(
        self,
        timeout: float,
        rank: int,
        size: int,
        host: str = "",
        on_end: Callable[[str], None] | None = None,
    ):
        self.timeout = timeout
        self.rank = rank
        self.size = size
        self.host = host or socket.gethostname()
        self.on_end = on_end
        self.state: dict[str, Any] = {"phase": "start-up"}
        self.deadline = time.monotonic() + timeout if timeout > 0 else float("inf")
        self.since = time.monotonic()  # the last progress()
        self.beats = 0  # beat(): steps of a long stage that are progress within it
        self._beats_seen = 0
        self._said_overdue = False
        # the channel to rank 0 (main thread: stop; watchdog thread: the rest)
        self.lock = threading.Lock()
        self.hub: peers.Hub | None = None  # rank 0: every other rank's connection
        self.link: peers.Link | None = None  # the others: theirs to rank 0
        self.rank0: tuple | None = None
        self._gone_at: float | None = None  # rank 0's connection ended (other ranks)
        # --samples: this rank's completed samples of the row being measured (a callable
        # set by the harness); rank 0 gathers them at a signal into `partials`.
        self.partial: Callable[[], Any] | None = None
        self.partials: dict[int, Any] | None = None
        # Set when this thread begins to end the process (a signal, --timeout, a lost rank,
        # rank 0's word): an error the main thread meets from then on (a peer already gone)
        # is a consequence, which the watchdog's own message explains (commbench.mpi_job).
        self.ending: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="commbench-watchdog", daemon=True)

    # -- set-up ------------------------------------------------------------------
    def listen(self) -> tuple | None:
        """Rank 0: open the report socket; returns what the others need to join()."""
        if self.timeout <= 0:
            return None
        hub = peers.Hub(self.size)
        info = hub.open()
        if info is not None:
            self.hub = hub
        return info

    def join(self, rank0: tuple | None) -> None:
        """Every rank, with what rank 0's listen() returned: the others connect to it."""
        self.rank0 = rank0
        if self.rank != 0 and rank0 is not None:
            self.link = peers.Link(self.rank, self.host, rank0)

    def start(self, rank0: tuple | None = None) -> Watchdog:
        self._thread.start()
        if rank0 is not None:
            self.join(rank0)
        return self

    def stop(self) -> None:
        """The run finished: rank 0 says "done" to the others, the others say "bye"."""
        self._stop.set()
        with self.lock:
            if self.hub is not None:
                self.hub.close({"word": "done"})
                self.hub = None
            if self.link is not None:
                self.link.close(bye=True)
                self.link = None

    # -- called by the harness (main thread) -----------------------------------
    def progress(self, **state: Any) -> None:
        """A new measurement (or stage) begins: restart the clock."""
        self.state = dict(state)
        self.since = time.monotonic()
        self._said_overdue = False
        if self.timeout > 0:
            self.deadline = self.since + self.timeout

    def beat(self) -> None:
        """One step of a long stage (an iteration, a sample, a chunk written): the
        stage moves, however slowly; when --timeout passes the watchdog says so
        instead of ending the job as stuck. Cheap: never call it in a timed loop."""
        self.beats += 1

    def phase(self, name: str) -> None:
        self.state["phase"] = name

    # -- the thread --------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            tick = 0.5 if self.timeout <= 0 else max(0.05, min(0.5, self.timeout / 10))
            if not HAVE_SIGWAIT:
                self._stop.wait(tick)
                info = None
            else:
                try:
                    info = signal.sigtimedwait(END_SIGNALS, tick)
                except InterruptedError:
                    continue
            if self._stop.is_set():
                return
            # A debugger attaching (gdb -p) can wake sigtimedwait with a siginfo of no
            # ending signal (a garbage number was seen): that is no request to end.
            if info is not None and info.si_signo in END_SIGNALS:
                self._end_by_signal(info.si_signo)
                continue
            self._watch_peers()  # ends the process when a peer's end says so
            if time.monotonic() > self.deadline:
                if self.beats != self._beats_seen:
                    self._slow()
                else:
                    self._fire()
            elif self.rank == 0 and not self._said_overdue and self.timeout > 0:
                self._overdue()

    def _watch_peers(self) -> None:
        """Rank 0: a lost rank ends the job after LOST_GRACE. The others: rank 0's word
        "end", or its connection ended LOST_GRACE ago, ends this rank."""
        lost_at = None
        with self.lock:
            if self._stop.is_set():
                return
            if self.hub is not None:
                self.hub.poll(0)
                lost_at = self.hub.lost_at
            word = self.link.poll(0) if self.link is not None else None
        if lost_at is not None and time.monotonic() - lost_at >= LOST_GRACE:
            self._lost()
        if word == "end":
            self._leave()
        if word == "gone":
            self._gone_at = self._gone_at or time.monotonic()
            if time.monotonic() - self._gone_at >= LOST_GRACE:
                self.ending = "rank 0 gone"
                say(
                    f"rank {self.rank} ({self.host}): rank 0 is gone (its connection "
                    "ended: killed, crashed, or its node failed) and nothing ended the job; "
                    "leaving"
                )
                _run_exit_hooks("rank 0 gone")
                os._exit(EXIT_LOST)

    def where(self, ranks) -> str:
        """'2 3 on h2, 5 on h3' (hosts from the ranks' hellos; rank 0's own), or '2 3 5'."""
        return hosts(ranks, self._hosts())

    def _hosts(self) -> dict[int, str]:
        hub = self.hub
        return {
            0: self.host,
            **({r: p.host for r, p in hub.known.items()} if hub is not None else {}),
        }

    def lost_note(self) -> str:
        """Rank 0: '; rank 2 on h2 had ended …' when ranks were lost, else ''."""
        with self.lock:
            if self.hub is not None:
                self.hub.poll(0)
            lost = sorted(self.hub.lost) if self.hub is not None else []
        if not lost:
            return ""
        return (
            f"; rank{'s' if len(lost) > 1 else ''} {self.where(lost)} had ended before (killed, "
            "crashed, or the node failed)"
        )

    def _lost(self) -> None:
        """Rank 0: ranks ended without finishing and the job runs on: end it, naming them."""
        with self.lock:
            if self.hub is None:  # the run finished meanwhile
                return
            self.ending = "lost rank"
            self.hub.poll(0.2)  # the others of the same node
            lost = sorted(self.hub.lost)
        reason = (
            f"lost rank{'s' if len(lost) > 1 else ''} {self.where(lost)}: ended without finishing "
            f"the run (killed, crashed, or the node failed), in {describe(self.state)}"
        )
        say(f"{reason}; ending the job; every record measured so far is kept")
        self._finish(reason)
        self._end_others(EXIT_LOST)
        _run_exit_hooks("lost rank")
        os._exit(EXIT_LOST)

    def _end_others(self, status: int) -> None:
        """Rank 0, ending the job: the other ranks leave now, with this status."""
        with self.lock:
            if self.hub is not None:
                self.hub.close({"word": "end", "status": status})
                self.hub = None

    def _leave(self) -> None:
        """Another rank, at rank 0's word "end": rank 0 has said and written why."""
        self.ending = "ended by rank 0"
        status = (
            int(self.link.word.get("status", EXIT_LOST))
            if self.link and self.link.word
            else EXIT_LOST
        )
        _run_exit_hooks("ended by rank 0")
        os._exit(status)

    def _linger(self, seconds: float) -> str | None:
        """A non-zero rank waits for rank 0 to end the job: its word, or at most seconds."""
        if self.link is None:
            time.sleep(seconds)
            return None
        return self.link.wait(seconds)

    def _overdue(self) -> None:
        idle = time.monotonic() - self.since
        if idle >= min(OVERDUE_S, self.timeout / 4):
            self._said_overdue = True
            say(
                f"watchdog: no progress for {idle:.0f} s in {describe(self.state)} "
                f"(rank 0 at {main_thread_at()}); the job is ended at --timeout {self.timeout:g} s "
                "unless it moves"
            )

    def _slow(self) -> None:
        """--timeout passed, but the stage made steps: slow, not stuck. Say so and wait on."""
        steps = self.beats - self._beats_seen
        self._beats_seen = self.beats
        self.deadline = time.monotonic() + self.timeout
        if self.rank != 0:  # one voice: rank 0's
            return
        say(
            f"watchdog: {describe(self.state)} is slow but moving ({steps} steps in "
            f"the last {self.timeout:g} s, at {main_thread_at()}); not ending the job"
        )

    def _end_by_signal(self, signo: int) -> None:
        why = SIGNAL_WHY.get(signo, f"signal {signo}")
        self.ending = why
        if self.partial is not None:  # --samples: the completed samples of the current row
            if self.rank == 0:
                self.partials = {0: self.partial()}
                self.partials.update(
                    {r: m.get("partial") for r, m in self._collect(PARTIAL_GRACE).items()}
                )
            else:
                self._send({"rank": self.rank, "partial": self.partial()})
        if self.rank == 0:
            reason = f"{why} (rank 0: {describe(self.state)}){self.lost_note()}"
            self._finish(reason)
            say(reason)
            self._end_others(128 + signo)
        _run_exit_hooks(signal.Signals(signo).name)
        if self.rank != 0:
            self._linger(SIGNAL_LINGER)
        os._exit(128 + signo)

    def _fire(self) -> None:
        self.ending = "watchdog"
        state = dict(self.state)
        mine = {
            "rank": self.rank,
            "host": self.host,
            "pid": os.getpid(),
            "state": state,
            "at": main_thread_at(),
        }
        if self.partial is not None:  # --samples: the completed samples of the stuck row go too
            mine["partial"] = self.partial()
        if self.rank != 0:
            say(
                f"watchdog: rank {self.rank} ({self.host}, pid {os.getpid()}) made no "
                f"progress for {self.timeout:g} s: {describe(state)}, at {mine['at']}"
            )
            self._send(mine)
            got = self._linger(SELF_EXIT_GRACE)
            if got == "end":
                self._leave()
            if got != "gone":  # gone: rank 0 ended (it had said why)
                say(
                    f"watchdog: rank {self.rank}: rank 0 did not end the job; leaving "
                    f"(--timeout {self.timeout:g} s)"
                )
            _run_exit_hooks("watchdog")
            os._exit(EXIT_TIMEOUT)
        reports = {0: mine}
        reports.update(self._collect(REPORT_GRACE))
        if self.partial is not None:  # a stuck rank sent none: the row says whose are missing
            self.partials = {r: rep.get("partial") for r, rep in reports.items()}
        reason = self.report(state, reports)
        self._finish(reason)
        self._end_others(EXIT_TIMEOUT)
        _run_exit_hooks("watchdog")
        os._exit(EXIT_TIMEOUT)

    def report(self, state: dict, reports: dict[int, dict]) -> str:
        """Print which measurement and which ranks were stuck; returns a one-line reason."""
        lost = set(self.hub.lost) if self.hub is not None else set()
        return stuck(self.timeout, self.size, state, reports, self._hosts(), lost)

    def _finish(self, reason: str) -> None:
        if self.on_end is None:
            return
        try:
            self.on_end(reason)
        except Exception as e:  # noqa: BLE001 - the report matters more than a last write
            say(f"could not finish the results: {e}")

    # -- the report channel (commbench.peers) -----------------------------------------
    def _send(self, msg: dict) -> None:
        if self.link is not None:
            self.link.send(msg)

    def _collect(self, grace: float) -> dict[int, dict]:
        """Rank 0: the other ranks' reports that arrive within grace seconds."""
        with self.lock:
            return self.hub.collect(grace) if self.hub is not None else {}
