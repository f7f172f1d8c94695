"""Comparison view: the verdicts on synthetic records, the threshold and the rank spread. The
CLI on real results files is tests/mpi/test_compare.py."""

from __future__ import annotations

from commbench import records
from commbench.suites.base import Kind
from commbench.views.compare import compare
from commbench.views.compare_text import render


def rec(x, tmin, tmax):
    return records.build(
        benchmark="PingPong",
        family="mpi1",
        kind=Kind.SINGLE,
        np_=2,
        mode="",
        x=x,
        repetitions=10,
        groups=[[0, 1]],
        world_size=2,
        components=["t"],
        rank_times={"t": [tmin * 1e-6, tmax * 1e-6]},
        turnover=1,
    )


def test_verdicts_respect_threshold_and_spread():
    old = [rec(0, 1.0, 1.0), rec(8, 1.0, 1.0), rec(16, 1.0, 2.0)]
    new = [rec(0, 1.5, 1.5), rec(8, 1.02, 1.02), rec(16, 1.0, 2.6)]
    rows = {r.key[3]: r for r in compare(old, new, 0.05)}
    assert rows[0].verdict == "slower" and abs(rows[0].ratio - 1.5) < 1e-9
    assert rows[8].verdict == "same"
    assert rows[16].verdict == "same"  # 30% change within a 50%-62% rank spread
    assert "geometric mean" in render(list(rows.values()), "a", "b")


def test_a_methodology_knob_added_since_a_run_was_stored_is_not_a_difference():
    """A run stored (or a file written) before a methodology knob existed ran the old way:
    the new knob at imb4's value is no difference; another value of it is one."""
    from commbench import imb_methodology
    from commbench.store import index

    now = imb_methodology.PROFILES["imb4"].as_dict()
    before = {k: v for k, v in now.items() if k != "fenced_accumulate"}
    label = "methodology (--methodology)"
    assert index.differences({label: before}, {label: now}) == []
    fenced = {**now, "fenced_accumulate": True}
    assert index.differences({label: before}, {label: fenced})[0].startswith(label)
