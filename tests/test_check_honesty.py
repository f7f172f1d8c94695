"""Check mode says only what it checked (issue: "Check mode says only what it checked").

Every benchmark of every family either has a verifier that fails on a
corrupted buffer (the fault injection COMMBENCH_FAULT_CORRUPT=<rank> makes that
rank send corrupted data) or is reported as "not checked" — in the results
(record extra "check") and in the IMB trailer — never "Successful".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from commbench import suites
from commbench.suites.base import Benchmark
from tests.mpirun import ENV, MPIEXEC, run_json

# > 32 repetitions: repeated in-place sums wrap to 0 mod 2^32 after 32 at NP 2.
CHECK = ["-iter", "40", "-iter_policy", "off", "-msglog", "0:3", "-check"]
KERNEL_FAMILIES = ("mpi1", "ext", "rma", "nbc", "comms", "pgas", "io")
DRIVER_FAMILIES = {"overhead": ["--sizes", "16,64", "--trials", "1", "--reps", "3", "--q-time", "100",
                                "--stream-time", "0.05", "--loggp-n", "3"],
                   "msgrate": ["--peers", "2", "--iters", "2", "--msgs", "4", "--cache-size", "0"]}


def test_every_family_is_covered():
    assert set(suites.family_names()) == set(KERNEL_FAMILIES) | set(DRIVER_FAMILIES)


def verdicts(family: str, corrupt: int | None, tmp_path: Path) -> dict[str, set[str]]:
    """benchmark -> the check verdicts of its rows, from a 2-rank kernel-level run."""
    names = [b.name for b in suites.family(family).benchmarks]
    extra = ["--iodir", str(tmp_path)] if family == "io" else []
    env = dict(os.environ, **ENV)
    if corrupt is not None:
        env["COMMBENCH_FAULT_CORRUPT"] = str(corrupt)
    cmd = [MPIEXEC, "-n", "2", sys.executable, str(Path(__file__).with_name("kernel_job.py")), family, *names,
           "--", *CHECK, *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    out: dict[str, set[str]] = {}
    for line in p.stdout.splitlines():
        row = json.loads(line) if line.startswith("{") else {}
        if "benchmark" in row and row["status"] == "ok":
            out.setdefault(row["benchmark"], set()).add(row["check"])
    return out


@pytest.mark.parametrize("family", KERNEL_FAMILIES)
def test_every_verifier_fails_on_a_corrupted_buffer_or_says_not_checked(family, tmp_path):
    clean = verdicts(family, None, tmp_path)
    # A rank that only receives (a put target, COMMS1's echoing rank) sends no
    # data of its own: the corruption must be caught with one rank or the other.
    bad = [verdicts(family, r, tmp_path) for r in (0, 1)]
    for b in suites.family(family).benchmarks:
        assert isinstance(b, Benchmark)
        if b.expected is None:
            assert clean[b.name] == {"not checked"}, b.name
            assert all(v[b.name] == {"not checked"} for v in bad), b.name
        else:
            assert clean[b.name] == {"successful"}, (b.name, clean[b.name])
            assert any("failed" in v[b.name] for v in bad), (b.name, bad[0][b.name], bad[1][b.name])


@pytest.mark.parametrize("family", list(DRIVER_FAMILIES))
def test_driver_families_say_not_checked(family, tmp_path):
    p, doc = run_json(tmp_path, 3, "--suite", family, "-check", *DRIVER_FAMILIES[family], timeout=300)
    rows = [r for r in doc["records"] if r["status"] == "ok"]
    assert rows and {r["extra"]["check"] for r in rows} == {"not checked"}


def test_trailer_names_the_unchecked(tmp_path):
    p, _ = run_json(tmp_path, 2, "-check", "-msglog", "0:2", "-iter", "5", "Allreduce", "Barrier")
    assert "!!!!  ALL CHECKED BENCHMARKS SUCCESSFUL; 1 NOT CHECKED !!!! " in p.stdout
    assert "Allreduce    : Successful" in p.stdout
    assert "Barrier    : not checked (no verifier looked at its data)" in p.stdout
    assert "Barrier    : Successful" not in p.stdout
