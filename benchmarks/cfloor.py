"""Shared by the benchmark scripts: build and run the C floor, run commbench, take medians.

The C programs in benchmarks/c/ are built with the bundled mpicc (found like
commbench finds mpiexec: beside Python) into benchmarks/build/ (gitignored),
rebuilt when their source changes. Everything runs from this checkout: the
commbench measured is the one in this repository, not an installed copy.
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from commbench.launch import find_mpiexec  # noqa: E402 - this checkout's commbench first
from commbench.native import find_mpicc  # noqa: E402

C_DIR = REPO / "benchmarks" / "c"
BUILD = REPO / "benchmarks" / "build"
CORES = os.cpu_count() or 1
# commbench's own oversubscription setting (commbench.launch): more MPICH processes
# than cores need throttled polling; both sides of a comparison get the same env.
THROTTLE = {
    "MPIR_CVAR_CH4_PROGRESS_THROTTLE": "1",
    "MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT": "64",
}


def env_for(np_: int) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    if np_ > CORES:
        env.update(THROTTLE)
    return env


def build(name: str) -> Path:
    """benchmarks/build/<name>, compiled from benchmarks/c/<name>.c with the bundled mpicc."""
    mpicc = find_mpicc()
    if mpicc is None:
        sys.exit("no mpicc beside Python or on PATH (pip install mpich)")
    sources = [C_DIR / f"{name}.c", C_DIR / "floor.h"]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources) + mpicc.encode()).hexdigest()[
        :12
    ]
    exe, stamp = BUILD / name, BUILD / f".{name}.hash"
    if exe.is_file() and stamp.is_file() and stamp.read_text() == digest:
        return exe
    BUILD.mkdir(parents=True, exist_ok=True)
    cmd = [mpicc, "-O2", "-o", str(exe), str(sources[0])]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        sys.exit(f"building {name} failed:\n{' '.join(cmd)}\n{p.stderr}")
    stamp.write_text(digest)
    return exe


def mpiexec() -> str:
    m = find_mpiexec()
    if m is None:
        sys.exit("no mpiexec beside Python or on PATH (pip install mpich)")
    return m


def run_c(np_: int, exe: Path, items: list[str], alloc: list[str]) -> list[list[str]]:
    cmd = [mpiexec(), "-n", str(np_), str(exe), *alloc, *items]
    p = subprocess.run(
        cmd, capture_output=True, text=True, timeout=600, env=env_for(np_), check=False
    )
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    return [line.split() for line in p.stdout.splitlines() if line.strip()]


def run_commbench(np_: int, args: list[str]) -> dict:
    """`mpiexec -n np python -m commbench run ARGS` from this checkout; the results document."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "r.json"
        cmd = [
            mpiexec(),
            "-n",
            str(np_),
            sys.executable,
            "-m",
            "commbench",
            "run",
            *args,
            "-o",
            str(out),
        ]
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
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",) * 3
    try:
        from importlib.metadata import version

        mpich = version("mpich")
    except Exception:  # noqa: BLE001 -- only for the printed conditions
        mpich = "?"
    return (
        f"{CORES} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
        f"mpich wheel {mpich}, Python {sys.version.split()[0]}"
    )


def rotate(items: list, k: int) -> list:
    """Round k's order: the contenders take turns going first."""
    k %= len(items)
    return items[k:] + items[:k]
