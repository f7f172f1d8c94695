"""The mt family's mpi4py engine: IMB-MT's patterns run by Python threads in mpi4py calls.

Each thread runs on its own communicator (commbench.suites.mt.driver makes them); the
threads of a rank share one GIL, which mpi4py releases inside every blocking MPI call
(docs/mt.md). commbench/native/mt.c is the C engine of the same patterns.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np
from mpi4py import MPI

if TYPE_CHECKING:
    from commbench.suites.mt.spec import MtBench, MtSettings


class PyThread:
    """One Python thread's share of a measurement: IMB-MT's patterns in mpi4py calls."""

    def __init__(self, run: PyRun, tid: int):
        self.r, self.tid, self.comm = run, tid, run.comms[tid]
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        s, n = run.s, run.count
        self.dtype = np.int32 if s.datatype == "int" else np.uint8
        self.mpitype = MPI.INT if s.datatype == "int" else MPI.CHAR
        self.inb = self._alloc(run.alloc_count)
        self.outb = self._alloc(run.alloc_count * (2 if run.bench.name == "ExchangeMT" else 1))
        self.ins, self.out, self.out2 = (
            [self.inb, n, self.mpitype],
            [self.outb, n, self.mpitype],
            [self.outb[n:], n, self.mpitype],
        )
        self.failures = 0

    def _alloc(self, n: int) -> np.ndarray:
        align = self.r.s.malloc_align
        raw = np.zeros(n * self.r.s.unit + align, np.uint8)
        off = (-raw.ctypes.data) % align
        return raw[off : off + n * self.r.s.unit].view(self.dtype)

    def fill(self, buf, factor: int | None = None) -> None:
        """-check: buf[i] = factor * i, or -1 everywhere (factor None)."""
        if self.r.check:
            buf[: self.r.count] = -1 if factor is None else factor * np.arange(self.r.count)

    def verify(self, buf, factor: int) -> None:
        if self.r.check:
            self.failures += int(
                np.count_nonzero(buf[: self.r.count] != factor * np.arange(self.r.count))
            )

    def spoil(self) -> None:
        if self.r.corrupt and self.r.count:
            self.inb[self.r.count - 1] ^= 0x5A5A if self.dtype is np.int32 else 0x5A

    def sync(self) -> None:
        r = self.r
        if r.s.barrier == "off":
            return
        r.bar.wait()
        if self.tid == 0:
            if r.s.barrier == "on":
                r.world.Barrier()
            else:
                rank, size, e = (
                    r.world.Get_rank(),
                    r.world.Get_size(),
                    [np.zeros(0, np.uint8), MPI.BYTE],
                )
                d = 1
                while d < size:
                    r.world.Sendrecv(e, (rank + d) % size, 1010, e, (rank - d) % size, 1010)
                    d *= 2
        r.bar.wait()

    def pair(self) -> tuple[int, bool]:
        stride = self.r.s.stride or self.size // 2
        if stride <= 0 or stride > self.size // 2:
            return -1, False
        group = self.rank // stride
        if group // 2 == self.size // (2 * stride) and self.size % (2 * stride):
            return -1, False
        return (self.rank + stride, True) if group % 2 == 0 else (self.rank - stride, False)

    def p2p(self, reps: int) -> int:
        name, c = self.r.bench.name, self.comm
        ring = name in ("SendRecvMT", "ExchangeMT")
        peer, first = (-1, False) if ring else self.pair()
        if peer < 0 and not ring:
            return 0
        st = self.r.s.stride or self.size // 2
        right, left = (self.rank + st) % self.size, (self.rank - st) % self.size
        self.fill(self.inb, self.rank + 1)
        self.fill(self.outb)
        self.fill(self.outb[self.r.count :])
        self.spoil()
        LOOPS[name](self, c, reps, peer, first, right, left)
        if reps > 0:
            self.verify(self.inb, self.rank + 1)
            if name != "UniBandMT" or not first:
                self.verify(self.outb, (left if ring else peer) + 1)
            if name == "ExchangeMT":
                self.verify(self.outb[self.r.count :], right + 1)
        return 1

    def collective(self) -> float:
        r, c, name = self.r, self.comm, self.r.bench.name
        root = self.rank == 0
        n, total, wt = self.size, 0.0, MPI.Wtime
        self.fill(self.inb, (1 if root else None) if name == "BcastMT" else self.rank + 1)
        self.fill(self.outb)
        if name != "BcastMT" or root:
            self.spoil()
        call = {
            "BarrierMT": lambda: (r.bar.wait(), c.Barrier()),
            "BcastMT": lambda: c.Bcast(self.ins if root else self.out, 0),
            "ReduceMT": lambda: c.Reduce(self.ins, self.out, MPI.SUM, 0),
            "AllReduceMT": lambda: c.Allreduce(self.ins, self.out, MPI.SUM),
        }[name]
        for i in range(r.s.repeat + r.s.warmup):
            t0 = wt()
            call()
            dt = wt() - t0
            if i >= r.s.warmup:
                total += dt
            if name != "BarrierMT":
                for _ in range(5):
                    self.sync()
        if (
            (name == "BcastMT" and not root)
            or name == "AllReduceMT"
            or (name == "ReduceMT" and root)
        ):
            self.verify(self.outb, 1 if name == "BcastMT" else n * (n + 1) // 2)
        return total

    def measure(self) -> tuple[float, int]:
        if self.r.bench.columns in ("coll", "barrier"):
            return self.collective(), 1
        self.p2p(self.r.s.warmup)
        self.sync()
        t0 = MPI.Wtime()
        took = self.p2p(self.r.s.repeat)
        return (MPI.Wtime() - t0 if took else 0.0), took


def _pingpong(t, c, reps, peer, first, right, left):
    (one, a), (two, b) = ((c.Send, t.ins), (c.Recv, t.out))[:: 1 if first else -1]
    for _ in range(reps):
        one(a, peer, 0)
        two(b, peer, 0)


def _pingping(t, c, reps, peer, first, right, left):
    for _ in range(reps):
        req = c.Isend(t.ins, peer, 0)
        c.Recv(t.out, peer, 0)
        req.Wait()


def _sendrecv(t, c, reps, peer, first, right, left):
    for _ in range(reps):
        c.Sendrecv(t.ins, right, 0, t.out, left, 0)


def _exchange(t, c, reps, peer, first, right, left):
    for _ in range(reps):
        reqs = [c.Isend(t.ins, left, 0), c.Isend(t.ins, right, 0)]
        c.Recv(t.out, left, 0)
        c.Recv(t.out2, right, 0)
        MPI.Request.Waitall(reqs)


def _window(t, c, reps, peer, first, right, left):
    w, ack, both = t.r.s.window_size, np.zeros(1, np.uint8), t.r.bench.name == "BiBandMT"
    for _ in range(reps):
        if both:
            reqs = [c.Irecv(t.out, peer, 0) for _ in range(w)] + [
                c.Isend(t.ins, peer, 0) for _ in range(w)
            ]
        else:
            reqs = [c.Isend(t.ins, peer, 0) if first else c.Irecv(t.out, peer, 0) for _ in range(w)]
        MPI.Request.Waitall(reqs)
        if first:
            c.Recv([ack, MPI.CHAR], peer, 0)
        else:
            c.Send([ack, MPI.CHAR], peer, 0)


LOOPS = {
    "PingPongMT": _pingpong,
    "PingPingMT": _pingping,
    "SendRecvMT": _sendrecv,
    "ExchangeMT": _exchange,
    "UniBandMT": _window,
    "BiBandMT": _window,
}


class PyRun:
    """One (benchmark, count) on T Python threads: (seconds, took part, failures) per thread."""

    def __init__(
        self,
        s: MtSettings,
        comms: list,
        world,
        bench: MtBench,
        count: int,
        alloc_count: int,
        check: bool,
        corrupt: bool,
    ):
        self.s, self.comms, self.world, self.bench = s, comms, world, bench
        self.count, self.alloc_count, self.check, self.corrupt = count, alloc_count, check, corrupt
        self.bar = threading.Barrier(len(comms))

    def run(self) -> tuple[list[float], list[int], list[int]]:
        n = len(self.comms)
        out: list = [None] * n

        def one(tid: int) -> None:
            try:
                th = PyThread(self, tid)
                t, took = th.measure()
                out[tid] = (t, took, th.failures)
            except BaseException as e:  # noqa: BLE001 - re-raised by the first thread
                out[tid] = e
                self.bar.abort()

        threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(1, n)]
        for t in threads:
            t.start()
        one(0)
        for t in threads:
            t.join()
        err = next((o for o in out if isinstance(o, BaseException)), None)
        if err is not None:
            raise err
        return tuple(list(v) for v in zip(*out))
