#!/usr/bin/env python3
"""commbench's mpi4py PingPong kernel against hand-written minimal mpi4py loops, in one run.

    python benchmarks/mpi4py_loop.py [--rounds 41] [--reps 2000] [--size 0]

Starts itself under `mpiexec -n 2`. In one job, the contenders take turns
(order reversed every other round), each timing `reps` round trips between two
MPI_Wtime() calls after two barriers, t = dt / (2 reps), t_max over the ranks:

  commbench     the real kernel of commbench.suites.mpi1 (PingPong) on a real
                harness Context (prebuilt specs, bound methods)
  numpy-specs   minimal loop, [numpy view, MPI.BYTE] specs, bound methods, locals
  buffer-specs  minimal loop, [MPI.buffer(view), MPI.BYTE] specs
  numpy-arrays  minimal loop, bare numpy arrays (datatype from the buffer format)

Medians and minima over the rounds; the ratio commbench / best minimal loop is
the number to watch (<= 1.0: commbench's loop is as lean as the best).

    python benchmarks/mpi4py_loop.py --cpu [--rounds 41]

On a busy machine wall-clock pingpong times mostly measure the scheduler. --cpu
measures instead the CPU time (thread_time) per iteration of Isend / Recv / Wait
from one process to itself, so only the Python and MPI call costs count: the
commbench loop shape (Context.each over prebuilt specs, the specs commbench's
kernels use) against minimal loops with each kind of buffer spec.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import types
from itertools import repeat
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def job(rounds: int, reps: int, size: int) -> None:
    sys.path.insert(0, str(REPO))
    from mpi4py import MPI

    from commbench import run_config
    from commbench.harness.core import Harness
    from commbench.session import Session

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    cfg = run_config.parse_run_args(["PingPong", "--engine", "mpi4py"], world_size=comm.Get_size())
    h = Harness(Session(cfg, comm))
    bench = h.family.get("PingPong")
    ctx = h.prepare(bench, h.layout(2), "", size, reps)
    c = ctx.comm
    sview, rview = ctx.sbuf[:size], ctx.rbuf[:size]
    wtime, any_source, any_tag = MPI.Wtime, MPI.ANY_SOURCE, MPI.ANY_TAG

    def minimal(s, r):
        def loop(n):
            send, recv, src, tag = c.Send, c.Recv, any_source, any_tag
            t0 = wtime()
            if rank == 0:
                for _ in repeat(None, n):
                    send(s, 1, 1)
                    recv(r, src, tag)
            else:
                for _ in repeat(None, n):
                    recv(r, src, tag)
                    send(s, 0, 1)
            return (wtime() - t0) / n

        return loop

    contenders = {
        "commbench": lambda n: bench.kernel(ctx, n),
        "numpy-specs": minimal([sview, MPI.BYTE], [rview, MPI.BYTE]),
        "buffer-specs": minimal([MPI.buffer(sview), MPI.BYTE], [MPI.buffer(rview), MPI.BYTE]),
        "numpy-arrays": minimal(sview, rview),
    }
    times: dict[str, list[float]] = {k: [] for k in contenders}
    order = list(contenders)
    for f in contenders.values():  # warm-up
        f(max(1, reps // 10))
    for k in range(rounds):
        for name in order if k % 2 == 0 else order[::-1]:
            comm.Barrier()
            comm.Barrier()
            t = contenders[name](reps) / 2  # half round trip
            times[name].append(comm.allreduce(t, op=MPI.MAX) * 1e6)
    h.close(ctx)
    if rank == 0:
        load = os.getloadavg()
        print(
            f"# {os.cpu_count()} cores, load average {load[0]:.2f}; PingPong {size} B, {reps} "
            f"round trips x {rounds} rounds, t = half round trip [usec]"
        )
        best_med = min(statistics.median(v) for k, v in times.items() if k != "commbench")
        best_min = min(min(v) for k, v in times.items() if k != "commbench")
        print(f"{'loop':>14} {'median':>9} {'min':>9}")
        for name, v in times.items():
            print(f"{name:>14} {statistics.median(v):>9.3f} {min(v):>9.3f}")
        cm = times["commbench"]
        print(
            f"commbench / best minimal loop: median {statistics.median(cm) / best_med:.3f}, "
            f"min {min(cm) / best_min:.3f}"
        )


def cpu(rounds: int, reps: int, size: int) -> None:
    sys.path.insert(0, str(REPO))
    import time

    import numpy as np
    from mpi4py import MPI

    from commbench.harness.context import Context
    from commbench.suites import message_specs

    c = MPI.COMM_SELF.Dup()
    sb, rb = np.ones(max(size, 4), np.uint8), np.zeros(max(size, 4), np.uint8)
    sview, rview = sb[:size], rb[:size]
    ctime, src, tag = time.thread_time, MPI.ANY_SOURCE, MPI.ANY_TAG

    one_slot = types.SimpleNamespace(first=0, slots=1)  # a row's Context, for its each()

    def each_loop(sspec, rspec):  # commbench's loop shape
        def loop(n):
            isend, recv = c.Isend, c.Recv
            items = Context.each(one_slot, n, [sspec], [rspec])
            t0 = ctime()
            for s, r in items:
                q = isend(s, 0, 1)
                recv(r, src, tag)
                q.Wait()
            return (ctime() - t0) / n

        return loop

    def minimal(s, r):
        def loop(n):
            isend, recv = c.Isend, c.Recv
            t0 = ctime()
            for _ in repeat(None, n):
                q = isend(s, 0, 1)
                recv(r, src, tag)
                q.Wait()
            return (ctime() - t0) / n

        return loop

    lean = message_specs.lean([[sview, MPI.BYTE], [rview, MPI.BYTE]])
    contenders = {
        "commbench": each_loop(*lean),
        "numpy-specs": minimal([sview, MPI.BYTE], [rview, MPI.BYTE]),
        "buffer-specs": minimal([MPI.buffer(sview), MPI.BYTE], [MPI.buffer(rview), MPI.BYTE]),
        "numpy-arrays": minimal(sview, rview),
        "commbench-0.1": each_loop([sview, MPI.BYTE], [rview, MPI.BYTE]),  # before MPI.buffer specs
    }
    times: dict[str, list[float]] = {k: [] for k in contenders}
    order = list(contenders)
    for k in range(rounds):
        for name in order if k % 2 == 0 else order[::-1]:
            times[name].append(contenders[name](reps) * 1e9)
    print(
        f"# CPU time per Isend/Recv/Wait iteration to self [ns], {size} B, {reps} x {rounds} "
        f"rounds, load average {os.getloadavg()[0]:.2f}"
    )
    print(f"{'loop':>14} {'median':>9} {'min':>9}")
    for name, v in times.items():
        print(f"{name:>14} {statistics.median(v):>9.1f} {min(v):>9.1f}")
    best = min(statistics.median(v) for k, v in times.items() if not k.startswith("commbench"))
    print(
        "commbench / best minimal loop (median): "
        f"{statistics.median(times['commbench']) / best:.3f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--rounds", type=int, default=41)
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--size", type=int, default=0)
    ap.add_argument(
        "--cpu", action="store_true", help="CPU time per call, one process (busy machines)"
    )
    ap.add_argument("--job", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.job:
        (cpu if a.cpu else job)(a.rounds, a.reps, a.size)
        return
    sys.path.insert(0, str(REPO))
    from commbench.self_launcher import find_mpiexec

    mpiexec = find_mpiexec()
    if mpiexec is None:
        sys.exit("no mpiexec beside Python or on PATH (pip install mpich)")
    cmd = [
        mpiexec,
        "-n",
        "1" if a.cpu else "2",
        sys.executable,
        __file__,
        "--job",
        "--rounds",
        str(a.rounds),
        "--reps",
        str(a.reps),
        "--size",
        str(a.size),
        *(["--cpu"] if a.cpu else []),
    ]
    sys.exit(subprocess.call(cmd))


if __name__ == "__main__":
    main()
