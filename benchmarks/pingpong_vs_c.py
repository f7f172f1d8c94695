#!/usr/bin/env python3
"""commbench's PingPong against a minimal C pingpong on the same MPI, in one run.

    python benchmarks/pingpong_vs_c.py [--rounds 7] [--engines native,mpi4py] [--alloc mmap|numpy]
                                       [--hugepages on|off|default] [--sizes 1048576,4194304]
                                       [--python PATH] [--mpiexec PATH] [--mpicc PATH]

The MPI is the one --python's mpi4py loads (default: this Python's; the C floor
is built with its mpicc and run under its mpiexec: benchmarks/mpis.py).
The C floor (benchmarks/c/pingpong.c, built here with that MPI's mpicc) runs
the IMB PingPong pattern and timed region: rank 0 Send / Recv(ANY_SOURCE),
rank 1 Recv / Send, two barriers before the loop, t = dt / (2 n), t_max over
the ranks. commbench runs PingPong with the same sizes (-msglen), the same
repetition counts (-iter N -iter_policy off) and the same buffer kind. The
contenders take turns (the order rotates every round), each round launches
every one of them afresh, and the table shows medians over the rounds, plus
the ratio of the best (minimum) times, which is steadier on a busy machine.
"""

from __future__ import annotations

import argparse
import os

import mpis
from cfloor import build, conditions, median, msglen_file, rotate, run_c, run_commbench

SIZES = [0, 8, 1024, 2**20, 4 * 2**20]
# Repetitions per size group: ~0.1-0.5 s of messages per launch on a quiet machine.
SMALL_REPS, LARGE_REPS = 20000, 300
LARGE = 2**20


def groups(sizes: list[int], scale: float = 1.0) -> list[tuple[list[int], int]]:
    small = [s for s in sizes if s < LARGE]
    large = [s for s in sizes if s >= LARGE]
    return [
        (g, max(1, round(n * scale))) for g, n in ((small, SMALL_REPS), (large, LARGE_REPS)) if g
    ]


def measure_pingpong(
    sizes: list[int],
    engines: list[str],
    rounds: int,
    alloc: str,
    scale: float = 1.0,
    hugepages: str = "default",
) -> dict:
    """{(contender, size): [t_usec per round]} for contender 'C' and each engine."""
    exe = build("pingpong")
    c_alloc = ["--alloc", "malloc" if alloc == "numpy" else "mmap", "--hugepages", hugepages]
    cb_alloc = ["--alloc", alloc, "--hugepages", hugepages]
    files = {tuple(g): msglen_file(g) for g, _ in groups(sizes, scale)}
    out: dict = {}
    try:
        for k in range(rounds):
            for who in rotate(["C", *engines], k):
                for g, n in groups(sizes, scale):
                    if who == "C":
                        for size, _reps, t in run_c(2, exe, [f"{s}:{n}" for s in g], c_alloc):
                            out.setdefault(("C", int(size)), []).append(float(t))
                        continue
                    doc = run_commbench(
                        2,
                        [
                            "PingPong",
                            "-msglen",
                            files[tuple(g)],
                            "-iter",
                            str(n),
                            "-iter_policy",
                            "off",
                            "-time",
                            "1000",
                            "--engine",
                            who,
                            *cb_alloc,
                        ],
                    )
                    for rec in doc["records"]:
                        if rec["status"] != "ok":
                            continue
                        if rec["extra"].get("engine") != who:
                            raise SystemExit(
                                f"commbench ran {rec['extra'].get('engine')} instead of {who}: "
                                f"{doc['metadata'].get('engine_detail')}"
                            )
                        if rec["repetitions"] != n:
                            raise SystemExit(
                                f"commbench used {rec['repetitions']} repetitions, not {n}"
                            )
                        out.setdefault((who, rec["bytes"]), []).append(rec["values"]["t_max"])
    finally:
        for f in files.values():
            os.unlink(f)
    return out


def target(engine: str, size: int, ratio: float) -> str:
    if engine != "native":
        return ""
    limit = 1.05 if size <= 8 else 1.02 if size >= 2**20 else None
    if limit is None:
        return ""
    return f"{'met' if ratio <= limit else 'MISSED'} (<= {limit:.2f})"


def print_pingpong(res: dict, sizes: list[int], engines: list[str], rounds: int) -> None:
    print(
        "PingPong, 2 processes: t[usec] = half round trip, t_max over the ranks; median of "
        f"{rounds} rounds"
    )
    head = f"{'#bytes':>9} {'C floor':>9}" + "".join(f" {e:>9}" for e in engines)
    head += "".join(f" {e + '/C':>10} {'best ' + e + '/C':>15}" for e in engines) + "  target"
    print(head)
    for s in sizes:
        c = res.get(("C", s), [])
        line = f"{s:>9} {median(c):>9.3f}"
        for e in engines:
            line += f" {median(res.get((e, s), [])):>9.3f}"
        targets = []
        for e in engines:
            v = res.get((e, s), [])
            ratio = median(v) / median(c)
            line += f" {ratio:>10.3f} {min(v) / min(c):>15.3f}"
            targets.append(target(e, s, ratio))
        print(line + "  " + " ".join(t for t in targets if t))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument(
        "--engines", default="native,mpi4py", help="commbench engines to compare (comma list)"
    )
    ap.add_argument(
        "--alloc",
        choices=("mmap", "numpy"),
        default="mmap",
        help="buffer kind on both sides (numpy: malloc in C)",
    )
    ap.add_argument(
        "--hugepages",
        choices=("on", "off", "default"),
        default="default",
        help="transparent huge pages for the buffers on both sides (madvise)",
    )
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="message sizes (comma list)")
    ap.add_argument(
        "--scale", type=float, default=1.0, help="multiply the repetition counts (smoke tests)"
    )
    mpis.add_arguments(ap)
    a = ap.parse_args()
    mpi = mpis.select(a)
    print("\n".join(mpi.header([2], f"C floor: benchmarks/c/pingpong.c, {mpi.c_floor()}")))
    engines = [e for e in a.engines.split(",") if e]
    sizes = [int(x) for x in a.sizes.split(",") if x]
    print(f"# conditions: {conditions()}; --alloc {a.alloc} --hugepages {a.hugepages}")
    res = measure_pingpong(sizes, engines, a.rounds, a.alloc, a.scale, a.hugepages)
    print_pingpong(res, sizes, engines, a.rounds)
    print(f"# conditions at the end: {conditions()}")


if __name__ == "__main__":
    main()
