"""The one-sided programs' windows, control block, mpi4py loops, per-size set-up (prepare,
release), rows and extras (onesided.py declares the programs and names these as base.Lazy;
commbench/native/osu_rma.c has the same loops in C).

The control block (cbosu_rma_ctl of osu.h, native_osu.RmaCtl) replaces ctx.abuf for the size:
the addresses of the MPI_Win and MPI_Group handles and of the buffers, the sync,
the operation, the first target displacement, the lock kind, the stride, and
`total`, the seconds of the timed loop that rank 0's loop writes (both engines).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from mpi4py import MPI

from commbench import buffers
from commbench.native import osu as native_osu
from commbench.suites.osu.onesided import chosen, window_bytes
from commbench.suites.osu.spec import bandwidth_row, latency_row

SYNCS = (
    "lock",
    "flush",
    "flush_local",
    "lock_all",
    "pscw",
    "fence",
)  # the order of osu_rma.c's S_*
OPS = ("put", "get", "acc", "get_acc", "fop", "cas")  # O_*


@dataclass
class RmaSetup:
    """One size's one-sided set-up on this rank (Ctx.own), made by prepare."""

    rma: Any  # the program's operation (onesided.RmaProgram)
    sync: str  # one of SYNCS
    nbytes: int  # the window's bytes
    win: MPI.Win | None = None  # make_window
    win_kind: str = "allocate"  # allocate | create | dynamic
    disp: int = 0  # the first target displacement (dynamic: the peer's address)
    wbuf: np.ndarray | None = None  # the window's memory
    origin: np.ndarray | None = None  # the origin buffer of the calls
    result: np.ndarray | None = None  # their result buffer (get_acc, fop, cas)
    compare: np.ndarray | None = None  # cas's compare value
    group: MPI.Group | None = None  # pscw: the peer's group
    lock: int = 0  # the lock kind of lock and the flush modes (MPI.LOCK_*; set by prepare)
    ctl: Any = None  # the control block (control_block)
    calls: Any = None  # the mpi4py engine's bound call (_calls)
    # the buffers of the run's --alloc kind made for it, by name (freed by release)
    allocs: dict[str, buffers.Allocation] = field(default_factory=dict)


def own_buffer(ctx, key: str, nbytes: int) -> np.ndarray:
    """A buffer of the run's --alloc kind kept in RmaSetup.allocs[key] (freed by release)."""
    a = buffers.Allocation(max(nbytes, 1), ctx.session.cfg.alloc, ctx.session.cfg.hugepages)
    a.array.fill(ord("a"))
    ctx.own.allocs[key] = a
    return a.array


def free_buffer(ctx, key: str) -> None:
    a = ctx.own.allocs.pop(key, None)
    if a is not None:
        a.free()


def make_window(ctx, kind: str, nbytes: int) -> None:
    """OSU's window of nbytes (displacement unit 1): RmaSetup's win, wbuf (its memory), disp."""
    comm, st = ctx.comm, ctx.own
    st.disp = 0
    if kind == "allocate":
        win = MPI.Win.Allocate(nbytes, 1, comm=comm)
        st.wbuf = np.frombuffer(win.tomemory(), dtype=np.uint8)
    else:
        mem = own_buffer(ctx, "wmem", nbytes)
        st.wbuf = mem
        if kind == "create":
            win = MPI.Win.Create(mem, 1, comm=comm)
        else:  # dynamic: attach, and swap the addresses as OSU does (rank 0 sends first)
            win = MPI.Win.Create_dynamic(comm=comm)
            win.Attach(mem)
            mine, theirs = (
                np.array([MPI.Get_address(mem)], dtype=np.int64),
                np.zeros(1, dtype=np.int64),
            )
            if ctx.rank == 0:
                comm.Send(mine, ctx.peer, 3)
                comm.Recv(theirs, ctx.peer, 3)
            else:
                comm.Recv(theirs, ctx.peer, 3)
                comm.Send(mine, ctx.peer, 3)
            st.disp = int(theirs[0])
    st.win, st.win_kind = win, kind


def free_window(ctx) -> None:
    st: RmaSetup = ctx.own
    win, st.win = st.win, None
    if st.win_kind == "dynamic":
        win.Detach(st.allocs["wmem"].array)
    st.wbuf = None
    win.Free()
    free_buffer(ctx, "wmem")


def control_block(ctx, size: int) -> None:
    """ctx.abuf := the control block of this size (what the C loops read)."""
    st: RmaSetup = ctx.own
    r = st.rma
    st.ctl = native_osu.RmaCtl(
        win=MPI._addressof(st.win),
        sync=SYNCS.index(st.sync),
        op=OPS.index(r.op),
        disp=st.disp,
        origin=st.origin.ctypes.data,
        result=st.result.ctypes.data,
        compare=st.compare.ctypes.data,
        group=MPI._addressof(st.group),
        exclusive=int(st.lock == MPI.LOCK_EXCLUSIVE),
        stride=ctx.nbytes,
        total=0.0,
    )
    ctx.abuf = native_osu.block(st.ctl)
    st.calls = _calls(ctx)


def total(ctx) -> float:
    """Rank 0's seconds of the last timed loop (either engine)."""
    return float(ctx.own.ctl.total)


def _calls(ctx):
    """The mpi4py calls of one operation: op(k) issues the k-th of a window."""
    st, c, t, p = ctx.own, ctx.count, ctx.mpi_type, ctx.peer
    win, o, res, cmp, d, stride = (
        st.win,
        st.origin,
        st.result,
        st.compare,
        st.disp,
        ctx.nbytes,
    )
    name = st.rma.op

    def target(k: int):
        return (d + k * stride, c, t)

    def op(k: int) -> None:
        off = k * stride
        if name == "put":
            win.Put([o[off:], c, t], p, target(k))
        elif name == "get":
            win.Get([res[off:], c, t], p, target(k))
        elif name == "acc":
            win.Accumulate([o, c, t], p, target(0), MPI.SUM)
        elif name == "get_acc":
            win.Get_accumulate([o, c, t], [res, c, t], p, target(0), MPI.SUM)
        elif name == "fop":
            win.Fetch_and_op([o, 1, t], [res, 1, t], p, d, MPI.SUM)
        else:
            win.Compare_and_swap([o, 1, t], [cmp, 1, t], [res, 1, t], p, d)

    return op


def _origin_epoch(ctx, ops) -> None:
    """One iteration of rank 0 by sync (pscw: after MPI_Win_start); ops() issues the operations."""
    st, p = ctx.own, ctx.peer
    win, sync, shape = st.win, st.sync, st.rma.shape
    if sync == "lock":
        win.Lock(p, st.lock, 0)
        ops()
        win.Unlock(p)
    elif sync in ("flush", "flush_local"):
        ops()
        (win.Flush if sync == "flush" else win.Flush_local)(p)
    elif sync == "lock_all":
        win.Lock_all(0)
        ops()
        win.Unlock_all()
    elif sync == "pscw":
        ops()
        win.Complete()
        if shape == "latency":
            win.Post(st.group, 0)
            win.Wait()
    else:
        win.Fence(0)
        ops()
        win.Fence(0)
        if shape == "latency":
            win.Fence(0)


def _target_side(ctx, n: int) -> None:
    """Rank 1's iterations: its half of pscw and fence (nothing under lock and flush)."""
    st: RmaSetup = ctx.own
    win, sync, g, op, lat = (
        st.win,
        st.sync,
        st.group,
        st.calls,
        st.rma.shape == "latency",
    )
    for _ in range(n):
        if sync == "pscw":
            win.Post(g, 0)
            win.Wait()
            if lat:
                win.Start(g, 0)
                op(0)
                win.Complete()
        elif sync == "fence":
            win.Fence(0)
            win.Fence(0)
            if lat:
                op(0)
                win.Fence(0)


def _origin(ctx, n: int, times, ops) -> None:
    st: RmaSetup = ctx.own
    win, g, pscw, wtime = st.win, st.group, st.sync == "pscw", MPI.Wtime
    t_start = 0.0
    for i in range(n):
        if pscw:
            win.Start(g, 0)
        if times is not None and i == 0:
            t_start = wtime()
        t0 = wtime()
        _origin_epoch(ctx, ops)
        if times is not None:
            times[i] = wtime() - t0
    if times is not None:
        st.ctl.total = wtime() - t_start


def latency(ctx, n: int, times) -> None:
    if ctx.rank != 0:
        _target_side(ctx, n)
        return
    op = ctx.own.calls
    _origin(ctx, n, times, lambda: op(0))


def bw(ctx, n: int, times) -> None:
    if ctx.rank != 0:
        _target_side(ctx, n)
        return
    op, w = ctx.own.calls, ctx.window
    _origin(ctx, n, times, lambda: [op(k) for k in range(w)])


def bibw(ctx, n: int, times) -> None:
    st: RmaSetup = ctx.own
    win, g, op, w, wtime = st.win, st.group, st.calls, ctx.window, MPI.Wtime
    timed = times is not None and ctx.rank == 0
    t_start = wtime() if timed else 0.0
    for i in range(n):
        t0 = wtime()
        if st.sync == "pscw":
            win.Post(g, 0)
            win.Start(g, 0)
            for k in range(w):
                op(k)
            win.Complete()
            win.Wait()
        else:
            win.Fence(0)
            for k in range(w):
                op(k)
            win.Fence(0)
        if timed:
            times[i] = wtime() - t0
    if timed:
        st.ctl.total = wtime() - t_start


def prepare(ctx, size: int) -> None:
    """The size's window (collective), the origin buffers, the pscw group, the flush
    modes' lock, and the control block the loops read."""
    b, comm = ctx.bench, ctx.comm
    r, win_kind, sync = chosen(b, ctx.s)
    st = ctx.own = RmaSetup(rma=r, sync=sync, nbytes=window_bytes(b, ctx, size))
    make_window(ctx, win_kind, st.nbytes)
    if r.shape in ("bw", "bibw"):
        st.origin = st.result = own_buffer(ctx, "obuf", ctx.window * size)
    else:
        st.origin, st.result = ctx.sbuf, ctx.rbuf
    st.compare = own_buffer(ctx, "cbuf", 8)
    world = comm.Get_group()
    st.group = world.Incl([ctx.peer])
    world.Free()
    st.lock = MPI.LOCK_EXCLUSIVE if (r.lock_x if sync == "lock" else r.flush_x) else MPI.LOCK_SHARED
    if sync in ("flush", "flush_local") and ctx.rank == 0:
        st.win.Lock(ctx.peer, st.lock, 0)
    control_block(ctx, size)


def release(ctx, size: int) -> None:
    st: RmaSetup = ctx.own
    if st.sync in ("flush", "flush_local") and ctx.rank == 0:
        st.win.Unlock(ctx.peer)
    ctx.comm.Barrier()
    free_window(ctx)
    st.group.Free()
    st.origin = st.result = st.compare = None
    for k in ("obuf", "cbuf"):
        free_buffer(ctx, k)


def lat_row(ctx, s, times) -> dict:
    r, sync = ctx.own.rma, ctx.own.sync
    halves = 2 if sync in ("pscw", "fence") else 1
    vals = latency_row(times, halves if r.tail_halves else 1, s.percentiles)
    t = total(ctx) * 1e6 / (halves * len(times))
    vals.update(t=t, t_min=t, t_max=t, t_avg=t)
    return vals


def bw_row(ctx, s, times) -> dict:
    moved = ctx.nbytes * ctx.window * ctx.own.rma.dirs
    vals = bandwidth_row(times, moved, s.percentiles)
    secs = total(ctx)
    t = secs / len(times) * 1e6
    vals.update(
        bytes_per_sec=moved * len(times) / secs if secs > 0 else 0.0,
        t=t,
        t_min=t,
        t_max=t,
        t_avg=t,
    )
    return vals


def extra(ctx, s, ex: dict) -> dict:
    """The window and synchronization chosen; -c says passed/failed, as OSU."""
    _, win_kind, sync = chosen(ctx.bench, s)
    out = {"rma_window": win_kind, "rma_sync": sync}
    if "validation" in ex:
        out["validation"] = "passed" if ex["validation"] == "Pass" else "failed"
    return out
