"""The neighbourhood collectives' topology arithmetic (OSU's -N cart:D:R and graph:<file>):
the Cartesian dimensions, every rank's sources and destinations, the degree that sizes the
buffers, and whether a topology fits P ranks. Used by neighbor.py (the programs), spec.Call
(the buffers), neighbor_loops.py (the communicators) and collective_calls.py (the blocks a rank
receives under -c). No numpy, no MPI unless a rank has loaded it: the catalog and the
launcher's checks read it.
"""

from __future__ import annotations

import collections
import itertools

from commbench.suites.base import mpi_initialized

DEFAULT = ("cart", 1, 1)  # OSU's -N cart:1:1


def dims_create(p: int, d: int) -> list[int]:
    """MPI_Dims_create(p, d) without MPI (the launcher's checks): p's prime factors, largest
    first, each into the smallest dimension; non-increasing, as MPICH and Open MPI make them."""
    dims, n, f, primes = [1] * d, p, 2, []
    while f * f <= n:
        while n % f == 0:
            primes.append(f)
            n //= f
        f += 1
    primes += [n] if n > 1 else []
    for q in sorted(primes, reverse=True):
        dims[dims.index(min(dims))] *= q
    return sorted(dims, reverse=True)


def grid(s, p: int) -> list[int]:
    """The Cartesian dimensions of -N cart:D:R at p ranks: MPI's own once MPI runs."""
    d = (s.nhbr or DEFAULT)[1]
    MPI = mpi_initialized()  # the launcher and the catalog load no MPI
    if MPI is not None:
        return list(MPI.Compute_dims(p, d))
    return dims_create(p, d)


def layout(s, p: int, rank: int, dims: list[int] | None = None) -> tuple[list[int], list[int]]:
    """(sources, destinations) of a rank, as OSU's omb_neighborhood_create makes them: on
    cart:D:R the cells at every displacement in [-R, R]^D but 0, last dimension fastest
    (periodic; sources = destinations); on graph:<file> the file's edges from (to) the rank,
    in file order."""
    topo = s.nhbr or DEFAULT
    if topo[0] == "graph":
        edges = topo[2]
        return [a for a, b in edges if b == rank], [b for a, b in edges if a == rank]
    _, d, r = topo
    dims = dims or grid(s, p)
    coords, rest = [], rank
    for k in reversed(dims):  # row-major, as MPI_Cart_coords without reordering
        coords.insert(0, rest % k)
        rest //= k
    out = []
    for disp in itertools.product(range(-r, r + 1), repeat=d):
        if any(disp):
            rank_of = 0
            for c, o, k in zip(coords, disp, dims):
                rank_of = rank_of * k + (c + o) % k
            out.append(rank_of)
    return out, list(out)


def degree(s, p: int) -> int:
    """The most blocks any rank sends or receives (buffer sizes; at least 1)."""
    topo = s.nhbr or DEFAULT
    if topo[0] == "cart":
        return max((2 * topo[2] + 1) ** topo[1] - 1, 1)
    out, into = (
        collections.Counter(a for a, _ in topo[2]),
        collections.Counter(b for _, b in topo[2]),
    )
    return max([1, *(n for c in (out, into) for q, n in c.items() if q < p)])


def fits(s, p: int) -> str | None:
    """OSU's words when the topology cannot be made at p ranks (None: it can)."""
    topo = s.nhbr or DEFAULT
    if topo[0] == "graph":
        far = sorted({q for e in topo[2] for q in e if q >= p})
        return (
            (
                "Number of processes is less than graph nodes. Please increase number of "
                f"processes ({topo[1]} names rank {far[0]}; {p} processes)"
            )
            if far
            else None
        )
    dims = grid(s, p)
    if topo[2] > (min(dims) - 1) // 2:
        return (
            f"ERROR: the given neighborhood radius (r = {topo[2]}) is greater than the half of "
            f"the minimum dimension size {min(dims)}. Increase the number of processes or reduce "
            "dim and rad"
        )
    return None
