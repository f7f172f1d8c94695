"""What the watchdog (commbench.watchdog) says: where a rank is, and which ranks a
stuck measurement left.

- describe(state): a rank's state as the harness set it ('PingPong, NP 2, …');
- main_thread_at(): the commbench line the main thread runs now;
- hosts(ranks, host): ranks grouped by host, '2 3 on h2, 5 on h3';
- stuck(…): rank 0's report of a measurement that made no progress for
  --timeout seconds, printed, and the one-line reason the results file keeps;
- SIGNAL_WHY: why the job ended, by the signal that ended it;
- say(text): one line on stderr, "commbench: text".

Text only (no MPI, no sockets), below the watchdog in the layers, as its channel
(commbench.peers) is; the watchdog thread and commbench.mpi_job call these.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterable

# Why the job ended, by the signal that ended it.
SIGNAL_WHY = {
    signal.SIGINT: "interrupted by SIGINT (Ctrl-C)",
    signal.SIGTERM: "terminated by SIGTERM (job cancelled, or the process manager ended the job "
    "after another process failed)",
    signal.SIGHUP: "terminated by SIGHUP (terminal closed)",
}


def say(text: str) -> None:
    """A line of commbench's on stderr, flushed at once: it may be the last a rank writes."""
    print(f"commbench: {text}", file=sys.stderr, flush=True)


def main_thread_at() -> str:
    """Where the main thread is now: the innermost commbench line it runs, as
    'suites/nbc/kernels.py:175 exploit(target, False)' (inside a C call: the line that made it)."""
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
        parts.append(
            f"group {g} (world ranks {' '.join(map(str, members))})"
            if g >= 0
            else "idle rank (waiting for the groups)"
        )
    if state.get("bytes") is not None:
        parts.append(f"{state['bytes']} bytes")
    return ", ".join(parts) + f", in {state.get('phase', '?')}"


def hosts(ranks: Iterable[int], host: dict[int, str]) -> str:
    """'2 3 on h2, 5 on h3' (host: rank -> its host, '' or absent when not known), or
    '2 3 5' when no host is known."""
    groups: dict[str, list[str]] = {}
    for r in sorted(ranks):
        groups.setdefault(host.get(r, ""), []).append(str(r))
    if list(groups) == [""]:
        return " ".join(groups[""])
    return ", ".join(" ".join(rs) + (f" on {h}" if h else "") for h, rs in groups.items())


def stuck(
    timeout: float,
    size: int,
    state: dict,
    reports: dict[int, dict],
    host: dict[int, str],
    lost: set[int],
) -> str:
    """Print which measurement and which ranks were stuck (reports: rank -> what it sent;
    host: rank -> host; lost: the ranks whose connection ended); returns a one-line reason."""
    silent = [r for r in range(size) if r not in reports]
    members = state.get("members")
    lines = [
        (f"commbench: watchdog: no progress for {timeout:g} s (--timeout) in {describe(state)}")
    ]
    for r in sorted(reports):
        rep = reports[r]
        lines.append(
            f"commbench: watchdog:   rank {r} ({rep.get('host')}, pid {rep.get('pid')}) "
            f"answered: {describe(rep.get('state', {}))}, at {rep.get('at', '?')}"
        )
    if silent:
        on = hosts(silent, host)
        lines.append(
            f"commbench: watchdog:   rank{'s' if len(silent) > 1 else ''} "
            f"{' '.join(map(str, silent))} did not answer (stopped, hung outside Python, "
            "or dead): these are the stuck ranks"
            + (f" ({on})" if " on " in on else "")
            + (
                f"; of them, {hosts(lost, host)} ended (killed, crashed, or the node failed)"
                if lost
                else ""
            )
        )
    lines.append("commbench: watchdog: ending the job; every record measured so far is kept")
    print("\n".join(lines), file=sys.stderr, flush=True)
    what = state.get("benchmark") or state.get("phase", "start-up")
    at = f" at {state['bytes']} bytes" if state.get("bytes") is not None else ""
    np_ = f", NP {state['np']}" if state.get("np") else ""
    grp = f", group world ranks {' '.join(map(str, members))}" if members else ""
    # Every rank answered, each still inside the call named above: waiting on each
    # other in MPI (a deadlock), or one long computation or loop (see where).
    whose = (
        f"; ranks not answering: {hosts(silent, host)}"
        if silent
        else f"; every rank answered, none moved (rank 0 at {reports[0].get('at', '?')})"
    )
    return f"watchdog: {what}{np_}{at}{grp} made no progress for {timeout:g} s{whose}"
