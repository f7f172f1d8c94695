"""Why the PGAS suite uses MPI_Win_allocate and a put-based notification flag.

Run with two processes:  mpiexec -n 2 python benchmarks/pgas_choices.py
(the mpiexec of the mpich wheel:
python -c "from commbench.self_launcher import find_mpiexec; print(find_mpiexec())")

Prints, in one run so the load is the same for all:
  * put+flush and get+flush_local time and 4 MiB put bandwidth on a window from
    MPI_Win_create (user memory) against MPI_Win_allocate, and their ratio;
  * a notification round trip with an atomic counter (MPI_Accumulate +
    MPI_Fetch_and_op polling) against a put counter polled with MPI_Win_sync.
"""

from __future__ import annotations

import os

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
peer = 1 - rank
Wtime = MPI.Wtime


def window(kind: str, nbytes: int):
    if kind == "create":
        mem = np.zeros(nbytes, np.uint8)
        return MPI.Win.Create(mem, 1, comm=comm), mem
    win = MPI.Win.Allocate(nbytes, 1, comm=comm)
    return win, np.frombuffer(win.tomemory(), np.uint8)


def put_get(kind: str, x: int, n: int) -> tuple[float, float]:
    win, _mem = window(kind, x)
    src, dst = np.ones(x, np.uint8), np.empty(x, np.uint8)
    win.Lock_all()
    comm.Barrier()
    tp = tg = 0.0
    if rank == 0:
        t0 = Wtime()
        for _ in range(n):
            win.Put(src, peer, 0)
            win.Flush(peer)
        tp = (Wtime() - t0) / n
        t0 = Wtime()
        for _ in range(n):
            win.Get(dst, peer, 0)
            win.Flush_local(peer)
        tg = (Wtime() - t0) / n
    comm.Barrier()
    win.Unlock_all()
    win.Free()
    return tp, tg


def notify_round_trips(kind: str, n: int) -> float:
    flag = MPI.Win.Allocate(8, 8, comm=comm)
    mine = np.frombuffer(flag.tomemory(), np.int64)[:1]
    mine[0] = 0
    flag.Lock_all()
    comm.Barrier()
    one, got = np.ones(1, np.int64), np.zeros(1, np.int64)
    spec = (0, 1, MPI.INT64_T)
    state = {"sent": 0, "seen": 0}

    def notify():
        state["sent"] += 1
        if kind == "atomic":
            flag.Accumulate([one, 1, MPI.INT64_T], peer, spec, MPI.SUM)
        else:
            got[0] = state["sent"]
            flag.Put([got, 1, MPI.INT64_T], peer, spec)
        flag.Flush(peer)

    def wait():
        state["seen"] += 1
        want = state["seen"]
        res = np.zeros(1, np.int64)
        while True:
            if kind == "atomic":
                flag.Fetch_and_op([one, 1, MPI.INT64_T], [res, 1, MPI.INT64_T], rank, 0, MPI.NO_OP)
                flag.Flush(rank)
                v = res[0]
            else:
                flag.Sync()
                v = mine[0]
            if v >= want:
                return
            os.sched_yield()

    t0 = Wtime()
    for _ in range(n):
        if rank == 0:
            notify()
            wait()
        else:
            wait()
            notify()
    t = (Wtime() - t0) / n
    comm.Barrier()
    flag.Unlock_all()
    flag.Free()
    return t


def main() -> None:
    if comm.Get_size() != 2:
        raise SystemExit("run with exactly 2 processes")
    rows = []
    for x, n in ((8, 2000), (4 * 2**20, 20)):
        c = put_get("create", x, n)
        a = put_get("allocate", x, n)
        rows.append((x, c, a))
    na = notify_round_trips("atomic", 200)
    np_ = notify_round_trips("put", 2000)
    if rank == 0:
        for x, (cp, cg), (ap, ag) in rows:
            print(
                f"{x:>8} B  put+flush: Win_create {cp * 1e6:9.2f} us  Win_allocate "
                f"{ap * 1e6:9.2f} us  ratio {cp / ap:6.1f}   get: {cg * 1e6:9.2f} / "
                f"{ag * 1e6:9.2f} us  ratio {cg / ag:6.1f}"
            )
        print(
            f"notification round trip: atomic counter {na * 1e6:9.2f} us, put counter "
            f"{np_ * 1e6:9.2f} us, ratio {na / np_:6.1f}"
        )


main()
