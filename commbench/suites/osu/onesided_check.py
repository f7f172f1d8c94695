"""-c for OSU's atomic one-sided programs (acc_latency, fop_latency, cas_latency: the
ones whose OMB 7.4 binary takes -c), commbench's procedure (docs/osu.md).

After the timed loop of a size: refill() (after ctx.fill) waits for every rank
(no operation is in flight then) and sets, in the -T type, the origin values v(r)
(COMMBENCH_FAULT_CORRUPT's rank spoils its first byte), every window to w(r) and,
for cas, the compare value to the target's w; one iteration of the loop runs;
verify() waits for every rank again and counts the wrong bytes: the target's
window must hold w + v(origin) (acc, and fop's first element) or v(origin) (cas),
the fop/cas origin's result the target's old w. Under lock, flush and lock_all
rank 0 is the only origin; under pscw and fence both ranks are origin and target.
Small integers (1..92) keep every sum exact in MPI_CHAR, MPI_INT and MPI_FLOAT.
"""

from __future__ import annotations

import numpy as np

NUMPY = {
    "mpi_char": "int8",
    "mpi_int": "int32",
    "mpi_float": "float32",
}  # the -T types as numpy dtypes


def values(rank: int, n: int, size: int, dtype: str) -> np.ndarray:
    """v(rank): what rank's operations carry."""
    return ((np.arange(n) + 7 * (rank + 1) + size) % 61 + 1).astype(NUMPY[dtype])


def initial(rank: int, n: int, dtype: str) -> np.ndarray:
    """w(rank): rank's window before the validation iteration."""
    return ((np.arange(n) + 3 * (rank + 1)) % 31 + 1).astype(NUMPY[dtype])


def typed(buf: np.ndarray, n: int, dtype: str) -> np.ndarray:
    return buf[: n * np.dtype(NUMPY[dtype]).itemsize].view(NUMPY[dtype])


def both_ways(ctx) -> bool:
    return ctx.own.sync in ("pscw", "fence")


def elements(ctx) -> int:
    return 1 if ctx.own.rma.op in ("fop", "cas") else ctx.count


def refill(ctx, size: int) -> None:
    st, n, dt = ctx.own, elements(ctx), ctx.dtype
    ctx.comm.Barrier()
    typed(st.origin, n, dt)[:] = values(ctx.rank, n, size, dt)
    if ctx.session.corrupt:
        st.origin[0] ^= 0xFF
    typed(st.wbuf, n, dt)[:] = initial(ctx.rank, n, dt)
    typed(st.result, n, dt)[:] = 0
    typed(st.compare, 1, dt)[:] = initial(ctx.peer, 1, dt)


def wrong(got: np.ndarray, want: np.ndarray) -> int:
    return int(np.count_nonzero(got.view(np.uint8) != want.view(np.uint8)))


def verify(ctx, size: int) -> int:
    st, n, dt, op = ctx.own, elements(ctx), ctx.dtype, ctx.own.rma.op
    ctx.comm.Barrier()
    bad = 0
    if ctx.rank == 1 or both_ways(ctx):  # a target
        want = initial(ctx.rank, n, dt)
        sent = values(ctx.peer, n, size, dt)
        want = sent if op == "cas" else (want + sent).astype(want.dtype)
        bad += wrong(typed(st.wbuf, n, dt), want)
    if op in ("fop", "cas") and (ctx.rank == 0 or both_ways(ctx)):  # an origin that fetches
        bad += wrong(typed(st.result, 1, dt), initial(ctx.peer, 1, dt))
    return bad
