"""The architecture contracts that run programs: layers that only point down (import-linter),
and the linter and formatter (ruff). Small modules and no import circles are
tests/unit/test_architecture.py."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "commbench"


def _lint_imports() -> list[str]:
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    if not Path(exe).exists():
        pytest.fail(
            "lint-imports is not installed: pip install -e '.[test]' installs import-linter"
        )
    return [exe, "--config", str(ROOT / "pyproject.toml"), "--no-cache"]


def test_layers_contract_is_kept():
    p = subprocess.run(_lint_imports(), cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "1 kept, 0 broken" in p.stdout


def test_layers_contract_fails_on_an_upward_import(tmp_path):
    """The contract is real: a suite that imports a view breaks it."""
    copy = tmp_path / "src"
    shutil.copytree(
        PACKAGE, copy / "commbench", ignore=shutil.ignore_patterns("__pycache__", "*.so")
    )
    with open(copy / "commbench" / "suites" / "mpi1.py", "a", encoding="utf-8") as f:
        f.write("\nfrom commbench.views import imb_text  # an upward import\n")
    env = {"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin"}
    p = subprocess.run(
        _lint_imports(), cwd=copy, capture_output=True, text=True, timeout=120, env=env
    )
    assert p.returncode != 0, p.stdout[-2000:]
    assert "commbench.suites is not allowed to import commbench.views" in p.stdout


@pytest.mark.parametrize(
    "args",
    [["check"], ["format", "--check"]],
    ids=["ruff-check", "ruff-format"],
)
def test_code_passes_the_linter_and_the_formatter(args):
    """`make lint`'s ruff half, so CI holds it too: the rules of pyproject.toml and lines of at
    most 100 characters as `ruff format` lays them out (issue 32, item 5)."""
    p = subprocess.run(
        [sys.executable, "-m", "ruff", *args, "commbench", "tests", "benchmarks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
