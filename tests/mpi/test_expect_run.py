"""`commbench run --expect FILE`: the finished run judged by a site's expectations, under the
launcher and under the user's own mpiexec (real MPI processes); bad rules refused before
anything is measured. The command on files alone: tests/unit/test_expect.py."""

from __future__ import annotations

import json

from tests.support.mpirun import FAST, commbench, mpiexec

RULES = '[[expect]]\nbenchmark = "PingPong"\nbytes = "0..8"\nt = "{bound}"\n'


def _rules(tmp_path, bound: str, name: str = "site.toml") -> str:
    p = tmp_path / name
    p.write_text(RULES.format(bound=bound))
    return str(p)


def test_the_run_takes_the_verdicts_exit_status(tmp_path):
    loose, tight = _rules(tmp_path, "<= 10 s", "loose.toml"), _rules(tmp_path, "<= 1 ns")
    out = tmp_path / "r.json"
    p = commbench("run", "-n", "2", "PingPong", "-msglog", "0:3", *FAST, "-o", str(out),
                  "--expect", loose)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "#bytes #repetitions" in p.stdout  # IMB's table first, then the verdicts
    assert "5 pass, 0 fail, 0 no data" in p.stdout
    assert json.loads(out.read_text())["config"]["expect"] == loose
    out.unlink()
    p = mpiexec(2, "run", "PingPong", "-msglog", "0:3", *FAST, "-o", str(out), "--expect", tight)
    assert p.returncode == 1, p.stderr  # under the user's mpiexec: rank 0 judges, once
    assert p.stdout.count("commbench expect: 0 pass, 5 fail") == 1
    assert p.stdout.index("#bytes") < p.stdout.index("FAIL     PingPong np=2 bytes=0")


def test_bad_rules_are_refused_before_measuring(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[expect]]\nbenchmark = "PingPong"\nbandwidth = "<= 2 us"\n')
    out = tmp_path / "r.json"
    for run in (
        lambda: commbench("run", "-n", "2", "PingPong", "-o", str(out), "--expect", str(bad)),
        lambda: mpiexec(2, "run", "PingPong", "-o", str(out), "--expect", str(bad)),
    ):
        p = run()
        assert p.returncode == 2 and "bad.toml:1" in p.stderr and "'us' is a time" in p.stderr
        assert not out.exists() and "#bytes" not in p.stdout
