#!/usr/bin/env python3
"""What --per-iteration (and --sync-start window) costs against IMB's plain loop, in one run.

    python benchmarks/per_iteration_cost.py [--np 2] [--rounds 7] [--reps 1000]
                                            [--sizes 0,8,1024,65536] [--engines native,mpi4py]

One MPI job (mpiexec -n NP, this checkout's commbench) builds each row as the
harness does (commbench.harness: buffers, warm-up) and times the row's n
repetitions with each contender on the same buffers, the order alternating
every round:

  plain    IMB's loop: kernel(ctx, n), one timestamp pair around n calls
  per-it   --per-iteration: kernel(ctx, 1) n times, a barrier after each
  window   --sync-start window (Allreduce only): clocks synchronized, every call
           started at a common time (commbench.harness.clocksync)

For each it prints, as medians over the rounds, t: the time per repetition the
row reports (the slowest rank's mean, as t_max), wall: the wall time of
measuring the row divided by n (what a repetition costs the run), P50: the
slowest rank's median repetition (per-it and window), and the ratios to plain's t
and wall. Also the cost of one clock synchronization (the median of
--rounds x 5), the timer floor (resolution, empty-region overhead), and the
window rows' late starts with commbench's blocks of starts against one start
per row (--busy N: with N busy-looping processes beside the job).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from cfloor import REPO, conditions, env_for, mpiexec, rotate

BENCHES = ("PingPong", "Allreduce")


def worker(a: argparse.Namespace) -> None:
    from mpi4py import MPI

    from commbench import row_measurement, run_config
    from commbench.harness import clocksync, iteration_times
    from commbench.harness.core import Harness
    from commbench.session import Session

    comm = MPI.COMM_WORLD
    me = comm.Get_rank()
    hows = {
        "per-it": row_measurement.Measuring(per_iteration=True),
        "window": row_measurement.Measuring(sync_start="window"),
    }
    out: dict = {}
    for engine in a.engines.split(","):
        cfg = run_config.parse_run_args(
            [*BENCHES, "--engine", engine, "-iter", str(a.reps), "-iter_policy", "off"],
            world_size=comm.Get_size(),
        )
        h = Harness(Session(cfg, comm, []))
        for bench in h.plan.benchmarks():
            layout = h.layout(2 if bench.name == "PingPong" else comm.Get_size())
            who = ["plain", "per-it"] + (["window"] if bench.name == "Allreduce" else [])
            for x in (int(s) for s in a.sizes.split(",")):
                ctx = h.prepare(bench, layout, "", x, a.reps) if layout.comm is not None else None
                eng = h.engines_for(bench, x, layout.np)[0]
                for k in range(a.rounds + 1):  # round 0 warms up (and measures the timer floor)
                    for c in rotate(who, k):
                        t, wall, p50 = -1.0, 0.0, float("nan")
                        if ctx is not None:
                            if c != "plain":
                                iteration_times.arm(ctx, hows[c], eng)
                            ctx.comm.Barrier()
                            t0 = time.perf_counter()
                            t = h.timed(ctx, a.reps, eng)
                            wall = time.perf_counter() - t0
                            iteration_times.finish(ctx)
                            d = iteration_times.data(ctx)
                            p50 = statistics.median(d["t"]) if d else p50
                        t_max = comm.allreduce(t * bench.time_factor, op=MPI.MAX)
                        w_max = comm.allreduce(wall, op=MPI.MAX)
                        p50 = comm.allreduce(p50 * bench.time_factor, op=MPI.MAX)
                        if k:
                            out.setdefault((bench.name, x, eng, c), []).append(
                                (t_max * 1e6, w_max / a.reps * 1e6, p50 * 1e6)
                            )
                if ctx is not None:
                    h.close(ctx)
            layout.free()
        syncs = []
        for _ in range(a.rounds * 5):
            comm.Barrier()
            t0 = time.perf_counter()
            clocksync.synchronize(comm, clocksync.Clock(me))
            syncs.append(comm.allreduce(time.perf_counter() - t0, op=MPI.MAX))
        out[("sync", engine)] = statistics.median(syncs)
        out[("late", engine)] = late_starts(a, h, hows["window"], engine)
        out[("floor", engine)] = (
            comm.allreduce(iteration_times.timer_floor(engine)["overhead"], op=MPI.MAX),
            comm.allreduce(iteration_times.timer_floor(engine)["resolution"], op=MPI.MAX),
        )
    if me == 0:
        report(a, out)


def late_starts(a: argparse.Namespace, h, how, engine: str) -> dict[str, list[int]]:
    """Allreduce window rows (the sizes, n repetitions): invalid repetitions with a start
    broadcast every iteration_times.BLOCK repetitions (commbench's) and with one start per row
    (ReproMPI's), alternating every round."""
    import numpy as np

    from commbench.harness import iteration_times

    comm, block = h.world, iteration_times.BLOCK
    res = {"blocks": [0, 0], "one start": [0, 0]}
    bench = next(b for b in h.plan.benchmarks() if b.name == "Allreduce")
    layout = h.layout(comm.Get_size())
    for k in range(a.rounds):
        for who in rotate(list(res), k):
            iteration_times.BLOCK = block if who == "blocks" else 2**62
            for x in (int(s) for s in a.sizes.split(",")):
                ctx = h.prepare(bench, layout, "", x, a.reps)
                iteration_times.arm(ctx, how, engine)
                h.timed(ctx, a.reps, engine)
                iteration_times.finish(ctx)
                late = np.array(comm.allgather(iteration_times.data(ctx)["late"])).any(axis=0)
                res[who][0] += int(late.sum())
                res[who][1] += len(late)
                h.close(ctx)
    iteration_times.BLOCK = block
    layout.free()
    return res


def report(a: argparse.Namespace, out: dict) -> None:
    def med(key, i):
        return statistics.median(v[i] for v in out[key])

    print(
        f"{'benchmark':>10} {'bytes':>6} {'engine':>7} {'who':>7} {'t[usec]':>9} {'t/plain':>8} "
        f"{'wall/rep[usec]':>15} {'wall/plain':>11} {'P50[usec]':>10} {'P50/plain':>10}"
    )
    for name, x, eng, c in sorted(k for k in out if len(k) == 4):
        base = (name, x, eng, "plain")
        t, w, p = (med((name, x, eng, c), i) for i in range(3))
        print(
            f"{name:>10} {x:>6} {eng:>7} {c:>7} {t:>9.3f} {t / med(base, 0):>8.2f} {w:>15.3f} "
            f"{w / med(base, 1):>11.2f} {p:>10.3f} {p / med(base, 0):>10.2f}"
        )
    for eng in a.engines.split(","):
        if ("sync", eng) in out:
            over, res = out[("floor", eng)]
            print(
                f"{eng}: one clock synchronization of {a.np} ranks {out[('sync', eng)] * 1e6:.1f} "
                f"usec (median); timer floor: resolution {res:.3f} usec, empty timed region "
                f"{over:.3f} usec"
            )
            late = out[("late", eng)]
            print(
                f"{eng}: window starts of Allreduce late on some rank: "
                + ", ".join(
                    f"{who} {v[0]}/{v[1]} ({100 * v[0] / v[1]:.1f}%)" for who, v in late.items()
                )
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--sizes", default="0,8,1024,65536")
    ap.add_argument("--engines", default="native,mpi4py")
    ap.add_argument(
        "--busy", type=int, default=0, help="busy-looping processes beside the job (another job)"
    )
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(a)
        return
    print(conditions())
    print(
        f"per_iteration_cost: {a.np} processes, n = {a.reps} repetitions, medians of {a.rounds} "
        "rounds (order alternating)"
    )
    if a.busy:
        print(f"with {a.busy} busy-looping process(es) beside the job")
    cmd = [
        mpiexec(),
        "-n",
        str(a.np),
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        *sys.argv[1:],
    ]
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(a.busy)]
    try:
        p = subprocess.run(cmd, env=env_for(a.np), cwd=REPO, check=False)
    finally:
        for b in busy:
            b.kill()
            b.wait()
    print(f"after the run: {conditions()}")
    sys.exit(p.returncode)


if __name__ == "__main__":
    main()
