"""Comparison view: pure logic on synthetic records, and the CLI on real results files."""

from commbench import records
from commbench.suites.base import Kind
from commbench.views.compare import compare
from commbench.views.compare_text import render
from tests.support.mpirun import FAST, commbench, run_json


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


def test_compare_cli(tmp_path):
    a = tmp_path / "a"
    b = tmp_path / "b"
    a.mkdir()
    b.mkdir()
    run_json(a, 2, *FAST, "-msglog", "3", "PingPong")
    run_json(b, 2, *FAST, "-msglog", "3", "PingPong")
    p = commbench("compare", str(a / "r2.json"), str(b / "r2.json"))  # no --samples: nothing tested
    assert p.returncode == 2 and "5 matched rows" in p.stdout and "[nothing-tested]" in p.stdout
    p = commbench("compare", str(a / "r2.json"), str(a / "r2.json"), "--gate-unsampled")
    assert p.returncode == 0 and "5 matched rows" in p.stdout
    assert commbench("compare", str(a / "r2.json")).returncode == 2


def test_untested_rows_of_a_family_without_samples_get_no_dead_end_advice(tmp_path):
    """gpcnet takes no --samples: the gate's refusal says its rows cannot be tested here,
    not "run both with --samples K", which the run would refuse."""
    files = []
    for i in range(2):
        f = tmp_path / f"g{i}.json"
        p = commbench("run", "-n", "2", "--suite", "gpcnet", "RRTwoSidedLat", "-time", "0.05",
                      "-o", str(f))  # fmt: skip
        assert p.returncode == 0, p.stderr[-1500:]
        files.append(str(f))
    p = commbench("run", "-n", "2", "--suite", "gpcnet", "RRTwoSidedLat", "--samples", "10")
    assert p.returncode == 2  # what the advice would have led to
    p = commbench("compare", *files)
    assert p.returncode == 2 and "the gpcnet family takes no --samples" in p.stdout + p.stderr
    assert "--samples K" not in p.stdout + p.stderr
