"""IMB-RMA's check mode (spec §15): what each benchmark's targets or origins hold after
its timed runs (rma.py's descriptors name these verifiers)."""

from __future__ import annotations

import numpy as np

from commbench import buffers
from commbench.suites import onesided as osd
from commbench.suites.base import xp
from commbench.suites.rma.kernels import cas_values
from commbench.suites.verify import check_slots, worst

# ---------------------------------------------------------------- check mode (spec §15)


def others(ctx):
    return [r for r in range(ctx.size) if r != ctx.rank]


def _pat(ctx, group_rank: int, nbytes: int | None = None) -> np.ndarray:
    return buffers.pattern(
        ctx.members[group_rank], ctx.x if nbytes is None else nbytes, ctx.bench.dtype
    )


def arrived(receivers, source):
    """Put targets / get origins hold the source's pattern in every used slot."""

    def expected(ctx, n):
        me = ctx.rank
        if me not in receivers(ctx):
            return None
        if not op_is_get(ctx):  # get origins read their own buffer, complete after the flush
            osd.sync_local(ctx)
        exp = _pat(ctx, source(ctx))
        return check_slots(ctx, n, lambda k: [(0, exp)])

    return expected


def op_is_get(ctx) -> bool:
    return ctx.bench.variant == osd.GET


def from_one_of(receivers, sources):
    """Concurrent transfers into one area (One_get_all, All_*): one source's data survives.

    So a source whose data is wrong would pass whenever another's survived:
    after the timed data, every source's is verified once more, one source at a
    time, into slot 0 (onesided.each_source)."""

    def expected(ctx, n):
        mine = ctx.rank in receivers(ctx)
        timed = None
        cands = [_pat(ctx, s) for s in sources(ctx)] if mine else []
        if cands:
            if not op_is_get(ctx):
                osd.sync_local(ctx)
            stride = ctx.bufs.recv_stride
            timed = osd.each_used_slot(
                ctx,
                n,
                lambda k: osd.one_of(osd.slot_area(ctx, ctx.rbuf, stride, k, 0, ctx.x), cands),
            )
        swept = osd.each_source(ctx, mine, others(ctx), lambda s: _pat(ctx, s), op_is_get(ctx))
        return worst([timed, swept]) if cands else None

    return expected


def check_exchange(ctx, n):
    if not op_is_get(ctx):
        osd.sync_local(ctx)
    x = ctx.x
    right, left = (ctx.rank + 1) % ctx.size, (ctx.rank - 1) % ctx.size
    exp = [(0, _pat(ctx, right)), (x, _pat(ctx, left, 2 * xp(x))[x : 2 * x])]
    return check_slots(ctx, n, lambda k: exp)


def check_accumulate(fetches: bool, nbytes=None):
    """Target: uses×pattern of rank 0 per slot; origin (fetching ops): (uses−1)×pattern."""

    def expected(ctx, n):
        size = ctx.x if nbytes is None else nbytes
        uses = ctx.uses
        m0 = [ctx.members[0]]
        dev = None
        if ctx.rank == 1:
            osd.sync_local(ctx)
            dev = check_slots(ctx, n, lambda k: [(0, osd.scaled(m0, size, int(uses[k])))])
        elif fetches:
            dev = check_slots(ctx, n, lambda k: [(0, osd.scaled(m0, size, int(uses[k]) - 1))])
        osd.restart_uses(ctx)
        return dev

    return expected


def cas_setup(ctx):
    if ctx.rank == 0:
        cas_values(ctx)
    osd.create_window(ctx, osd.PUT, 4)


def check_cas(ctx, n):
    value = _pat(ctx, 0, 4)
    zero = np.zeros(4, dtype=np.uint8)
    uses = ctx.uses
    stride = ctx.bufs.recv_stride
    if ctx.rank == 1:  # the first swap succeeded, later ones found a non-matching value
        osd.sync_local(ctx)
        dev = osd.each_used_slot(
            ctx, n, lambda k: osd.exact(osd.slot_area(ctx, ctx.rbuf, stride, k, 0, 4), value)
        )
    else:  # origin: the first result is the old value 0, later results the swapped-in value
        dev = osd.each_used_slot(
            ctx,
            n,
            lambda k: osd.exact(
                osd.slot_area(ctx, ctx.rbuf, stride, k, 0, 4), zero if uses[k] == 1 else value
            ),
        )
    osd.restart_uses(ctx)
    return dev
