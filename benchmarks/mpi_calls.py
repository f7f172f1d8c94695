"""The MPI calls of an IMB 2021.11 benchmark and of commbench's, side by side, from a PMPI
log (benchmarks/c/calls_trace.c, loaded with LD_PRELOAD into both): what each calls per
repetition, with what arguments and, for a reduction, what its send buffer holds (issue 50:
EXT Accumulate below 64 KiB, MPI1 Reduce_scatter).

    python benchmarks/mpi_calls.py [--family ext] [--benchmark Accumulate] [--bytes 8] [--reps 5]
                                   [--rank 0|1] [--python <the Python of another MPI>]

Runs `IMB-<FAMILY> <benchmark> -msglen <bytes> -iter <reps> -iter_policy off` and `commbench
run --suite <family> <benchmark>` with the same options and --methodology imb2021, 2
processes, under the chosen MPI's mpiexec, and prints rank 0's calls with repeats folded
("5 x Accumulate 2 0": five calls of count 2 to rank 0; a fence's number is its assertion,
MPICH's MPI_MODE_NOPRECEDE 8192, MPI_MODE_NOSUCCEED 16384, 0 none; a reduction's
"z0/n16384/s0/x0" counts its send buffer's zero, normal, subnormal and not-finite floats).
commbench's own harness calls (its barriers and timing reductions) are in the log too.
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import mpis  # noqa: E402 - benchmarks/mpis.py beside this script


def folded(lines: list[str]) -> list[str]:
    return [f"{len(list(g))} x {k}" for k, g in itertools.groupby(lines)]


def calls(cmd: list[str], env: dict, tmp: Path, rank: int = 0) -> list[str]:
    for f in tmp.glob("calls.*"):
        f.unlink()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr[-1500:]}")
    (log,) = sorted(tmp.glob(f"calls.{rank}.*"))[:1]
    return log.read_text().splitlines()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", default="ext", choices=["mpi1", "ext", "rma", "nbc", "mpi4"])
    ap.add_argument("--benchmark", default="Accumulate")
    ap.add_argument("--bytes", type=int, default=8)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rank", type=int, default=0, choices=[0, 1], help="whose calls (default 0)")
    mpis.add_arguments(ap, peers="IMB-MPI1, IMB-EXT, IMB-RMA, IMB-NBC and IMB-MPI4")
    a = ap.parse_args()
    mpi = mpis.select(a)
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        lib = t / "libtrace.so"
        src = HERE / "c" / "calls_trace.c"
        subprocess.run([mpi.mpicc, "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
        (t / "lens").write_text(f"{a.bytes}\n")
        opts = ["-msglen", str(t / "lens"), "-iter", str(a.reps), "-iter_policy", "off"]
        # the library's run environment (Open MPI as root, its oversubscription), the log
        env = dict(mpi.env(2), LD_PRELOAD=str(lib), CALLS_TRACE_DIR=tmp)
        env["LD_LIBRARY_PATH"] = os.path.dirname(mpi.library.path)
        peer = f"IMB-{a.family.upper()}"
        imb = mpi.peers("imb") / peer  # the build for this library (--peers, else its own)
        runs = {
            f"{peer} 2021.11": [*mpi.launch(2), str(imb), a.benchmark, *opts],
            "commbench": [*mpi.launch(2), mpi.python, "-m", "commbench", "run",
                          "--suite", a.family, a.benchmark, *opts, "--methodology", "imb2021",
                          "-o", "-"],
        }  # fmt: skip
        for name, cmd in runs.items():
            print(f"== {name}: rank {a.rank}'s calls, {a.benchmark} at {a.bytes} bytes")
            for line in folded(calls(cmd, env, t, a.rank)):
                print(f"   {line}")


if __name__ == "__main__":
    main()
