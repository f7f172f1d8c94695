"""PingPong across the 2^31-byte line: does the MPI-4 large-count path keep the rate?

    python benchmarks/large_messages.py [--big BYTES] [--ref BYTES]

Runs one 2-rank PingPong job (MPICH wheel, one repetition per size, -mem
raised, --maxlog 32) over a reference size below 2^31 (plain int counts) and
a size above it (MPI_Send_c / MPI_Recv_c through mpi4py >= 4), and prints
the rates and their ratio. Needs about 4 x BIG bytes of free memory
(send + receive buffer on each of the two ranks).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", type=int, default=2**31 + 8)
    ap.add_argument("--ref", type=int, default=2**30)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from commbench.resources import mem_available
    from commbench.self_launcher import find_mpiexec

    need = 4 * args.big
    free = mem_available() or 0
    if free < need * 1.2:
        print(f"needs ~{need / 2**30:.1f} GiB free, MemAvailable is {free / 2**30:.1f} GiB")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        lens = Path(tmp) / "lens"
        lens.write_text(f"{args.ref}\n{args.big}\n")
        out = Path(tmp) / "r.json"
        mem = str(2 * args.big / 2**30 + 0.5)
        cmd = [
            find_mpiexec(),
            "-n",
            "2",
            sys.executable,
            "-m",
            "commbench",
            "run",
            "-msglen",
            str(lens),
            "--maxlog",
            "32",
            "-mem",
            mem,
            "-iter",
            "1",
            "-iter_policy",
            "off",
            "PingPong",
            "-o",
            str(out),
        ]
        t0 = time.monotonic()
        p = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )
        wall = time.monotonic() - t0
        if p.returncode != 0:
            print(p.stdout[-2000:], p.stderr[-2000:])
            return p.returncode
        recs = {
            r["bytes"]: r
            for r in json.loads(out.read_text())["records"]
            if r["benchmark"] == "PingPong"
        }
    ref, big = recs[args.ref]["values"], recs[args.big]["values"]
    print(
        f"PingPong {args.ref} B: {ref['t_max'] / 1e6:.3f} s one way, "
        f"{ref['bytes_per_sec'] / 1e6:.1f} MB/s"
    )
    print(
        f"PingPong {args.big} B: {big['t_max'] / 1e6:.3f} s one way, "
        f"{big['bytes_per_sec'] / 1e6:.1f} MB/s"
    )
    print(
        f"rate ratio large-count / int-count: {big['bytes_per_sec'] / ref['bytes_per_sec']:.3f} "
        f"(job wall time {wall:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
