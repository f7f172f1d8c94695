"""Check mode of the PGAS tests: what each benchmark's destination must hold.

Each verifier runs after its kernel, waits until every origin has flushed
(`_quiesce`), and returns the deviation of what landed from what the seed's
data pattern says (None where this rank has nothing to check).
"""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

from commbench import buffers
from commbench.suites.pgas import random_slots, slot_len
from commbench.suites.pgas.segment import SegmentRow, random_draws


def _dev(got: np.ndarray, exp: np.ndarray, dtype: str = "float32") -> float:
    return buffers.deviation(got, exp, dtype)


def _quiesce(ctx) -> None:
    """Every origin has flushed (its kernel returned) before a target reads its segment."""
    ctx.comm.Barrier()
    win = ctx.own.win
    if win is not None:
        win.Sync()


def _peer_pattern(ctx, nbytes: int) -> np.ndarray:
    return buffers.pattern(ctx.own.peer, nbytes, ctx.bench.dtype)


def check_putget(ctx, n):
    _quiesce(ctx)
    st: SegmentRow = ctx.own
    if st.lower:  # fetched the partner's S area
        return _dev(ctx.rbuf[: ctx.x], _peer_pattern(ctx, ctx.x))
    return _dev(st.mem[: ctx.x], _peer_pattern(ctx, ctx.x))  # the partner's put landed


def check_put(both: bool):
    def check(ctx, n):
        _quiesce(ctx)
        st: SegmentRow = ctx.own
        if st.lower and not both:
            return None
        return _dev(st.mem[: ctx.x], _peer_pattern(ctx, ctx.x))

    return check


def check_get(both: bool):
    def check(ctx, n):
        _quiesce(ctx)
        if not (both or ctx.own.lower):
            return None
        return _dev(ctx.rbuf[: ctx.x], _peer_pattern(ctx, ctx.x))

    return check


def _strided_expect(
    ctx, source: np.ndarray, from_strided: bool, to_strided: bool, out_len: int
) -> np.ndarray:
    """Where the M/4 floats of `source` land: element j of the transfer is source
    element j (or j*S when the source is strided), stored at j (or j*S)."""
    s = ctx.own.settings.stride
    count = ctx.x // 4
    src = source.view(np.float32)
    vals = src[: count * s : s] if from_strided else src[:count]
    out = np.zeros(out_len // 4, np.float32)
    if to_strided:
        out[: count * s : s] = vals
    else:
        out[:count] = vals
    return out.view(np.uint8)


def check_strided_put(ctx, n):
    _quiesce(ctx)
    st: SegmentRow = ctx.own
    if st.lower:
        return None
    s = st.settings
    o, t = s.strided in ("origin", "both"), s.strided in ("target", "both")
    src_len = ctx.x * (s.stride if o else 1)
    exp = _strided_expect(ctx, _peer_pattern(ctx, src_len), o, t, st.seg.r_len // 4 * 4)
    return _dev(st.mem[: exp.nbytes], exp)


def check_strided_get(ctx, n):
    _quiesce(ctx)
    st: SegmentRow = ctx.own
    if not st.lower:
        return None
    s = st.settings
    o, t = s.strided in ("origin", "both"), s.strided in ("target", "both")
    src_len = ctx.x * (s.stride if t else 1)
    local = st.local
    exp = _strided_expect(ctx, _peer_pattern(ctx, src_len), t, o, local.nbytes)
    return _dev(local[: exp.nbytes], exp)


def check_random_put(ctx, n):
    """My region for each origin: the slots it drew for me hold its data, the rest zeros."""
    _quiesce(ctx)
    st: SegmentRow = ctx.own
    s = st.settings
    slot, k = slot_len(ctx.x), random_slots(ctx.x, s.span)
    m = st.max_n
    devs = []
    for o in range(ctx.size):
        if o == ctx.rank:
            continue
        w = ctx.members[o]
        targets, slots = random_draws(s.seed, w, o, ctx.size, k, m)
        exp = np.zeros((k, slot), np.uint8)
        exp[np.unique(slots[targets == ctx.rank]), : ctx.x] = buffers.pattern(
            w, ctx.x, ctx.bench.dtype
        )
        region = st.mem[o * k * slot : (o + 1) * k * slot]
        devs.append(_dev(region, exp.reshape(-1)))
    return max(devs) if devs else None


def check_random_get(ctx, n):
    """The last GET's data, then one untimed GET from every other rank's S area.

    The timed GETs all land in one buffer, so only the last target's data
    survives them; a target whose data is wrong would pass unless it was drawn
    last. Each rank's segment is read once more (slot 0 of its S area)."""
    _quiesce(ctx)
    last = ctx.own.last_target
    if last is None:
        return None
    exp = buffers.pattern(ctx.members[last], ctx.x, ctx.bench.dtype)
    devs = [_dev(ctx.rbuf[: ctx.x], exp)]
    win, got = ctx.own.win, ctx.rbuf[: ctx.x]
    for t in range(ctx.size):
        if t != ctx.rank:
            got[:] = 0
            win.Get([got, MPI.BYTE], t, ctx.own.seg.s_off)
            win.Flush_local(t)
            devs.append(_dev(got, buffers.pattern(ctx.members[t], ctx.x, ctx.bench.dtype)))
    return max(devs)


def _int_sum(ctx) -> np.ndarray:
    """Sum over the group of every rank's int32 pattern, with int32 wrap-around."""
    count = ctx.x // 4
    acc = np.zeros(count, np.int64)
    for w in ctx.members:
        acc += buffers.pattern(w, 4 * count, "int32").view(np.int32)
    return acc.astype(np.uint64) & np.uint64(0xFFFFFFFF)


def check_reduction_separate(ctx, n):
    exp = _int_sum(ctx).astype(np.uint32).view(np.uint8)
    return _dev(ctx.rbuf[: exp.nbytes], exp, "int32")


def check_reduction_inplace(ctx, n):
    """After k in-place sums every buffer holds NP^(k-1) * (the sum), modulo 2^32.

    With an even NP that is 0 for every input once k >= 33, so the timed
    result alone cannot show a wrong sum: one more in-place sum of the original
    data (this rank's source, as the set-up copied it), after the timed loop and
    collective like it, is checked against the plain sum as well."""
    k = ctx.own.done
    if k == 0:
        return None
    total = _int_sum(ctx)
    factor = np.uint64(pow(ctx.size, k - 1, 2**32))
    exp = ((total * factor) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.uint8)
    timed = _dev(ctx.rbuf[: exp.nbytes], exp, "int32")
    count = ctx.x // 4
    ctx.rbuf[: 4 * count] = ctx.sbuf[: 4 * count]
    ctx.comm.Allreduce(MPI.IN_PLACE, [ctx.rbuf[: 4 * count], count, MPI.INT], MPI.SUM)
    once = _dev(ctx.rbuf[: exp.nbytes], total.astype(np.uint32).view(np.uint8), "int32")
    return max(timed, once)
