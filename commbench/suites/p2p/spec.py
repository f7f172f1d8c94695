"""The eight IMB-P2P patterns as declarations (no numpy, no MPI), part of the family's
catalog (commbench.suites.p2p): how many buffers each needs, at which process counts
IMB-P2P runs it (the stencils' grids, found as IMB-P2P finds them) and the line it prints
otherwise; its untimed `prepare`, p2p.c's `partners` and the timed `loop` are named as
base.Lazy and live with the buffers in commbench.suites.p2p.patterns. The settings
(settings.py) read the table to parse a run, the procedure (driver.py) to run one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from commbench.suites.base import Lazy

F = "p2p"
KIND = "p2p"
LOOPS = "commbench.suites.p2p.patterns"  # the loops, partners and preparations (MPI, numpy)


# ---------------------------------------------------------------- process grids


def _squarest(p: int) -> tuple[int, int]:
    """IMB-P2P's search for the squarest ly x lx = p (its rows, columns), from 2 x 2 up."""
    lx = ly = 2
    while lx * ly < p:
        lx, ly = lx + 1, ly + 1
    if lx * ly > p:
        while ly > 1 and p % ly:
            ly -= 1
        lx = p // ly
    return ly, lx


def grid2d(p: int) -> tuple[int, int] | None:
    """Stencil2D's (rows, columns): the squarest ly x lx = p with both >= 2,
    found as IMB-P2P does."""
    ly, lx = _squarest(p)
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
        gy, gx = _squarest(p // lz if lz else 0)
        if gy >= lz:
            lx, ly = gx, gy
    ok = min(lx, ly, lz) >= 2 and lx * ly * lz == p
    return (lz, ly, lx) if ok else None


# ---------------------------------------------------------------- the table


def _even(p: int) -> bool:
    return p >= 2 and p % 2 == 0


def _two(p: int) -> bool:
    return p >= 2


@dataclass(frozen=True)
class P2pPattern:
    """A pattern: `prepare(ctx, n)` works out the partners of n iterations (untimed), `loop(ctx,
    plan)` is the timed part, returning the messages this rank sent plus received, and
    `partners(ctx, plan)` p2p.c's steps and partners for a plan (ctx: a patterns.P2pCtx)."""

    name: str
    description: str
    loop: Callable[[Any, Any], int]
    partners: Callable[[Any, Any], tuple[int, dict]]  # p2p.c's steps and partners for a plan
    prepare: Callable[[Any, int], Any] = lambda c, n: n
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
            Lazy(LOOPS, "pingpong"),
            Lazy(LOOPS, "pair_partners"),
            valid=_even,
            latency_halves=2,
        ),
        P2pPattern(
            "PingPing",
            "rank r and r+-P/2 send to each other at once (Irecv, Send, Wait)",
            Lazy(LOOPS, "pingping"),
            Lazy(LOOPS, "pair_partners"),
            valid=_even,
        ),
        P2pPattern(
            "Unirandom",
            "P x reps random (sender, receiver) pairs, one message each, seed 0",
            Lazy(LOOPS, "unirandom"),
            Lazy(LOOPS, "random_partners"),
            Lazy(LOOPS, "my_pairs"),
            invalid="invalid for {p} processes",
        ),
        P2pPattern(
            "Birandom",
            "P x reps random pairs, each exchanging one message both ways, seed 0",
            Lazy(LOOPS, "birandom"),
            Lazy(LOOPS, "random_partners"),
            Lazy(LOOPS, "my_pairs"),
        ),
        P2pPattern(
            "Corandom",
            "every rank receives from and sends to its neighbours in a ring reshuffled "
            "every repetition, seed 0",
            Lazy(LOOPS, "corandom"),
            Lazy(LOOPS, "corandom_partners"),
            Lazy(LOOPS, "my_ring"),
        ),
        P2pPattern(
            "Stencil2D",
            "periodic 2D grid: Irecv and Isend with 4 neighbours, Waitall",
            Lazy(LOOPS, "stencil"),
            Lazy(LOOPS, "stencil_partners"),
            nbuf=8,
            grid=grid2d,
        ),
        P2pPattern(
            "Stencil3D",
            "periodic 3D grid: Irecv and Isend with 6 neighbours, Waitall",
            Lazy(LOOPS, "stencil"),
            Lazy(LOOPS, "stencil_partners"),
            nbuf=12,
            grid=grid3d,
        ),
        P2pPattern(
            "SendRecv_Replace",
            "ring: MPI_Sendrecv_replace to rank+1 from rank-1",
            Lazy(LOOPS, "sendrecv_replace"),
            Lazy(LOOPS, "replace_partners"),
            nbuf=1,
            warmup_barrier=False,
            invalid="is invalid for {p} process",
        ),
    )
}
