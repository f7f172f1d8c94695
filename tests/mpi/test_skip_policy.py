"""The CI skip policy (tests/support/skip_policy.py) is real: an undeclared skip fails a
strict run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

INNER = """
import pytest

def test_declared():
    pytest.skip("peer binaries absent: no osu_latency here")

def test_undeclared():
    pytest.skip("no Slurm here: slurmctld did not answer in 30 s")

def test_runs():
    assert True
"""


def _inner(tmp_path: Path, strict: bool) -> subprocess.CompletedProcess:
    (tmp_path / "test_inner.py").write_text(INNER)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = {k: v for k, v in os.environ.items() if k != "COMMBENCH_STRICT_SKIPS"}
    if strict:
        env["COMMBENCH_STRICT_SKIPS"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "tests.support.skip_policy",
            "-c",
            "pytest.ini",
        ]
        + ["-p", "no:cacheprovider", "test_inner.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_an_undeclared_skip_fails_a_strict_run_and_is_named(tmp_path):
    p = _inner(tmp_path, strict=True)
    assert p.returncode == 1, p.stdout[-2000:]
    assert "skips not declared in tests/support/skip_policy.py" in p.stdout
    assert "test_undeclared: no Slurm here" in p.stdout
    assert "test_declared:" not in p.stdout.split("skips not declared")[1]


def test_without_strictness_skips_are_only_listed(tmp_path):
    p = _inner(tmp_path, strict=False)
    assert p.returncode == 0, p.stdout[-2000:]
    assert "1 passed, 2 skipped" in p.stdout
