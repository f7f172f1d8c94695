"""The symmetric segment of the PGAS tests: its geometry, its window, its random streams.

Each process's "symmetric segment" is an MPI window from MPI_Win_allocate (the
analogue of shmalloc: MPICH maps it into shared memory, so puts and gets on one
node are real one-sided copies; MPI_Win_create on user memory falls back to
messages that need the target's progress and ran 9-230x slower here, see
benchmarks/pgas_choices.py). The segment is locked for passive-target access
(MPI_Win_lock_all) for a whole measurement. It holds an R area (where puts
land) and an S area (the owner's data that gets read). A geometry function
(geo_*) sizes both areas for one benchmark and message size; `opener` makes
the setup that allocates and fills the window, `close` the teardown. What the
geometries allocate, for -mem and the pre-flight, is the catalog's
(commbench.suites.pgas: slot_len, random_slots, memory), which names these set-ups as base.Lazy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from mpi4py import MPI

from commbench import buffers
from commbench.option_types import RunError
from commbench.suites.pgas import random_slots, slot_len
from commbench.suites.pgas.pairing import partners
from commbench.suites.pgas.settings import PgasSettings


@dataclass
class PgasSegment:
    """R area (put destinations) then S area (the owner's data for gets)."""

    r_len: int
    s_data: np.ndarray  # bytes of the S area

    @property
    def s_off(self) -> int:
        return self.r_len


Geometry = Callable[[Any, PgasSettings], PgasSegment]


@dataclass
class SegmentRow:
    """What a PGAS test's setup keeps for one size on this rank (Context.own): its pair,
    its symmetric segment and, per test, the flag, strided types and random draws."""

    settings: PgasSettings
    partner: int  # my partner's group rank
    peer: int  # and its world rank (whose pattern lands here)
    lower: bool  # the lower rank of the pair (the origin of one-way tests)
    win: MPI.Win | None = None  # the symmetric segment (opener)
    mem: np.ndarray | None = None  # its memory
    seg: PgasSegment | None = None  # its geometry
    flag: MPI.Win | None = None  # --pgas-sync p2p: the flag window
    flag_mem: np.ndarray | None = None  # and its memory
    seen: int = 0  # flags seen
    sent: int = 0  # flags raised
    types: list = field(default_factory=list)  # the datatypes made for the row (freed by close)
    local: np.ndarray | None = None  # strided tests: the origin's local buffer
    origin: list | None = None  # and the origin and target arguments of its call
    target: tuple | None = None
    max_n: int = 0  # random tests: the most calls of one run
    last_target: int | None = None  # and the last call's target
    done: int = 0  # in-place tests: calls made so far


def _no_s() -> np.ndarray:
    return np.empty(0, np.uint8)


def _mine(ctx, nbytes: int) -> np.ndarray:
    """My source data (the pattern the harness puts in send buffers), made here
    where a segment area or a strided buffer is longer than the send buffer.
    The harness's fault injection (COMMBENCH_FAULT_CORRUPT) applies here too."""
    data = buffers.pattern(ctx.world_rank, nbytes, ctx.bench.dtype).copy()
    if ctx.session.corrupt:
        data ^= 0x5A
    return data


def geo_put(ctx, s: PgasSettings) -> PgasSegment:
    return PgasSegment(slot_len(ctx.x), _no_s())


def geo_get(ctx, s: PgasSettings) -> PgasSegment:
    return PgasSegment(0, _mine(ctx, ctx.x))


def geo_putget(ctx, s: PgasSettings) -> PgasSegment:
    return PgasSegment(slot_len(ctx.x), _mine(ctx, ctx.x))


def geo_strided_put(ctx, s: PgasSettings) -> PgasSegment:
    return PgasSegment(slot_len(ctx.x * (s.stride if s.strided != "origin" else 1)), _no_s())


def geo_strided_get(ctx, s: PgasSettings) -> PgasSegment:
    return PgasSegment(0, _mine(ctx, ctx.x * (s.stride if s.strided != "origin" else 1)))


def geo_random_put(ctx, s: PgasSettings) -> PgasSegment:
    # One region of K slots per origin: concurrent puts from different origins
    # never overlap (overlapping concurrent puts are erroneous in MPI).
    return PgasSegment(ctx.size * random_slots(ctx.x, s.span) * slot_len(ctx.x), _no_s())


def geo_random_get(ctx, s: PgasSettings) -> PgasSegment:
    k = random_slots(ctx.x, s.span)
    one = np.zeros(slot_len(ctx.x), np.uint8)
    one[: ctx.x] = _mine(ctx, ctx.x)
    return PgasSegment(0, np.tile(one, k))


def random_draws(
    seed: int, world_rank: int, group_rank: int, np_: int, slots: int, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """The first n (target group rank, slot) draws of one origin.

    Two PCG64 streams seeded with (seed, world rank, 0|1): the first n draws do
    not depend on how many are taken, so a target can recompute what any
    origin did (check mode) and a run can be repeated exactly.
    """
    t = np.random.default_rng([seed, world_rank, 0]).integers(0, np_ - 1, n, dtype=np.int64)
    t += t >= group_rank  # never myself
    k = np.random.default_rng([seed, world_rank, 1]).integers(0, slots, n, dtype=np.int64)
    return t, k


# The flag window: its counter alone in a cache line. A multiple of 16 bytes too: Debian's
# MPICH 4.0.2 packs a node's MPI_Win_allocate windows one after the other but takes each
# rank's base (MPI_WIN_BASE, which mpi4py's memory reads, and the target of puts and gets)
# rounded down to 16 bytes (repro/win_allocate_offset.c): 8-byte flag windows overlapped,
# and every notification landed in the counter its sender polled.
FLAG_BYTES = 64


def _open_flag(ctx, st: SegmentRow) -> None:
    """--pgas-sync p2p: the flag window, locked, its counter at 0, and tried once: each rank
    PUTs a token into its partner's counter and reads its own, so a library that
    delivers the notification elsewhere stops the run here, said, instead of leaving a
    partner polling until the watchdog's --timeout."""
    flag = MPI.Win.Allocate(FLAG_BYTES, 8, comm=ctx.comm)
    if flag.Get_attr(MPI.WIN_MODEL) != MPI.WIN_UNIFIED:
        flag.Free()
        raise RunError(
            "--pgas-sync p2p polls window memory and needs MPI's unified memory "
            "model; this MPI gives the separate model: use --pgas-sync barrier"
        )
    mine = np.frombuffer(flag.tomemory(), np.int64)[:1]
    mine[0] = 0
    flag.Lock_all()
    flag.Sync()
    ctx.comm.Barrier()
    token = np.array([-1 - ctx.world_rank], np.int64)  # negative: never a count
    flag.Put([token, 1, MPI.INT64_T], st.partner, (0, 1, MPI.INT64_T))
    flag.Flush(st.partner)
    ctx.comm.Barrier()
    flag.Sync()
    got = int(mine[0])
    mine[0] = 0
    flag.Sync()
    wrong = ctx.comm.allgather(None if got == -1 - st.peer else got)
    st.flag, st.flag_mem, st.seen, st.sent = flag, mine, 0, 0
    bad = [(r, g) for r, g in enumerate(wrong) if g is not None]
    if bad:
        r, g = bad[0]
        sender = partners(ctx.size, st.settings.offset)[r]
        own = (
            " (its own token: its put landed in its own window)" if g == -1 - ctx.members[r] else ""
        )
        raise RunError(
            "--pgas-sync p2p: the MPI library did not deliver a flushed MPI_Put to the "
            f"partner's {FLAG_BYTES}-byte MPI_Win_allocate window: rank {r} of the group "
            f"holds {g}{own} where rank {sender} put {-1 - ctx.members[sender]} (a library "
            "defect; --pgas-sync barrier avoids the flag window)"
        )


def opener(geometry: Geometry | None, flags: bool = False):
    def setup(ctx) -> None:
        s = PgasSettings.of(ctx.params)
        part = partners(ctx.size, s.offset)[ctx.rank]
        st = ctx.own = SegmentRow(
            settings=s, partner=part, peer=ctx.members[part], lower=ctx.rank < part
        )
        if geometry is None:
            return
        seg = geometry(ctx, s)
        total = seg.r_len + seg.s_data.nbytes
        win = MPI.Win.Allocate(max(total, 1), 1, comm=ctx.comm)
        mem = np.frombuffer(win.tomemory(), np.uint8)[:total]
        mem[: seg.r_len] = 0
        mem[seg.r_len :] = seg.s_data
        st.win, st.mem, st.seg = win, mem, seg
        if flags and s.sync == "p2p":
            _open_flag(ctx, st)
        win.Lock_all()
        win.Sync()
        ctx.comm.Barrier()  # every segment initialised before anyone reaches it

    return setup


def close(ctx) -> None:
    st: SegmentRow | None = ctx.own
    if st is None:
        return
    st.mem = st.flag_mem = None  # views of window memory die with their windows
    for w in (st.win, st.flag):
        if w is not None:
            w.Unlock_all()
            w.Free()
    st.win = st.flag = None
    for t in st.types:
        t.Free()
    st.types = []


def _vector(ctx, count: int, stride: int):
    t = MPI.FLOAT.Create_vector(count, 1, stride).Commit()
    ctx.own.types.append(t)
    return t


def strided_setup(is_put: bool):
    base = opener(geo_strided_put if is_put else geo_strided_get)

    def setup(ctx):
        base(ctx)
        st: SegmentRow = ctx.own
        s = st.settings
        count = ctx.x // 4
        origin_strided = s.strided in ("origin", "both")
        target_strided = s.strided in ("target", "both")
        span = ctx.x * s.stride if origin_strided else ctx.x
        # Local buffers of the strided origin are M*S long: made here (the
        # harness's buffers are M long); sources hold my pattern, sinks zeros.
        local = _mine(ctx, span) if is_put else np.zeros(span, np.uint8)
        o_type = _vector(ctx, count, s.stride) if origin_strided and count else MPI.FLOAT
        t_type = _vector(ctx, count, s.stride) if target_strided and count else MPI.FLOAT
        o_count = 1 if o_type is not MPI.FLOAT else count
        t_count = 1 if t_type is not MPI.FLOAT else count
        st.local, st.origin = local, [local, o_count, o_type]
        st.target = (0 if is_put else st.seg.s_off, t_count, t_type)

    return setup


def inplace_setup(ctx):
    opener(None)(ctx)
    ctx.rbuf[: ctx.x] = ctx.sbuf[: ctx.x]  # the source buffer is also the result
    ctx.own.done = 0
