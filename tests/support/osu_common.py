"""What the osu family's tests share: the options each reference output was made with
(tests/data/osu/collect.py's REFS), a preloaded shim built from tests/data/osu/ (made-up
clocks, call logs) and the check that a bad option value is refused."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.mpirun import commbench

DATA = Path(__file__).parents[1] / "data" / "osu"


def _reference_options() -> dict[str, str]:
    """collect.py's REFS: ref/<name>.txt -> the OSU options that made it (one table for the
    script that writes the outputs and the tests that rerun them in commbench)."""
    spec = importlib.util.spec_from_file_location("osu_collect", DATA / "collect.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.REFS


REFS = _reference_options()


def library(tmp_path: Path, source: str) -> Path:
    """tests/data/osu/<source> built with the mpicc beside Python, to LD_PRELOAD."""
    mpicc = Path(sys.prefix) / "bin" / "mpicc"
    if not mpicc.exists():
        pytest.skip("no mpicc beside Python")
    lib = tmp_path / (Path(source).stem + ".so")
    subprocess.run([str(mpicc), "-shared", "-fPIC", "-o", str(lib), str(DATA / source)], check=True)
    return lib


def assert_refused(tmp_path: Path, args: list[str], words: str) -> None:
    """`commbench run -n 2 --suite osu <args>` exits 2 before writing anything, saying `words`."""
    p = commbench(
        "run", "-n", "2", "--suite", "osu", *args, "-o", str(tmp_path / "r.json"), timeout=120
    )
    assert p.returncode == 2 and words in p.stderr and "Traceback" not in p.stderr, p.stderr[-1500:]
    assert not (tmp_path / "r.json").exists()
