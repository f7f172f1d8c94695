"""The net family's timed exchanges: one sample of one step, on every rank.

Every sample starts with `go(comm, late)`, an allreduce that both
synchronizes the ranks and tells all of them whether the step's -time budget
is spent on some rank (so every rank stops at the same sample). What each rank times:

- shift(k): this rank sends n bytes to rank+k, which answers with an ack (n
  bytes for latency, 0 for bandwidth); the time from the send to the ack is
  the round trip of the ordered pair (rank, rank+k): no clock skew. The
  shift's pairs run in 2 or 3 phases (colours()), so no rank sends and
  receives at once: with every rank sending and receiving at the same time, a
  rank busy sending over a slow link was slow to receive over a fast one
  (measured over TCP: the fast pair came out 20x slow), and the slow link was
  blamed on an innocent pair.
- ring(left, right): sends to both neighbours, receives from both; the time
  until all four are done (HPCC's ring step).
- pair(partner): Sendrecv of n bytes with a partner (bisection's matchings).
- fan(target, inward): N-1 ranks send to the target (inward) or the target
  sends to all of them, each receiver acking; timed on the target until every
  message (and ack) is in.
"""

from __future__ import annotations

import math

import numpy as np
from mpi4py import MPI

from commbench.polite import wait  # requests waited for without holding a core

DATA, ACK, RING_L, RING_R, FAN = 11, 12, 13, 14, 15


class NetBuffers:
    def __init__(self, large: int, fan_bytes: int):
        self.send = np.ones(max(large, 1), dtype=np.uint8)
        self.recv = np.zeros(max(large, 1), dtype=np.uint8)
        self.recv2 = np.zeros(max(large, 1), dtype=np.uint8)
        self.fan = np.zeros(max(fan_bytes, 1), dtype=np.uint8)
        self.ack_s = np.zeros(max(large, 1), dtype=np.uint8)
        self.ack_r = np.zeros(max(large, 1), dtype=np.uint8)

    def s(self, n: int) -> list:
        return [self.send[:n], n, MPI.BYTE]

    def r(self, n: int, which: str = "recv") -> list:
        return [getattr(self, which)[:n], n, MPI.BYTE]


def go(comm, late: bool) -> bool:
    """Synchronize; True unless some rank is late (over the step's budget): all agree."""
    flag = np.array([1 if late else 0], dtype=np.int32)
    out = np.zeros(1, dtype=np.int32)
    wait(comm.Iallreduce(flag, out, op=MPI.MAX))
    return not out[0]


def barrier(comm) -> None:
    wait(comm.Ibarrier())


def colours(p: int, k: int, rank: int) -> tuple[int, int, int]:
    """(this rank's colour, rank-k's colour, number of colours) of shift k.

    The shift r -> r+k splits into gcd(p, k) cycles of length L = p / gcd; ranks
    along a cycle alternate colours 0, 1 (the last of an odd cycle takes 2), so
    in phase c only colour-c ranks send and only their successors receive:
    every rank has at most one partner at a time."""
    g = math.gcd(p, k)
    length = p // g

    def colour(r: int) -> int:
        c = r % g
        pos = ((r - c) // g * pow(k // g, -1, length)) % length if length > 1 else 0
        return 2 if length % 2 and pos == length - 1 else pos % 2

    return colour(rank), colour((rank - k) % p), 3 if length % 2 else 2


def shift(comm, b: NetBuffers, k: int, n: int, ack: int, plan: tuple[int, int, int]) -> float:
    """One sample of shift k: n bytes to rank+k and `ack` bytes back, timed here (seconds),
    in the phase of this rank's colour; in its predecessor's phase it receives and acks."""
    rank, p = comm.Get_rank(), comm.Get_size()
    right, left = (rank + k) % p, (rank - k) % p
    mine, theirs, phases = plan
    t = 0.0
    for c in range(phases):
        if c:
            barrier(comm)
        if c == mine:
            r = comm.Irecv(b.r(ack, "ack_r"), right, ACK)
            t0 = MPI.Wtime()
            wait(comm.Isend(b.s(n), right, DATA), r)
            t = MPI.Wtime() - t0
        elif c == theirs:
            wait(comm.Irecv(b.r(n), left, DATA))
            wait(comm.Isend([b.ack_s[:ack], ack, MPI.BYTE], left, ACK))
    return t


def ring(comm, b: NetBuffers, left: int, right: int, n: int) -> float:
    reqs = [comm.Irecv(b.r(n), left, RING_R), comm.Irecv(b.r(n, "recv2"), right, RING_L)]
    t0 = MPI.Wtime()
    reqs += [comm.Isend(b.s(n), right, RING_R), comm.Isend(b.s(n), left, RING_L)]
    wait(*reqs)
    return MPI.Wtime() - t0


def pair(comm, b: NetBuffers, partner: int | None, n: int) -> float | None:
    if partner is None:
        return None
    t0 = MPI.Wtime()
    wait(comm.Irecv(b.r(n), partner, DATA), comm.Isend(b.s(n), partner, DATA))
    return MPI.Wtime() - t0


def fan(comm, b: NetBuffers, target: int, n: int, inward: bool) -> float | None:
    """Fan-in (inward) or fan-out of n bytes per rank; the target's time, None elsewhere."""
    rank, p = comm.Get_rank(), comm.Get_size()
    if rank != target:
        if inward:
            wait(comm.Isend(b.s(n), target, FAN))
        else:
            wait(comm.Irecv(b.r(n), target, FAN))
            wait(comm.Isend([b.ack_s[:0], 0, MPI.BYTE], target, ACK))
        return None
    others = [r for r in range(p) if r != target]
    if inward:
        reqs = [
            comm.Irecv([b.fan[i * n : (i + 1) * n], n, MPI.BYTE], r, FAN)
            for i, r in enumerate(others)
        ]
        t0 = MPI.Wtime()
    else:
        reqs = [comm.Irecv([b.ack_r[:0], 0, MPI.BYTE], r, ACK) for r in others]
        t0 = MPI.Wtime()
        reqs += [comm.Isend(b.s(n), r, FAN) for r in others]
    wait(*reqs)
    return MPI.Wtime() - t0


def matching(p: int, rng: np.random.Generator) -> list[int | None]:
    """A random perfect matching of p ranks: partner of each rank (None: the odd one out)."""
    order = rng.permutation(p)
    partner: list[int | None] = [None] * p
    for i in range(0, p - 1, 2):
        a, c = int(order[i]), int(order[i + 1])
        partner[a], partner[c] = c, a
    return partner
