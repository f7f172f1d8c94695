"""Shared by the benchmark scripts: build and run the C floor, run commbench, take medians.

Everything runs on the MPI that benchmarks/mpis.py selects (a script's --python,
--mpiexec, --mpicc; by default the one this Python's mpi4py loads, the mpich
wheel's here). The C programs in benchmarks/c/ are built with that MPI's mpicc
into benchmarks/build/<wrapper>/ (gitignored), rebuilt when their source
changes. Everything runs from this checkout: the commbench measured is the one
in this repository, not an installed copy.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import mpis
from mpis import CORES, REPO

C_DIR = REPO / "benchmarks" / "c"
BUILD = REPO / "benchmarks" / "build"


def env_for(np_: int) -> dict:
    """The environment of a run of np_ processes on the selected MPI (mpis.MPI.env)."""
    return mpis.current().env(np_)


def build(name: str) -> Path:
    """benchmarks/build/<wrapper>/<name>, compiled from benchmarks/c/<name>.c with the selected
    MPI's mpicc (Intel MPI's wheel wrapper with I_MPI_ROOT: mpis.MPI.compiler_env)."""
    mpi = mpis.current()
    if mpi.mpicc is None:
        sys.exit(f"no mpicc of {mpi.name} beside it or on PATH (pass --mpicc PATH)")
    sources = [C_DIR / f"{name}.c", C_DIR / "floor.h"]
    where = hashlib.sha256(mpi.mpicc.encode()).hexdigest()[:8]  # one folder per wrapper
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources) + mpi.mpicc.encode())
    digest = digest.hexdigest()[:12]
    exe, stamp = BUILD / where / name, BUILD / where / f".{name}.hash"
    if exe.is_file() and stamp.is_file() and stamp.read_text() == digest:
        return exe
    exe.parent.mkdir(parents=True, exist_ok=True)
    cmd = [mpi.mpicc, "-O2", "-o", str(exe), str(sources[0])]
    p = subprocess.run(cmd, capture_output=True, text=True, env=mpi.compiler_env(), check=False)
    if p.returncode != 0:
        sys.exit(f"building {name} failed:\n{' '.join(cmd)}\n{p.stderr}")
    stamp.write_text(digest)
    return exe


def mpiexec() -> str:
    """The selected MPI's mpiexec."""
    return mpis.current().mpiexec


def run_c(np_: int, exe: Path, items: list[str], alloc: list[str]) -> list[list[str]]:
    cmd = [*mpis.current().launch(np_), str(exe), *alloc, *items]
    p = subprocess.run(
        cmd, capture_output=True, text=True, timeout=600, env=env_for(np_), check=False
    )
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    return [line.split() for line in p.stdout.splitlines() if line.strip()]


def run_commbench(np_: int, args: list[str]) -> dict:
    """`<python> -m commbench run -n np --mpiexec <mpiexec> ARGS` of the selected MPI, from this
    checkout; the results document."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "r.json"
        cmd = mpis.current().commbench(np_, [*args, "-o", str(out)])
        p = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=600,
            env=env_for(np_),
            cwd=REPO,
            check=False,
        )
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr[-3000:]}")
        return json.loads(out.read_text())


def compare_json(*args: str) -> tuple[int, dict | None, str]:
    """`commbench compare ARGS --json -` of this checkout: (its exit status, its JSON or None
    when it wrote none, its stderr)."""
    p = subprocess.run(
        [sys.executable, "-m", "commbench", "compare", *args, "--json", "-"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        timeout=300,
        check=False,
    )
    try:
        return p.returncode, json.loads(p.stdout), p.stderr
    except ValueError:
        return p.returncode, None, p.stderr


def msglen_file(sizes: list[int]) -> str:
    fd, path = tempfile.mkstemp(suffix=".msglen")
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(str(s) for s in sizes) + "\n")
    return path


def wall(cmd: list[str], env: dict, cwd: str | Path) -> float:
    t0 = time.perf_counter()
    p = subprocess.run(
        cmd, capture_output=True, text=True, timeout=600, env=env, cwd=cwd, check=False
    )
    t = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    return t


def median(v: list[float]) -> float:
    return statistics.median(v) if v else float("nan")


def conditions() -> str:
    mpi = mpis.current()
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",) * 3
    return (
        f"{CORES} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
        f"{mpi.name}, {mpi.versions}"
    )


def rotate(items: list, k: int) -> list:
    """Round k's order: the contenders take turns going first."""
    k %= len(items)
    return items[k:] + items[:k]
