"""-c for the blocking and persistent collectives (collectives.py): known data in the
send buffers, the received data checked on every rank that receives.

After the timed rounds of a size the driver fills the buffers (Ctx.fill) and calls
refill, which writes this collective's data: block j of rank r's send buffer is
context.pattern(r, bytes, size + j) (the block rank j receives), and the reductions
get small values of the -T type, v(r, i) = (i + 3r) mod 13 + r + 1, whose sums are
exact in MPI_CHAR, MPI_INT and MPI_FLOAT. COMMBENCH_FAULT_CORRUPT's rank then spoils
the first byte it sends (block 0: what rank 0 receives). One more round runs and
verify counts this rank's wrong bytes (reductions: wrong elements) against what
MPI_SUM, root 0 and the counts of collectives.counts give.
"""

from __future__ import annotations

import numpy as np

from commbench.suites.osu.context import pattern

NP = {"mpi_char": "int8", "mpi_int": "int32", "mpi_float": "float32"}  # names: no numpy at import


def values(rank: int, count: int, dtype: str) -> np.ndarray:
    return np.resize(((np.arange(13) + 3 * rank) % 13 + rank + 1).astype(NP[dtype]), count)  # period 13


def blocks(c) -> int:
    return c.bench.variant[0].extent(c.p)[0]


def refill(c, size: int) -> None:
    call, nb = c.bench.variant[0], c.nbytes
    if call.reduces:
        c.sbuf[:nb] = values(c.rank, c.count, c.dtype).view(np.uint8)
    else:
        for j in range(blocks(c)):
            c.sbuf[j * nb:(j + 1) * nb] = pattern(c.rank, nb, size + j)
    c.rbuf[: nb * call.extent(c.p)[1]] = 0
    if c.session.corrupt and nb:
        c.sbuf[0] ^= 0xFF


def reduced(c, lo: int, hi: int) -> int:
    """Wrong elements lo..hi of the sum over ranks (in the receive buffer from 0)."""
    period = sum(values(r, 13, c.dtype).astype(np.int64) for r in range(c.p))  # the sum repeats every 13
    if c.dtype == "mpi_char":  # MPI_CHAR sums wrap around in 8 bits
        period = (period + 128) % 256 - 128
    want = np.resize(np.roll(period, -(lo % 13)).astype(NP[c.dtype]), hi - lo)  # exact in every -T type
    got = c.rbuf[: (hi - lo) * c.tsize].view(NP[c.dtype])
    return int(np.count_nonzero(got != want))


def verify(c, size: int) -> int:
    from commbench.suites.osu.collectives import counts

    call, nb, p, me = c.bench.variant[0], c.nbytes, c.p, c.rank
    name, r = call.name, c.rbuf
    if name == "allreduce" or (name == "reduce" and me == 0):
        return reduced(c, 0, c.count)
    if name == "reduce_scatter":
        cnt, dsp = counts(c, call)
        return reduced(c, dsp[me], dsp[me] + cnt[me])
    if name == "reduce_scatter_block":
        k = c.count // p
        return reduced(c, me * k, (me + 1) * k)
    if name == "bcast":
        return 0 if me == 0 else int(np.count_nonzero(r[:nb] != pattern(0, nb, size)))
    if name in ("scatter", "scatterv"):
        return int(np.count_nonzero(r[:nb] != pattern(0, nb, size + me)))
    if name in ("allgather", "allgatherv") or (name in ("gather", "gatherv") and me == 0):
        want = np.concatenate([pattern(k, nb, size) for k in range(p)])
        return int(np.count_nonzero(r[: nb * p] != want))
    if name.startswith("alltoall"):
        want = np.concatenate([pattern(k, nb, size + me) for k in range(p)])
        return int(np.count_nonzero(r[: nb * p] != want))
    return 0
