"""Comparison view: the CLI on real results files (the verdicts on synthetic records are
tests/unit/test_compare.py)."""

from tests.support.mpirun import FAST, commbench, run_json


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
