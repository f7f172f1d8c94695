"""The parts of fault handling that need no job: a cut results file salvaged, the watchdog's
report naming stuck ranks, what an exit status means. The faults in real MPI jobs are
tests/mpi/test_faults.py."""

from __future__ import annotations

import json

import pytest

from commbench.views import results_file
from tests.support.results_schema import run_header


def test_mark_interrupted_salvages_a_cut_file(tmp_path):
    """A writer killed mid-record leaves a cut line: the launcher recovers every whole record."""
    from commbench import records
    from commbench.views.results_file import JsonResults, mark_interrupted

    path = tmp_path / "cut.json"
    sink = JsonResults(str(path))
    sink.start(run_header())  # a real run's header: the file validates (tests/conftest.py)
    for x in (1, 2, 4):
        sink.record(
            records.build(
                benchmark="PingPong",
                family="mpi1",
                kind="single",
                np_=2,
                mode="",
                x=x,
                repetitions=10,
                groups=[[0, 1]],
                world_size=2,
                components=["t"],
                rank_times={"t": [1e-6, 1e-6]},
                turnover=1.0,
            )
        )
    text = path.read_text()
    assert json.loads(text)["summary"]["provisional"] is True  # valid while running
    path.write_text(text[: text.rindex("}\n ]")])  # cut inside the last record
    with pytest.raises(ValueError):
        results_file.load(str(path))
    assert mark_interrupted(str(path), "test: cut") is True
    doc = results_file.load(str(path))
    assert [r["bytes"] for r in doc["records"]] == [1, 2]
    assert doc["summary"] == {"interrupted": "test: cut"} and doc["complete"] is False
    assert mark_interrupted(str(path), "again") is False  # a specific reason is kept


def test_watchdog_report_names_stuck_ranks(capsys):
    """The report logic alone: who answered, who did not, and the one-line reason."""
    from commbench.watchdog import Watchdog
    from commbench.watchdog_report import describe

    state = {
        "benchmark": "Allreduce",
        "np": 4,
        "mode": "",
        "bytes": 1024,
        "group": 0,
        "members": [0, 1, 2, 3],
        "phase": "the timed kernel",
    }
    assert (
        describe(state)
        == "Allreduce, NP 4, group 0 (world ranks 0 1 2 3), 1024 bytes, in the timed kernel"
    )
    assert describe({"phase": "start-up"}) == "start-up"  # callers say "in …" (never "in in")
    wd = Watchdog(7, 0, 4)
    reports = {
        0: {"host": "a", "pid": 1, "state": state},
        2: {"host": "b", "pid": 2, "state": state},
    }
    why = wd.report(state, reports)
    err = capsys.readouterr().err
    assert "no progress for 7 s (--timeout) in Allreduce, NP 4" in err
    assert "rank 2 (b, pid 2) answered" in err and "ranks 1 3 did not answer" in err
    assert why == (
        "watchdog: Allreduce, NP 4 at 1024 bytes, group world ranks 0 1 2 3 made no progress "
        "for 7 s; ranks not answering: 1 3"
    )
    assert "every rank answered" in wd.report(state, {r: reports[0] for r in range(4)})


def test_exit_meaning():
    from commbench.self_launcher import exit_meaning

    assert "SIGKILL" in exit_meaning(9) and "watchdog" in exit_meaning(124)
    assert "signal" in exit_meaning(-15) and "ended badly" in exit_meaning(77)
