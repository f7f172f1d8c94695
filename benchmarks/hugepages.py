"""Large-message PingPong with transparent huge pages on and off, side by side.

Runs `commbench run -n 2 PingPong` over 256 KiB … 4 MiB with numpy buffers
(numpy's own choice), and mmap buffers with --hugepages on and off (madvise),
in rotating rounds, and prints the median time per size and the ratios. The allocation kind
is the kind of number that must be recorded with a result: this is how much it matters here.

    python benchmarks/hugepages.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


KINDS = {
    "numpy": ["--alloc", "numpy"],  # numpy's own choice: madvise(HUGEPAGE) from 4 MiB
    "on": ["--alloc", "mmap", "--hugepages", "on"],
    "off": ["--alloc", "mmap", "--hugepages", "off"],
}


def run(kind: str, out: Path) -> dict[int, float]:
    cmd = [
        sys.executable,
        "-m",
        "commbench",
        "run",
        "-n",
        "2",
        "PingPong",
        "-msglog",
        "18:22",
        "-iter",
        "200",
        *KINDS[kind],
        "-o",
        str(out),
    ]
    subprocess.run(cmd, check=True, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    doc = json.loads(out.read_text())
    return {r["bytes"]: r["values"]["t_max"] for r in doc["records"] if r["bytes"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    times: dict[str, dict[int, list[float]]] = {k: {} for k in KINDS}
    order = list(KINDS)
    with tempfile.TemporaryDirectory() as d:
        for i in range(args.rounds):
            for kind in order[i % 3 :] + order[: i % 3]:  # rotate who goes first
                for x, t in run(kind, Path(d) / f"{kind}.json").items():
                    times[kind].setdefault(x, []).append(t)
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text().strip()
    print(
        f"# PingPong, 2 processes, native engine; THP: {thp}; load {os.getloadavg()[0]:.2f}; "
        f"median of {args.rounds} rotating rounds; t in usec"
    )
    print(
        f"{'#bytes':>9} {'numpy':>9} {'mmap+huge':>10} {'mmap-huge':>10} {'off/on':>7} "
        f"{'numpy/on':>9}"
    )
    for x in sorted(times["on"]):
        t = {k: statistics.median(times[k][x]) for k in KINDS}
        print(
            f"{x:>9} {t['numpy']:>9.1f} {t['on']:>10.1f} {t['off']:>10.1f} "
            f"{t['off'] / t['on']:>7.2f} {t['numpy'] / t['on']:>9.2f}"
        )


if __name__ == "__main__":
    main()
