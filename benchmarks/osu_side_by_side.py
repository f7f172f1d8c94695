"""commbench's osu family against the real OSU Micro-Benchmarks 7.4 on the same MPI (issue 14).

    python benchmarks/osu_side_by_side.py [--rounds 5] [--benchmarks latency,bw,bibw]
                                          [--sizes 1,8,1024,65536,1048576,4194304]
                                          [--args "-i 1000 -x 100"]

Runs ../shared/peers/osu/osu_<name> (unmodified OMB 7.4, linked with the mpich
wheel commbench installs; LD_LIBRARY_PATH points it at this Python's libmpi)
and `commbench run -n 2 --suite osu <name>` with the same OSU options
(-m 1:<largest size> and --args, by default OSU's own counts), each a fresh
job, alternating which goes first every round. Both print OSU's layout; the
same parser reads the rows. The table shows per benchmark and size the
median over rounds of each tool's number (latency in us, bandwidth in MB/s)
and commbench/OSU of those medians: near 1 is the same, above 1 for latency
is commbench slower, above 1 for bandwidth is commbench faster. Buffers:
commbench's osu default (--alloc mmap, no huge-page advice) against OSU's
posix_memalign'ed ones (no THP under "madvise").
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from cfloor import REPO, conditions, env_for, median, mpiexec, rotate

PEERS = REPO.parent / "shared" / "peers" / "osu"
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


def contenders(name: str, args: list[str]) -> dict[str, list[str]]:
    return {
        "osu": [mpiexec(), "-n", "2", str(PEERS / f"osu_{name}"), *args],
        "commbench": [
            sys.executable,
            "-m",
            "commbench",
            "run",
            "-n",
            "2",
            "--suite",
            "osu",
            name,
            *args,
            "-o",
            "-",
        ],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--benchmarks", "--bench", default="latency,bw,bibw")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--args", default="", help="more OSU options for both, e.g. '-i 1000 -x 100'")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    args = ["-m", f"1:{max(sizes)}", *a.args.split()]
    env = env_for(2)
    env["LD_LIBRARY_PATH"] = (
        os.path.join(sys.prefix, "lib") + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    )
    print(f"# {conditions()}")
    print(f"# {a.rounds} rounds, alternating; OSU options: {' '.join(args)}")
    print(f"{'benchmark':<10} {'bytes':>9} {'OSU':>12} {'commbench':>12} {'cb/OSU':>8}")
    for name in a.benchmarks.split(","):
        got: dict[str, dict[int, list[float]]] = {"osu": {}, "commbench": {}}
        tools = contenders(name, args)
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
