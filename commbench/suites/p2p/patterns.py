"""The eight IMB-P2P patterns: who talks to whom, and the loop of one run.

Each pattern is a `P2pPattern`: how many send/receive buffer pairs it needs, at
which process counts IMB-P2P runs it (and the line it prints otherwise), an
untimed `prepare(ctx, n)` that works out the partners of n iterations (the
random patterns draw them from IMB-P2P's generator, seeded 0 for every size
and again for the timed run, so warm-up and timed run take the same first
draws), and `loop(ctx, plan)`, the timed part, returning the messages this
rank sent plus received (IMB-P2P's count; rank 0 halves the sum).

The random partners are drawn before the timed loop, not inside it as
IMB-P2P's C code does: in Python the generator costs about a microsecond per
draw, which would be timed as communication. The draws, and therefore the
MPI calls, are IMB-P2P's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from mpi4py import MPI

from commbench import buffers

LINE = 64  # IMB_P2P_CACHE_LINE_LEN: -msgwr writes, -msgrd reads one byte per line
TAG = 0
# IMB-P2P's generator: a 64-bit LCG, each draw the state's bits 24..55.
LCG_A, LCG_C, MASK64 = 7560690468208412377, 4343336064253945357, 2**64 - 1


# ---------------------------------------------------------------- process grids


def grid2d(p: int) -> tuple[int, int] | None:
    """Stencil2D's (rows, columns): the squarest ly x lx = p with both >= 2,
    found as IMB-P2P does."""
    lx = ly = 2
    while lx * ly < p:
        lx, ly = lx + 1, ly + 1
    if lx * ly > p:
        while ly > 1 and p % ly:
            ly -= 1
        lx = p // ly
    return (ly, lx) if lx >= 2 and ly >= 2 and lx * ly == p else None


def grid3d(p: int) -> tuple[int, int, int] | None:
    """Stencil3D's (lz, ly, lx): IMB-P2P's search, shrinking lz until the product fits."""
    lx = ly = lz = 2
    while lx * ly * lz < p:
        lx, ly, lz = lx + 1, ly + 1, lz + 1
    while lx * ly * lz > p:
        lz -= 1
        while lz > 1 and p % lz:
            lz -= 1
        plane = p // lz if lz else 0
        gx = gy = 2
        while gx * gy < plane:
            gx, gy = gx + 1, gy + 1
        if gx * gy > plane:
            while gy > 1 and plane % gy:
                gy -= 1
            gx = plane // gy
        if gy >= lz:
            lx, ly = gx, gy
    ok = min(lx, ly, lz) >= 2 and lx * ly * lz == p
    return (lz, ly, lx) if ok else None


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


def _my_pairs(c: P2pCtx, n: int) -> tuple[list[bool], list[int]]:
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


def _pair_partners(c: P2pCtx, n: int) -> tuple[int, dict]:
    half = c.p // 2
    return n, {"peers": [(c.rank + half) % c.p], "first": c.rank < half}


def _random_partners(c: P2pCtx, plan: tuple[list[bool], list[int]]) -> tuple[int, dict]:
    return len(plan[1]), {"peers": plan[1], "firsts": plan[0]}


def _ring_partners(c: P2pCtx, plan: list[tuple[int, int]]) -> tuple[int, dict]:
    return len(plan), {"peers": [d for _, d in plan], "firsts": [s for s, _ in plan]}


def _stencil_partners(c: P2pCtx, n: int) -> tuple[int, dict]:
    return n, {"peers": c.nb}


def _replace_partners(c: P2pCtx, n: int) -> tuple[int, dict]:
    return n, {"peers": [(c.rank + 1) % c.p, (c.rank - 1) % c.p]}


# ---------------------------------------------------------------- the table


def _even(p: int) -> bool:
    return p >= 2 and p % 2 == 0


def _two(p: int) -> bool:
    return p >= 2


@dataclass(frozen=True)
class P2pPattern:
    name: str
    description: str
    loop: Callable[[P2pCtx, Any], int]
    partners: Callable[[P2pCtx, Any], tuple[int, dict]]  # p2p.c's steps and partners for a plan
    prepare: Callable[[P2pCtx, int], Any] = lambda c, n: n
    nbuf: int = 2  # buffers of the largest size per process
    valid: Callable[[int], bool] = _two
    grid: Callable[[int], tuple | None] | None = None
    latency_halves: int = (
        1  # t[usec] = summed rank time / (halves x messages): PingPong's half round trip
    )
    warmup_barrier: bool = True  # a barrier between warm-up and timed run (not SendRecv_Replace)
    invalid: str = "is invalid for {p} processes"  # IMB-P2P's words, its slips kept

    def runs_at(self, p: int) -> bool:
        return self.grid(p) is not None if self.grid else self.valid(p)

    def invalid_line(self, p: int) -> str:
        return f"# !! Benchmark {self.name} {self.invalid.format(p=p)} !!"


PATTERNS = {
    pat.name: pat
    for pat in (
        P2pPattern(
            "PingPong",
            "rank r < P/2 sends to r+P/2 and receives its reply: half the round trip",
            pingpong,
            _pair_partners,
            valid=_even,
            latency_halves=2,
        ),
        P2pPattern(
            "PingPing",
            "rank r and r+-P/2 send to each other at once (Irecv, Send, Wait)",
            pingping,
            _pair_partners,
            valid=_even,
        ),
        P2pPattern(
            "Unirandom",
            "P x reps random (sender, receiver) pairs, one message each, seed 0",
            unirandom,
            _random_partners,
            _my_pairs,
            invalid="invalid for {p} processes",
        ),
        P2pPattern(
            "Birandom",
            "P x reps random pairs, each exchanging one message both ways, seed 0",
            birandom,
            _random_partners,
            _my_pairs,
        ),
        P2pPattern(
            "Corandom",
            "every rank receives from and sends to its neighbours in a ring reshuffled "
            "every repetition, seed 0",
            corandom,
            _ring_partners,
            lambda c, n: ring_partners(c.p, c.rank, n),
        ),
        P2pPattern(
            "Stencil2D",
            "periodic 2D grid: Irecv and Isend with 4 neighbours, Waitall",
            stencil,
            _stencil_partners,
            nbuf=8,
            grid=grid2d,
        ),
        P2pPattern(
            "Stencil3D",
            "periodic 3D grid: Irecv and Isend with 6 neighbours, Waitall",
            stencil,
            _stencil_partners,
            nbuf=12,
            grid=grid3d,
        ),
        P2pPattern(
            "SendRecv_Replace",
            "ring: MPI_Sendrecv_replace to rank+1 from rank-1",
            sendrecv_replace,
            _replace_partners,
            nbuf=1,
            warmup_barrier=False,
            invalid="is invalid for {p} process",
        ),
    )
}
