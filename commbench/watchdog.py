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

Exit status: 124 watchdog, 128 + signal number for SIGINT/SIGTERM/SIGHUP.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

END_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
SIGNAL_WHY = {
    signal.SIGINT: "interrupted by SIGINT (Ctrl-C)",
    signal.SIGTERM: "terminated by SIGTERM (job cancelled, or the process manager ended the job "
                    "after another process failed)",
    signal.SIGHUP: "terminated by SIGHUP (terminal closed)",
}
EXIT_TIMEOUT = 124
# sigtimedwait is POSIX but not on macOS: there the watchdog keeps only its clock
# and the signals keep Python's default handling.
HAVE_SIGWAIT = hasattr(signal, "sigtimedwait") and hasattr(signal, "pthread_sigmask")
REPORT_GRACE = 3.0  # rank 0 waits this long for the other ranks' reports
PARTIAL_GRACE = 2.0  # at a signal, rank 0 waits this long for the other ranks' samples (--samples)
SELF_EXIT_GRACE = 15.0  # a non-zero rank leaves by itself this long after firing
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
            print(f"commbench: cleanup at exit failed: {e}", file=sys.stderr, flush=True)


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


def unblock_signals() -> None:
    if HAVE_SIGWAIT:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, END_SIGNALS)


def local_addresses() -> list[str]:
    """IPv4 addresses of this host's interfaces, non-loopback first (Linux ioctl)."""
    out: list[str] = []
    try:
        import fcntl

        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            for _, name in socket.if_nameindex():
                try:
                    raw = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name[:15].encode()))  # SIOCGIFADDR
                    out.append(socket.inet_ntoa(raw[20:24]))
                except OSError:
                    pass
        finally:
            s.close()
    except (ImportError, OSError):
        pass
    try:
        out.append(socket.gethostbyname(socket.gethostname()))
    except OSError:
        pass
    uniq = list(dict.fromkeys(out))
    return sorted(uniq, key=lambda a: a.startswith("127.")) or ["127.0.0.1"]


def main_thread_at() -> str:
    """Where the main thread is now: the innermost commbench line it runs, as
    'suites/nbc.py:175 exploit(target, False)' (inside a C call: the line that made it)."""
    import linecache

    frame = sys._current_frames().get(threading.main_thread().ident)
    here = os.path.dirname(os.path.abspath(__file__))
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if path.startswith(here + os.sep):
            line = linecache.getline(path, frame.f_lineno).strip()
            return f"{os.path.relpath(path, here)}:{frame.f_lineno} {line}"
        frame = frame.f_back
    return "outside commbench's code"


def describe(state: dict) -> str:
    """'PingPong, NP 2, group 0 (world ranks 0 1), 4194304 bytes, in the timed kernel'."""
    if not state.get("benchmark"):
        return state.get("phase", "start-up")  # callers say "in …" themselves
    parts = [state["benchmark"]]
    if state.get("mode"):
        parts.append(f"mode {state['mode']}")
    parts.append(f"NP {state.get('np')}")
    members = state.get("members")
    if members is not None:
        g = state.get("group", 0)
        parts.append(f"group {g} (world ranks {' '.join(map(str, members))})" if g >= 0
                     else "idle rank (waiting for the groups)")
    if state.get("bytes") is not None:
        parts.append(f"{state['bytes']} bytes")
    return ", ".join(parts) + f", in {state.get('phase', '?')}"


class Watchdog:
    """One per rank. Rank 0 passes on_end(reason) to finish the results file."""

    def __init__(self, timeout: float, rank: int, size: int, host: str = "",
                 on_end: Callable[[str], None] | None = None):
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
        self.lock = threading.Lock()
        self.listener: socket.socket | None = None
        self.rank0: tuple[list[str], int] | None = None
        # --samples: this rank's completed samples of the row being measured (a callable
        # set by the harness); rank 0 gathers them at a signal into `partials`.
        self.partial: Callable[[], Any] | None = None
        self.partials: dict[int, Any] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="commbench-watchdog", daemon=True)

    # -- set-up ------------------------------------------------------------------
    def listen(self) -> tuple[list[str], int] | None:
        """Rank 0: open the report socket; returns (addresses, port) for the others."""
        if self.timeout <= 0:
            return None
        try:
            ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            ls.bind(("0.0.0.0", 0))
            ls.listen(max(self.size, 8))
        except OSError:
            return None
        self.listener = ls
        return local_addresses(), ls.getsockname()[1]

    def start(self, rank0: tuple[list[str], int] | None = None) -> Watchdog:
        self.rank0 = rank0
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self.listener is not None:
            self.listener.close()

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
            if info is not None:
                self._end_by_signal(info.si_signo)
            elif time.monotonic() > self.deadline:
                if self.beats != self._beats_seen:
                    self._slow()
                else:
                    self._fire()
            elif self.rank == 0 and not self._said_overdue and self.timeout > 0:
                self._overdue()

    def _overdue(self) -> None:
        idle = time.monotonic() - self.since
        if idle >= min(OVERDUE_S, self.timeout / 4):
            self._said_overdue = True
            print(f"commbench: watchdog: no progress for {idle:.0f} s in {describe(self.state)} "
                  f"(rank 0 at {main_thread_at()}); the job is ended at --timeout {self.timeout:g} s "
                  "unless it moves", file=sys.stderr, flush=True)

    def _slow(self) -> None:
        """--timeout passed, but the stage made steps: slow, not stuck. Say so and wait on."""
        steps = self.beats - self._beats_seen
        self._beats_seen = self.beats
        self.deadline = time.monotonic() + self.timeout
        if self.rank != 0:  # one voice: rank 0's
            return
        print(f"commbench: watchdog: {describe(self.state)} is slow but moving "
              f"({steps} steps in the last {self.timeout:g} s, at {main_thread_at()}); not ending the job",
              file=sys.stderr, flush=True)

    def _end_by_signal(self, signo: int) -> None:
        why = SIGNAL_WHY.get(signo, f"signal {signo}")
        if self.partial is not None:  # --samples: the completed samples of the current row
            if self.rank == 0:
                self.partials = {0: self.partial()}
                self.partials.update({r: m.get("partial") for r, m in self._collect(PARTIAL_GRACE).items()})
            else:
                self._send({"rank": self.rank, "partial": self.partial()})
        if self.rank == 0:
            reason = f"{why} (rank 0: {describe(self.state)})"
            self._finish(reason)
            print(f"commbench: {reason}", file=sys.stderr, flush=True)
        _run_exit_hooks(signal.Signals(signo).name)
        if self.rank != 0:
            time.sleep(SIGNAL_LINGER)
        os._exit(128 + signo)

    def _fire(self) -> None:
        state = dict(self.state)
        mine = {"rank": self.rank, "host": self.host, "pid": os.getpid(), "state": state, "at": main_thread_at()}
        if self.partial is not None:  # --samples: the completed samples of the stuck row travel along
            mine["partial"] = self.partial()
        if self.rank != 0:
            print(f"commbench: watchdog: rank {self.rank} ({self.host}, pid {os.getpid()}) made no progress "
                  f"for {self.timeout:g} s: {describe(state)}, at {mine['at']}", file=sys.stderr, flush=True)
            self._send(mine)
            time.sleep(SELF_EXIT_GRACE)
            print(f"commbench: watchdog: rank {self.rank}: rank 0 did not end the job; leaving "
                  f"(--timeout {self.timeout:g} s)", file=sys.stderr, flush=True)
            _run_exit_hooks("watchdog")
            os._exit(EXIT_TIMEOUT)
        reports = {0: mine}
        reports.update(self._collect(REPORT_GRACE))
        if self.partial is not None:  # a stuck rank sent nothing: the row says whose samples are missing
            self.partials = {r: rep.get("partial") for r, rep in reports.items()}
        reason = self.report(state, reports)
        self._finish(reason)
        _run_exit_hooks("watchdog")
        os._exit(EXIT_TIMEOUT)

    def report(self, state: dict, reports: dict[int, dict]) -> str:
        """Print which measurement and which ranks were stuck; returns a one-line reason."""
        silent = [r for r in range(self.size) if r not in reports]
        members = state.get("members")
        lines = [f"commbench: watchdog: no progress for {self.timeout:g} s (--timeout) in {describe(state)}"]
        for r in sorted(reports):
            rep = reports[r]
            lines.append(f"commbench: watchdog:   rank {r} ({rep.get('host')}, pid {rep.get('pid')}) "
                         f"answered: {describe(rep.get('state', {}))}, at {rep.get('at', '?')}")
        if silent:
            lines.append(f"commbench: watchdog:   rank{'s' if len(silent) > 1 else ''} "
                         f"{' '.join(map(str, silent))} did not answer (stopped, hung outside Python, "
                         "or dead): these are the stuck ranks")
        lines.append("commbench: watchdog: ending the job; every record measured so far is kept")
        print("\n".join(lines), file=sys.stderr, flush=True)
        what = state.get("benchmark") or state.get("phase", "start-up")
        at = f" at {state['bytes']} bytes" if state.get("bytes") is not None else ""
        np_ = f", NP {state['np']}" if state.get("np") else ""
        grp = f", group world ranks {' '.join(map(str, members))}" if members else ""
        # Every rank answered, each still inside the call named above: waiting on each
        # other in MPI (a deadlock), or one long computation or loop (see where).
        stuck = (f"; ranks not answering: {' '.join(map(str, silent))}" if silent else
                 f"; every rank answered, none moved (rank 0 at {reports[0].get('at', '?')})")
        return f"watchdog: {what}{np_}{at}{grp} made no progress for {self.timeout:g} s{stuck}"

    def _finish(self, reason: str) -> None:
        if self.on_end is None:
            return
        try:
            self.on_end(reason)
        except Exception as e:  # noqa: BLE001 - the report matters more than a last write
            print(f"commbench: could not finish the results: {e}", file=sys.stderr, flush=True)

    # -- the report channel (plain TCP) ------------------------------------------
    def _send(self, msg: dict) -> None:
        if self.rank0 is None:
            return
        addrs, port = self.rank0
        data = (json.dumps(msg) + "\n").encode()
        for a in addrs:
            try:
                with socket.create_connection((a, port), timeout=1.0) as s:
                    s.sendall(data)
                return
            except OSError:
                continue

    def _collect(self, grace: float) -> dict[int, dict]:
        out: dict[int, dict] = {}
        ls = self.listener
        if ls is None:
            return out
        end = time.monotonic() + grace
        ls.setblocking(False)
        while len(out) < self.size - 1:
            left = end - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select([ls], [], [], left)
            if not ready:
                continue
            try:
                conn, _ = ls.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(max(0.1, end - time.monotonic()))
                buf = b""
                try:
                    while not buf.endswith(b"\n"):
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        buf += chunk
                    msg = json.loads(buf.decode())
                    out[int(msg["rank"])] = msg
                except (OSError, ValueError, KeyError):
                    continue
        return out
