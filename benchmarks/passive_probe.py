"""Direct probe of passive-target progress: does MPI_Put + MPI_Win_flush finish while the
target computes outside MPI for a long time?

    mpiexec -n 2 python benchmarks/passive_probe.py [--compute-ms 50] [--reps 5]

Rank 1 spins outside MPI for --compute-ms; rank 0 waits a fifth of that (so the
target is surely busy), then times one put + flush into rank 1. A ratio
flush_time / remaining compute time near 0 means the put completed passively; near 1
means it waited for the target to re-enter MPI. Windows: MPI_Win_create over
numpy memory (what commbench uses by default), over MPI_Alloc_mem memory
(--alloc mpi), and MPI_Win_allocate. Truly_passive_put asks the same question with
a computation sized to one put (microseconds), where scheduling noise can hide
the answer; this probe uses milliseconds. Prints the median of --reps trials.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from mpi4py import MPI


def busy(seconds: float) -> None:
    t = time.perf_counter()
    while time.perf_counter() - t < seconds:
        pass


def window(kind: str, nbytes: int, comm):
    if kind == "create/numpy":
        mem = np.zeros(nbytes, np.uint8)
        return MPI.Win.Create(mem, 1, MPI.INFO_NULL, comm), mem
    if kind == "create/Alloc_mem":
        mem = MPI.Alloc_mem(nbytes)
        return MPI.Win.Create(mem, 1, MPI.INFO_NULL, comm), mem
    return MPI.Win.Allocate(nbytes, 1, MPI.INFO_NULL, comm), None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--compute-ms", type=float, default=50.0)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    comm = MPI.COMM_WORLD
    if comm.Get_size() != 2:
        raise SystemExit(
            "run with exactly 2 processes: mpiexec -n 2 python benchmarks/passive_probe.py"
        )
    rank = comm.Get_rank()
    compute = a.compute_ms / 1e3
    lead = compute / 5
    if rank == 0:
        print(f"{'window':>18} {'bytes':>8} {'put+flush[ms]':>14} {'/ target busy':>14}")
    for kind in ("create/numpy", "create/Alloc_mem", "allocate"):
        for x in (8, 65536, 1 << 20):
            win, mem = window(kind, x, comm)
            src = np.ones(x, np.uint8)
            times = []
            for _ in range(a.reps):
                comm.Barrier()
                if rank == 0:
                    win.Lock(1, MPI.LOCK_SHARED)
                    busy(lead)
                    t0 = MPI.Wtime()
                    win.Put([src, MPI.BYTE], 1, 0)
                    win.Flush(1)
                    times.append(MPI.Wtime() - t0)
                    win.Unlock(1)
                else:
                    busy(compute)
                comm.Barrier()
            win.Free()
            if kind == "create/Alloc_mem":
                MPI.Free_mem(mem)
            if rank == 0:
                t = statistics.median(times)
                print(
                    f"{kind:>18} {x:>8} {t * 1e3:>14.3f} {t / (compute - lead):>14.2f}", flush=True
                )


if __name__ == "__main__":
    main()
