"""One-sided buffers from MPI_Alloc_mem against numpy (and mmap) memory, side by side.

    python benchmarks/onesided_alloc.py [--rounds 5] [--kinds numpy,mpi,mmap] [--sizes 4,4096,...]
                                        [--hugepages default|on|off]

IMB-EXT and IMB-RMA allocate their buffers (and so their MPI_Win_create
windows) with MPI_Alloc_mem by default, as the spec says they SHOULD (§6.1);
--alloc numpy|mmap overrides. This measures what that choice changes here: on
2 processes, IMB-EXT Unidir_Put and Bidir_Get and IMB-RMA Unidir_put and
One_put_all run once per allocation kind per round, the kinds in rotating
order (who goes first changes every round), and the table gives per
benchmark, mode and size the median t[usec] of each kind over the rounds and
the ratios to numpy (< 1: faster than numpy memory), and in how many rounds
the kind beat numpy in the same round (a ratio whose rounds split is noise).
Every run's record of the kind it used is checked. Times are t_max of the
row, as IMB prints them; absolute numbers depend on the machine and its load.
Note that with --hugepages default numpy alone asks for huge pages (arrays
>= 4 MiB), so at 4 MiB the kinds also differ in page size.
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

from commbench.self_launcher import find_mpiexec

REPO = Path(__file__).resolve().parents[1]
RUNS = {"ext": ["Unidir_Put", "Bidir_Get"], "rma": ["Unidir_put", "One_put_all"]}
SIZES = "4,4096,65536,1048576,4194304"  # multiples of 4 (EXT's element size)


def run(
    family: str, kind: str, sizes: Path, a: argparse.Namespace, out: Path
) -> dict[tuple, float]:
    """(benchmark, mode, bytes) -> t_max [usec] of one `commbench run` with --alloc kind."""
    cmd = [
        find_mpiexec(),
        "-n",
        "2",
        sys.executable,
        "-m",
        "commbench",
        "run",
        "--suite",
        family,
        "-msglen",
        str(sizes),
        "-iter",
        a.iter,
        "-time",
        "2",
        "--alloc",
        kind,
        "--hugepages",
        a.hugepages,
        *RUNS[family],
        "-o",
        str(out),
    ]
    p = subprocess.run(cmd, check=False, cwd=REPO, capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stdout[-1500:]}{p.stderr[-1500:]}")
    doc = json.loads(out.read_text())
    recorded = (doc["config"]["alloc"], doc["metadata"]["buffer_allocation"]["kind"])
    if recorded != (kind, kind):
        sys.exit(f"--alloc {kind} recorded as {recorded}: {' '.join(cmd)}")
    return {
        (r["benchmark"], r["mode"], r["bytes"]): r["values"]["t_max"]
        for r in doc["records"]
        if r["status"] == "ok"
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--kinds", default="numpy,mpi,mmap", help="allocation kinds, numpy first (the ratios' base)"
    )
    ap.add_argument("--sizes", default=SIZES, help="message sizes in bytes, comma separated")
    ap.add_argument(
        "--iter", default="200,40,50", help="-iter caps of every run (msgs, MB, non-aggregate msgs)"
    )
    ap.add_argument(
        "--hugepages",
        default="default",
        choices=("default", "on", "off"),
        help="--hugepages of every run",
    )
    a = ap.parse_args()
    kinds = a.kinds.split(",")
    if kinds[0] != "numpy":
        ap.error("--kinds must start with numpy, the base of the ratios")
    times: dict[str, dict[tuple, list[float]]] = {k: {} for k in kinds}
    with tempfile.TemporaryDirectory() as d:
        sizes = Path(d) / "sizes"
        sizes.write_text("\n".join(a.sizes.split(",")) + "\n")
        for i in range(a.rounds):
            order = kinds[i % len(kinds) :] + kinds[: i % len(kinds)]  # rotate who goes first
            for family in RUNS:
                for kind in order:
                    for key, t in run(
                        family, kind, sizes, a, Path(d) / f"{family}-{kind}.json"
                    ).items():
                        times[kind].setdefault(key, []).append(t)
    print(
        f"# 2 processes, native engine; -iter {a.iter}; --hugepages {a.hugepages}; load "
        f"{os.getloadavg()[0]:.2f} at the end; median t[usec] of {a.rounds} rounds, kinds in "
        "rotating order; ratio = kind / numpy; wins = rounds where the kind beat numpy"
    )
    head = f"{'benchmark':<12} {'mode':<13} {'#bytes':>8}" + "".join(f" {k:>9}" for k in kinds)
    head += "".join(f" {k + '/numpy':>11} {'wins':>5}" for k in kinds[1:])
    print(head)
    base = times["numpy"]
    for key in base:  # in the order the runs produced them
        if not all(key in times[k] for k in kinds):
            continue
        med = {k: statistics.median(times[k][key]) for k in kinds}
        name, mode, x = key
        line = f"{name:<12} {mode or '-':<13} {x:>8}" + "".join(f" {med[k]:>9.2f}" for k in kinds)
        for k in kinds[1:]:
            ratio = f"{med[k] / med['numpy']:.2f}" if med["numpy"] > 0 else "-"
            wins = sum(t < b for t, b in zip(times[k][key], base[key]))
            line += f" {ratio:>11} {f'{wins}/{len(base[key])}':>5}"
        print(line)


if __name__ == "__main__":
    main()
