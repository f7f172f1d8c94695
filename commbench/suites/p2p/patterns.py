"""The eight IMB-P2P patterns' work on the ranks: who talks to whom, and the loop of one run.
Their table (buffers, where they run, the stencils' grids) is the catalog's,
commbench.suites.p2p.spec, which names the functions here as base.Lazy.

Each pattern has an untimed `prepare(ctx, n)` that works out the partners of n
iterations (the random patterns draw them from IMB-P2P's generator, seeded 0 for
every size and again for the timed run, so warm-up and timed run take the same
first draws: my_pairs, my_ring), and `loop(ctx, plan)`, the timed part, returning
the messages this rank sent plus received (IMB-P2P's count; rank 0 halves the sum);
`partners(ctx, plan)` gives p2p.c's loops the same partners as arrays. A `P2pCtx`
holds one pattern's buffers on this rank.

The random partners are drawn before the timed loop, not inside it as
IMB-P2P's C code does: in Python the generator costs about a microsecond per
draw, which would be timed as communication. The draws, and therefore the
MPI calls, are IMB-P2P's.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
from mpi4py import MPI

from commbench import buffers
from commbench.suites.p2p.spec import P2pPattern

LINE = 64  # IMB_P2P_CACHE_LINE_LEN: -msgwr writes, -msgrd reads one byte per line
TAG = 0
# IMB-P2P's generator: a 64-bit LCG, each draw the state's bits 24..55.
LCG_A, LCG_C, MASK64 = 7560690468208412377, 4343336064253945357, 2**64 - 1


# ---------------------------------------------------------------- grid neighbours


def neighbours(rank: int, dims: tuple[int, ...]) -> list[int]:
    """The periodic neighbours of rank, x-1, x+1, y-1, y+1 (, z-1, z+1): dims slowest first."""
    coords = []
    r = rank
    for d in reversed(dims):  # x varies fastest
        coords.append(r % d)
        r //= d
    sizes = list(reversed(dims))
    out = []
    for axis in range(len(dims)):
        for step in (-1, 1):
            c = list(coords)
            c[axis] = (c[axis] + step) % sizes[axis]
            rank_of, scale = 0, 1
            for v, d in zip(c, sizes):
                rank_of += v * scale
                scale *= d
            out.append(rank_of)
    return out


# ---------------------------------------------------------------- random partners

_PAIRS: dict[int, tuple[list[int], list[int], int]] = {}
_RINGS: dict[tuple[int, int], tuple[list[tuple[int, int]], list[int], int]] = {}


def _draw(state: int, p: int) -> tuple[int, int]:
    state = (state * LCG_A + LCG_C) & MASK64
    return state, ((state >> 24) & 0xFFFFFFFF) % p


def random_pairs(p: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The first count (rank0, rank1) pairs of Unirandom/Birandom from seed 0 (rank1 != rank0)."""
    r0, r1, state = _PAIRS.get(p, ([], [], 0))
    while len(r0) < count:
        state, a = _draw(state, p)
        b = a
        while b == a:
            state, b = _draw(state, p)
        r0.append(a)
        r1.append(b)
    _PAIRS[p] = (r0, r1, state)
    return np.array(r0[:count], dtype=np.int64), np.array(r1[:count], dtype=np.int64)


def ring_partners(p: int, rank: int, count: int) -> list[tuple[int, int]]:
    """Corandom: (receive from, send to) of rank in each of count iterations; every
    iteration shuffles the ring further (a swap of each place with a drawn one)."""
    got, ring, state = _RINGS.get((p, rank), ([], list(range(p)), 0))
    while len(got) < count:
        for i in range(p):
            state, j = _draw(state, p)
            ring[i], ring[j] = ring[j], ring[i]
        k = ring.index(rank)
        got.append((ring[(k - 1) % p], ring[(k + 1) % p]))
    _RINGS[(p, rank)] = (got, ring, state)
    return got[:count]


# ---------------------------------------------------------------- buffers and their touches


def _nothing() -> None:
    pass


class P2pCtx:
    """One pattern's buffers on this rank (allocated once, of the largest size, as
    IMB-P2P does) and, per size, their message specs and touch functions.

    The touches store one byte in every 64-byte line of a send buffer before a
    send (-msgwr) and load one from every line of a receive buffer after a
    receive (-msgrd), as IMB-P2P's do, in the cheapest form Python has: an
    item of a memoryview for one line, numpy's strided fill / tobytes for more
    (60-200 ns a touch up to 4 KiB). IMB-P2P stores a running counter; a
    constant byte here (a store dirties the line all the same)."""

    def __init__(
        self,
        comm: Any,
        pattern: P2pPattern,
        max_size: int,
        alloc: str,
        hugepages: str,
        msgwr: bool,
        msgrd: bool,
    ):
        self.comm, self.pattern = comm, pattern
        self.rank, self.p = comm.Get_rank(), comm.Get_size()
        self.msgwr, self.msgrd = msgwr, msgrd
        self.allocs = [
            buffers.Allocation(max(max_size, 1), alloc, hugepages) for _ in range(pattern.nbuf)
        ]
        for a in self.allocs:
            a.array.fill(self.rank & 0xFF)  # IMB-P2P memsets its buffers to the rank
        self.dims = pattern.grid(self.p) if pattern.grid else None
        self.nb = neighbours(self.rank, self.dims) if self.dims else []
        self.at(0)

    def at(self, size: int) -> None:
        """Specs and touches of the send buffers (the first half) and receive buffers."""
        arrays = [a.array for a in self.allocs]
        half = max(len(arrays) // 2, 1)
        sends, recvs = arrays[:half], arrays[-half:]  # SendRecv_Replace: one buffer, both
        self.sends, self.recvs = sends, recvs
        self.ss = [[MPI.buffer(a[:size]), MPI.BYTE] for a in sends]
        self.rs = [[MPI.buffer(a[:size]), MPI.BYTE] for a in recvs]
        self.ws = [self._writer(a, size) for a in sends]
        self.rd = [self._reader(a, size) for a in recvs]

    def _writer(self, a: np.ndarray, size: int) -> Callable[[], Any]:
        if not self.msgwr or not size:
            return _nothing
        value = (self.rank + 1 + size) & 0xFF
        return (
            partial(memoryview(a).__setitem__, 0, value)
            if size <= LINE
            else partial(a[:size:LINE].fill, value)
        )

    def _reader(self, a: np.ndarray, size: int) -> Callable[[], Any]:
        if not self.msgrd or not size:
            return _nothing
        return partial(memoryview(a).__getitem__, 0) if size <= LINE else a[:size:LINE].tobytes

    def native(self, runner: Any, size: int, plan: Any) -> tuple[Any, list, int]:
        """p2p.c's call for plan at size (untimed): (packed args, what they point into, steps)."""
        steps, partners = self.pattern.partners(self, plan)
        a, keep = runner.args(
            self.comm,
            self.pattern.name,
            size,
            self.sends,
            self.recvs,
            self.msgwr,
            self.msgrd,
            **partners,
        )
        return a, keep, steps

    def free(self) -> None:
        self.ss, self.rs, self.ws, self.rd, self.sends, self.recvs = [], [], [], [], [], []
        for a in self.allocs:
            a.free()


# ---------------------------------------------------------------- the timed loops


def pingpong(c: P2pCtx, n: int) -> int:
    send, recv, s, r, ws, rd = c.comm.Send, c.comm.Recv, c.ss[0], c.rs[0], c.ws[0], c.rd[0]
    half = c.p // 2
    partner = (c.rank + half) % c.p
    if c.rank < half:
        for _ in range(n):
            ws()
            send(s, partner, TAG)
            recv(r, partner, TAG)
            rd()
    else:
        for _ in range(n):
            recv(r, partner, TAG)
            rd()
            ws()
            send(s, partner, TAG)
    return 2 * n


def pingping(c: P2pCtx, n: int) -> int:
    send, irecv, s, r, ws, rd = c.comm.Send, c.comm.Irecv, c.ss[0], c.rs[0], c.ws[0], c.rd[0]
    partner = (c.rank + c.p // 2) % c.p
    for _ in range(n):
        req = irecv(r, partner, TAG)
        ws()
        send(s, partner, TAG)
        req.Wait()
        rd()
    return 2 * n


def my_pairs(c: P2pCtx, n: int) -> tuple[list[bool], list[int]]:
    """Of the first p*n random pairs, those with this rank: (am I rank0, the other)."""
    a, b = random_pairs(c.p, c.p * n)
    mine = (a == c.rank) | (b == c.rank)
    return (a == c.rank)[mine].tolist(), np.where(a == c.rank, b, a)[mine].tolist()


def unirandom(c: P2pCtx, plan: tuple[list[bool], list[int]]) -> int:
    send, recv, s, r, ws, rd = c.comm.Send, c.comm.Recv, c.ss[0], c.rs[0], c.ws[0], c.rd[0]
    for first, peer in zip(*plan):
        if first:
            ws()
            send(s, peer, TAG)
        else:
            recv(r, peer, TAG)
            rd()
    return len(plan[1])


def birandom(c: P2pCtx, plan: tuple[list[bool], list[int]]) -> int:
    send, irecv, s, r, ws, rd = c.comm.Send, c.comm.Irecv, c.ss[0], c.rs[0], c.ws[0], c.rd[0]
    for peer in plan[1]:
        req = irecv(r, peer, TAG)
        ws()
        send(s, peer, TAG)
        req.Wait()
        rd()
    return 2 * len(plan[1])


def my_ring(c: P2pCtx, n: int) -> list[tuple[int, int]]:
    """Corandom's plan: this rank's (receive from, send to) in each of n iterations."""
    return ring_partners(c.p, c.rank, n)


def corandom(c: P2pCtx, plan: list[tuple[int, int]]) -> int:
    send, irecv, s, r, ws, rd = c.comm.Send, c.comm.Irecv, c.ss[0], c.rs[0], c.ws[0], c.rd[0]
    for src, dst in plan:
        req = irecv(r, src, TAG)
        ws()
        send(s, dst, TAG)
        req.Wait()
        rd()
    return 2 * len(plan)


def stencil(c: P2pCtx, n: int) -> int:
    irecv, isend, waitall = c.comm.Irecv, c.comm.Isend, MPI.Request.Waitall
    links = list(zip(c.nb, c.ss, c.rs))
    ws, rd = c.ws, c.rd
    for _ in range(n):
        for w in ws:
            w()
        reqs = [irecv(r, peer, TAG) for peer, _, r in links]
        reqs += [isend(s, peer, TAG) for peer, s, _ in links]
        waitall(reqs)
        for t in rd:
            t()
    return 2 * len(links) * n


def sendrecv_replace(c: P2pCtx, n: int) -> int:
    srr, b, ws = c.comm.Sendrecv_replace, c.ss[0], c.ws[0]
    dst, src = (c.rank + 1) % c.p, (c.rank - 1) % c.p
    for _ in range(n):
        ws()
        srr(b, dst, TAG, src, TAG)
    c.rd[0]()  # IMB-P2P reads the buffer once, after the loop (inside the timed part)
    return 2 * n


# ---------------------------------------------------------------- partners for p2p.c's loops
# (steps, keyword arguments of commbench.native.p2p.Runner.args): the same partners
# as the loops above, as arrays.


def pair_partners(c: P2pCtx, n: int) -> tuple[int, dict]:
    half = c.p // 2
    return n, {"peers": [(c.rank + half) % c.p], "first": c.rank < half}


def random_partners(c: P2pCtx, plan: tuple[list[bool], list[int]]) -> tuple[int, dict]:
    return len(plan[1]), {"peers": plan[1], "firsts": plan[0]}


def corandom_partners(c: P2pCtx, plan: list[tuple[int, int]]) -> tuple[int, dict]:
    return len(plan), {"peers": [d for _, d in plan], "firsts": [s for s, _ in plan]}


def stencil_partners(c: P2pCtx, n: int) -> tuple[int, dict]:
    return n, {"peers": c.nb}


def replace_partners(c: P2pCtx, n: int) -> tuple[int, dict]:
    return n, {"peers": [(c.rank + 1) % c.p, (c.rank - 1) % c.p]}
