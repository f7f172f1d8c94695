#!/usr/bin/env python3
"""commbench's engines (native C loops, mpi4py Python loops) against the C floor, in one run.

    python benchmarks/engines_vs_c.py [--rounds 5] [--alloc mmap|numpy] [--hugepages on|off|default]
                                      [--skip-startup] [--python PATH] [--mpiexec PATH]
                                      [--mpicc PATH] [--sizes 0,8,1024,...]

1. PingPong at 0 B, 8 B, 1 KiB, 64 KiB, 1 MiB, 4 MiB (2 processes) against
   benchmarks/c/pingpong.c; targets: native within 5 % of C at 0-8 B and within
   2 % at >= 1 MiB.
2. Allreduce at 8 B and Barrier at 2 and 4 processes against
   benchmarks/c/collectives.c (t_avg over the ranks; 4 processes on fewer cores
   run with what commbench sets for them on both sides: MPICH's progress
   throttling, Open MPI's --oversubscribe).
3. Start-up cost: wall time of `commbench run -n 2 PingPong -msglog 0:1` (each
   engine) against the same run of the C floor (sizes 0, 1, 2 with the
   repetitions commbench chose). (-msglog 0:0 is invalid: the spec, section 13,
   requires minlog < maxlog; 0:1 is the smallest run.)

Same sizes, repetition counts (-iter N -iter_policy off) and buffer kind on
both sides; every contender is launched afresh each round, the order rotates
every round, and the tables show medians over the rounds (and the ratio of the
best times, steadier on a busy machine).

The MPI (benchmarks/mpis.py) is the one --python's mpi4py loads (default: this
Python's, the mpich wheel here): commbench runs as `<python> -m commbench run
-n N --mpiexec <that library's mpiexec>`, the C floors are built with that
library's mpicc (--mpicc; Intel MPI's wheel wrapper gets I_MPI_ROOT, its
venv's prefix, when unset) and run under the same mpiexec with the same
settings (Open MPI as root, --oversubscribe past the cores, OMPI_MCA_osc=^ucx
without RDMA devices, MPICH's progress throttling). The header names the
library, the Python, the mpiexec, the mpicc and what was set.
"""

from __future__ import annotations

import argparse
import os
import tempfile

import mpis
from cfloor import (
    build,
    conditions,
    env_for,
    median,
    msglen_file,
    rotate,
    run_c,
    run_commbench,
    wall,
)
from pingpong_vs_c import measure_pingpong, print_pingpong

ENGINES = ["native", "mpi4py"]
PP_SIZES = [0, 8, 1024, 65536, 2**20, 4 * 2**20]
COLL_REPS = 20000
COLL_SIZE = 8


def measure_collectives(
    np_: int, rounds: int, alloc: str, scale: float = 1.0, hugepages: str = "default"
) -> dict:
    # Oversubscribed ranks take turns on the cores (tens of usec per call at best):
    # a tenth of the repetitions keeps the run short.
    reps = max(1, round(COLL_REPS * scale / (10 if np_ > (os.cpu_count() or 1) else 1)))
    exe = build("collectives")
    c_alloc = ["--alloc", "malloc" if alloc == "numpy" else "mmap", "--hugepages", hugepages]
    f = msglen_file([COLL_SIZE])
    out: dict = {}
    try:
        for k in range(rounds):
            for who in rotate(["C", *ENGINES], k):
                if who == "C":
                    for name, _size, _reps, _tmin, _tmax, tavg in run_c(
                        np_, exe, [f"allreduce:{COLL_SIZE}:{reps}", f"barrier:{reps}"], c_alloc
                    ):
                        out.setdefault(("C", name.capitalize()), []).append(float(tavg))
                    continue
                doc = run_commbench(
                    np_,
                    [
                        "Allreduce",
                        "Barrier",
                        "-npmin",
                        str(np_),
                        "-msglen",
                        f,
                        "-iter",
                        str(reps),
                        "-iter_policy",
                        "off",
                        "-time",
                        "1000",
                        "--engine",
                        who,
                        "--alloc",
                        alloc,
                        "--hugepages",
                        hugepages,
                    ],
                )
                for rec in doc["records"]:
                    if rec["status"] == "ok" and rec["np"] == np_:
                        assert rec["extra"].get("engine") == who, doc["metadata"].get(
                            "engine_detail"
                        )
                        assert rec["repetitions"] == reps
                        out.setdefault((who, rec["benchmark"]), []).append(rec["values"]["t_avg"])
    finally:
        os.unlink(f)
    return out


def print_collectives(res: dict, np_: int, rounds: int) -> None:
    print(
        (
            f"\nAllreduce ({COLL_SIZE} B) and Barrier, {np_} processes: t_avg[usec]; median of "
            f"{rounds} rounds"
        )
        + (
            " (oversubscribed: both sides get the settings the header names)"
            if np_ > (os.cpu_count() or 1)
            else ""
        )
    )
    print(
        f"{'benchmark':>10} {'C floor':>9}"
        + "".join(f" {e:>9}" for e in ENGINES)
        + "".join(f" {e + '/C':>10} {'best ' + e + '/C':>15}" for e in ENGINES)
    )
    for name in ("Allreduce", "Barrier"):
        c = res.get(("C", name), [])
        line = f"{name:>10} {median(c):>9.3f}" + "".join(
            f" {median(res.get((e, name), [])):>9.3f}" for e in ENGINES
        )
        for e in ENGINES:
            v = res.get((e, name), [])
            line += f" {median(v) / median(c):>10.3f} {min(v) / min(c):>15.3f}"
        print(line)


def measure_startup(rounds: int) -> dict:
    """Wall seconds of the default `commbench run -n 2 PingPong -msglog 0:1` and of the C floor."""
    exe = build("pingpong")
    out: dict = {}
    with tempfile.TemporaryDirectory() as d:  # the default results file lands here
        # The repetitions commbench chooses for this run (dynamic policy), for the C floor.
        doc = run_commbench(2, ["PingPong", "-msglog", "0:1"])
        items = [f"{r['bytes']}:{r['repetitions']}" for r in doc["records"] if r["status"] == "ok"]
        cb = mpis.current().commbench(2, ["PingPong", "-msglog", "0:1"])
        env = env_for(2)  # PYTHONPATH: the commbench of this checkout, run from elsewhere
        for k in range(rounds):
            for who in rotate(["C", *ENGINES], k):
                if who == "C":
                    out.setdefault("C", []).append(
                        wall([*mpis.current().launch(2), str(exe), *items], env, d)
                    )
                else:
                    out.setdefault(who, []).append(wall([*cb, "--engine", who], env, d))
    out["items"] = items
    return out


def print_startup(res: dict, rounds: int) -> None:
    c = median(res["C"])
    print(
        f"\nStart-up: wall time of `commbench run -n 2 PingPong -msglog 0:1` against the C floor "
        f"(mpiexec -n 2 pingpong {' '.join(res['items'])}); median of {rounds} rounds"
    )
    print(f"{'run':>10} {'wall[s]':>9} {'ratio':>9} {'extra[s]':>9}")
    print(f"{'C floor':>10} {c:>9.3f} {1.0:>9.3f} {0.0:>9.3f}")
    for e in ENGINES:
        v = median(res[e])
        print(f"{e:>10} {v:>9.3f} {v / c:>9.3f} {v - c:>9.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--rounds", type=int, default=5)
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
        help="huge pages for the buffers on both sides (on: every buffer, 1 MiB ones too)",
    )
    ap.add_argument("--skip-startup", action="store_true")
    ap.add_argument(
        "--sizes",
        default=",".join(map(str, PP_SIZES)),
        help="PingPong's message sizes (smoke tests)",
    )
    ap.add_argument(
        "--scale", type=float, default=1.0, help="multiply the repetition counts (smoke tests)"
    )
    mpis.add_arguments(ap)
    a = ap.parse_args()
    mpi = mpis.select(a)
    print("\n".join(mpi.header([2, 4], f"C floors: benchmarks/c/*.c, {mpi.c_floor()}")))
    print(f"# conditions: {conditions()}; --alloc {a.alloc} --hugepages {a.hugepages}")
    sizes = [int(x) for x in a.sizes.split(",") if x]
    pp = measure_pingpong(sizes, ENGINES, a.rounds, a.alloc, a.scale, a.hugepages)
    print_pingpong(pp, sizes, ENGINES, a.rounds)
    for np_ in (2, 4):
        print_collectives(
            measure_collectives(np_, a.rounds, a.alloc, a.scale, a.hugepages), np_, a.rounds
        )
    if not a.skip_startup:
        print_startup(measure_startup(a.rounds), a.rounds)
    print(f"\n# conditions at the end: {conditions()}")


if __name__ == "__main__":
    main()
