"""Messages that need no run (issue "No false success in any family", item 7): the watchdog's
words for where a rank is, the MPI runtime as an extra of the package, and the overhead
family's Table 3 form and the results file's units. The messages of real runs are
tests/mpi/test_messages.py."""

from __future__ import annotations

from commbench.watchdog_report import describe


def test_describe_never_says_in_in():
    assert not describe({"phase": "start-up"}).startswith("in ")
    assert describe({"benchmark": "PingPong", "np": 2, "phase": "the timed kernel"}).endswith(
        "in the timed kernel"
    )


def test_the_mpi_runtime_is_an_extra():
    """pip install commbench must not put a second libmpi beside a cluster's."""
    import tomllib
    from pathlib import Path

    meta = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())[
        "project"
    ]
    assert not any(d.startswith("mpich") for d in meta["dependencies"])
    assert meta["optional-dependencies"]["mpich"] == ["mpich>=4.1"]


def test_table3_form_and_units():
    from commbench.views.overhead_text import table3
    from commbench.views.results_file import UNITS

    assert table3(220.4, 1.28512) == "220 + 1.285n"  # seed 002, Table 3: E  220 + 1.285n
    assert table3(-25.24, -0.16371) == "-25.2 - 0.1637n"
    assert UNITS["rank_times"] == "s" and UNITS["values.t*"] == "us"
