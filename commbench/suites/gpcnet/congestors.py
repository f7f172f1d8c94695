"""network_load_test's congestors (mpi4py): 4,096-byte operations on a group's slice
(one rank per host of the group; rank 0 is the incast target and the bcast root).

- alltoall: a pairwise exchange over every rank (n Sendrecv steps; XOR partners when n is
  a power of two, else rank+k and rank-k);
- incast: every rank sends to rank 0, which receives from all;
- putincast: every rank puts into rank 0's window at its own offset, then flushes;
- getbcast: every rank gets 4,096 bytes from rank 0's window, then flushes.

A pass is one warm-up operation and `ops` operations (GPCNeT: 512, scaled by 32 / n beyond
32 hosts), timed as a whole; the group's ranks all do the same operations, so a pass ends
together and the decision to stop (run()) is taken between passes.
"""

from __future__ import annotations

import time

import numpy as np
from mpi4py import MPI

from commbench.suites.gpcnet.settings import CONGESTOR_BYTES

D = CONGESTOR_BYTES // 8  # doubles per operation


class Congestor:
    def __init__(self, kind: str, comm):
        self.kind, self.comm = kind, comm
        n, self.rank = comm.Get_size(), comm.Get_rank()
        self.n = n
        self.ops = 512 if n <= 32 else max(1, int(512 * 32 / n))
        self.s = np.ones(D * n, dtype=np.float64)
        self.r = np.zeros(D * n, dtype=np.float64)
        self.win = None
        if kind in ("putincast", "getbcast"):
            self.win = MPI.Win.Allocate(D * n * 8, 8, comm=comm)
        self.bytes = 0.0  # this rank's payload moved over the passes, and their time
        self.secs = 0.0
        self.passes = 0

    def free(self) -> None:
        if self.win is not None:
            self.win.Free()
            self.win = None

    def op(self) -> int:
        """One operation; the bytes this rank moved (sent, or received by a bcast)."""
        c, n, me = self.comm, self.n, self.rank
        if self.kind == "alltoall":
            pow2 = n & (n - 1) == 0
            for k in range(n):
                to, frm = (me ^ k, me ^ k) if pow2 else ((me + k) % n, (me - k) % n)
                c.Sendrecv(
                    [self.s[to * D : (to + 1) * D], D, MPI.DOUBLE],
                    to,
                    21,
                    [self.r[frm * D : (frm + 1) * D], D, MPI.DOUBLE],
                    frm,
                    21,
                )
            return CONGESTOR_BYTES * (n - 1)
        if self.kind == "incast":
            if me == 0:
                reqs = [
                    c.Irecv([self.r[i * D : (i + 1) * D], D, MPI.DOUBLE], i, 22)
                    for i in range(1, n)
                ]
                MPI.Request.Waitall(reqs)
                return 0
            c.Send([self.s[:D], D, MPI.DOUBLE], 0, 22)
            return CONGESTOR_BYTES
        if me == 0:
            return 0
        if self.kind == "putincast":
            self.win.Put([self.s[:D], D, MPI.DOUBLE], 0, (me * D, D, MPI.DOUBLE))
        else:
            self.win.Get([self.r[:D], D, MPI.DOUBLE], 0, (0, D, MPI.DOUBLE))
        self.win.Flush(0)
        return CONGESTOR_BYTES

    def one_pass(self) -> None:
        locked = self.win is not None and self.rank != 0
        if locked:
            self.win.Lock(0, MPI.LOCK_SHARED)
        try:
            self.op()
            t0, moved = time.perf_counter(), 0
            for _ in range(self.ops):
                moved += self.op()
            self.secs += time.perf_counter() - t0
            self.bytes += moved
            self.passes += 1
        finally:
            if locked:
                self.win.Unlock(0)

    def run(self, world, group, progress) -> None:
        """Load the network until every rank of the world has posted its second barrier
        (the victims post it when their test is done): a first pass, then the 'release'
        barrier the victims wait for, the 'done' barrier, and passes until the group agrees
        'done' completed (MIN over the group, so its ranks stop after the same pass)."""
        self.one_pass()
        release, done = world.Ibarrier(), world.Ibarrier()
        flag = np.zeros(1, dtype=np.int32)
        while True:
            progress(self.passes)
            self.one_pass()
            flag[0] = 1 if done.Test() else 0
            group.Allreduce(MPI.IN_PLACE, flag, op=MPI.MIN)
            if flag[0]:
                break
        release.Wait()
        done.Wait()


def idle_run(world) -> None:
    """A rank with no role in the loaded phase: it takes part in both barriers only."""
    from commbench.polite import wait

    wait(world.Ibarrier(), world.Ibarrier())
