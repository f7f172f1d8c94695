"""commbench's osu family against the real OSU Micro-Benchmarks 7.4 on the same MPI (issue 14).

    python benchmarks/osu_side_by_side.py [--rounds 5] [--benchmarks latency,bw,bibw]
                                          [--sizes 1,8,1024,65536,1048576,4194304]
                                          [--args "-i 1000 -x 100"]
                                          [--python PATH] [--mpiexec PATH] [--peers DIR]

Runs <peers>/osu_<name> (unmodified OMB 7.4) and `commbench run -n 2 --suite
osu <name>` with the same OSU options (-m <smallest>:<largest size> and --args, by
default OSU's own counts), each a fresh job, alternating which goes first
every round. Both print OSU's layout; the same parser reads the rows. The
table shows per benchmark and size the median over rounds of each tool's
number (latency in us, bandwidth in MB/s) and commbench/OSU of those medians:
near 1 is the same, above 1 for latency is commbench slower, above 1 for
bandwidth is commbench faster. Buffers: commbench's osu default (--alloc mmap,
no huge-page advice) against OSU's posix_memalign'ed ones (no THP under
"madvise").

The MPI (benchmarks/mpis.py) is the one --python's mpi4py loads (default: this
Python's, the mpich wheel here): commbench runs as `<python> -m commbench run
-n 2 --mpiexec <that library's mpiexec>`, OSU under the same mpiexec with
LD_LIBRARY_PATH at the library's folder (the peers carry no search path) and
the same settings as commbench's launcher gives its runs (Open MPI as root,
OMPI_MCA_osc=^ucx without RDMA devices). The peers: --peers DIR, by default
../shared/peers/osu (built against the mpich wheel: the MPICH ABI, so Intel
MPI's too), for Open MPI ../shared/peers/openmpi/osu. The header names the
library, the Python, the mpiexec, the peers and what was set.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

import mpis
from cfloor import conditions, median, rotate

SIZES = [1, 8, 1024, 65536, 2**20, 4 * 2**20]


def rows(text: str) -> dict[int, float]:
    """OSU text -> {size: the first number of its row} (one table); a table without sizes
    (osu_barrier, osu_ibarrier) gives its row under size 0."""
    out, sized = {}, True
    for line in text.splitlines():
        t = line.split()
        if line.startswith("#") and t[1:2] in (
            ["Size"],
            ["Avg"],
            ["Overall(us)"],
        ):  # ibarrier: no size
            sized = t[1] == "Size"
        elif len(t) >= 2 and t[0].isdigit() and sized:
            out[int(t[0])] = float(t[1])
        elif t and not sized and t[0].replace(".", "", 1).isdigit():
            out[0] = float(t[0])
    return out


def run(cmd: list[str], env: dict) -> dict[int, float]:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1200, env=env, check=False)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout[-1000:]}{p.stderr[-2000:]}")
    return rows(p.stdout)


def contenders(mpi: mpis.MPI, name: str, args: list[str]) -> dict[str, list[str]]:
    return {
        "osu": [*mpi.launch(2), str(mpi.peers("osu") / f"osu_{name}"), *args],
        "commbench": mpi.commbench(2, ["--suite", "osu", name, *args, "-o", "-"]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--benchmarks", "--bench", default="latency,bw,bibw")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--args", default="", help="more OSU options for both, e.g. '-i 1000 -x 100'")
    mpis.add_arguments(ap, peers="osu_<name>")
    a = ap.parse_args()
    mpi = mpis.select(a)
    sizes = [int(s) for s in a.sizes.split(",")]
    # From the smallest size asked: OMB's larger rows depend on the smaller ones run before
    # them in its process (bibw 64 KiB on Open MPI, docs/engines.md), so a run from 1 B
    # and one from 64 KiB read the 64 KiB row differently.
    args = ["-m", f"{min(sizes)}:{max(sizes)}", *a.args.split()]
    missing = [n for n in a.benchmarks.split(",") if not (mpi.peers("osu") / f"osu_{n}").is_file()]
    if missing:
        sys.exit(f"no osu_{missing[0]} in {mpi.peers('osu')} (the OMB 7.4 peers: ../shared/peers)")
    env = mpi.env(2)
    first = mpi.peers("osu") / f"osu_{a.benchmarks.split(',')[0]}"
    which = f"peers: {mpis.shown(first.parent)} (OMB 7.4; {mpi.linked(first)})"
    print("\n".join(mpi.header([2], which)))
    print(f"# {conditions()}")
    print(f"# {a.rounds} rounds, alternating; OSU options: {' '.join(args)}")
    print(f"{'benchmark':<10} {'bytes':>9} {'OSU':>12} {'commbench':>12} {'cb/OSU':>8}")
    for name in a.benchmarks.split(","):
        got: dict[str, dict[int, list[float]]] = {"osu": {}, "commbench": {}}
        tools = contenders(mpi, name, args)
        for k in range(a.rounds):
            for tool in rotate(list(tools), k):
                for size, v in run(tools[tool], env).items():
                    got[tool].setdefault(size, []).append(v)
        bw = any(w in name for w in ("bw", "mbw_mr"))  # MB/s: above 1 is commbench faster
        for size in sizes if any(got["osu"]) and 0 not in got["osu"] else [0]:
            o, c = median(got["osu"].get(size, [])), median(got["commbench"].get(size, []))
            print(
                f"{name:<10} {size:>9} {o:>12.2f} {c:>12.2f} {c / o if o else float('nan'):>8.3f}"
                f"  {'MB/s, >1 = commbench faster' if bw else 'us, >1 = commbench slower'}",
                flush=True,
            )


if __name__ == "__main__":
    main()
