"""msgrate's single direction and pair-based: the seed's form against the Sandia C code's.

    python benchmarks/msgrate_sync.py [--rounds 5] [--np 4] [--iters 50]

The seed's pseudo-code pairs single direction by odd/even rank and puts no
barrier in single direction or pair-based; the Sandia C code pairs the lower
half with the upper half and adds an untimed barrier before every timed
iteration of both. This runs the four combinations of --pairing
odd-even|halves and --barriers in rotating rounds (each a fresh job) and
prints the median message rate of each pattern, and its ratio to the seed's
form (odd-even, no barriers). With more ranks than cores the runs are
oversubscribed (MPICH progress throttling, as commbench sets it): rates then
measure the scheduler as much as MPI.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from cfloor import REPO, conditions, env_for, median, mpiexec, rotate

FORMS = {
    "seed (odd-even, no barrier)": ["--pairing", "odd-even"],
    "odd-even + barriers": ["--pairing", "odd-even", "--barriers"],
    "C code (halves + barriers)": ["--pairing", "halves", "--barriers"],
    "halves, no barrier": ["--pairing", "halves"],
}
PATTERNS = ("single_direction", "pair_based")


def run(np_: int, iters: int, form: list[str], out: Path) -> dict[str, float]:
    cmd = [
        mpiexec(),
        "-n",
        str(np_),
        sys.executable,
        "-m",
        "commbench",
        "run",
        "msgrate",
        *PATTERNS,
        "--peers",
        str(np_ - 1),
        "--iters",
        str(iters),
        *form,
        "-o",
        str(out),
    ]
    p = subprocess.run(
        cmd, capture_output=True, text=True, timeout=600, env=env_for(np_), cwd=REPO, check=False
    )
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    return {
        r["benchmark"]: r["extra"]["messages_per_second"]
        for r in json.loads(out.read_text())["records"]
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--iters", type=int, default=50)
    a = ap.parse_args()
    rates: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as d:
        for k in range(a.rounds):
            for name in rotate(list(FORMS), k):
                for pat, r in run(a.np, a.iters, FORMS[name], Path(d) / "m.json").items():
                    rates.setdefault((name, pat), []).append(r)
    print(
        f"# {conditions()}; NP {a.np}, --peers {a.np - 1}, --iters {a.iters}; medians of "
        f"{a.rounds} rotating rounds"
    )
    print(f"{'form':32s}" + "".join(f"{p + ' [msgs/s]':>28s}{'x seed':>8s}" for p in PATTERNS))
    seed = next(iter(FORMS))
    for name in FORMS:
        line = f"{name:32s}"
        for pat in PATTERNS:
            m = median(rates[(name, pat)])
            line += f"{m:>28,.0f}{m / median(rates[(seed, pat)]):>8.2f}"
        print(line)


if __name__ == "__main__":
    main()
