"""The timed IMB-IO kernels (spec §10.2, §10.3) and their per-X preparation.

setup(ctx) opens the (benchmark, NP) file with this rank's view for one size
X, teardown closes it; blocking_kernel, nonblocking_kernel and open_close
perform n elementary actions and return the time per action.
"""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

from commbench import cpu, policy
from commbench.suites.io.check import verify_read
from commbench.suites.io.files import RUN, IoRow, Shared, amode
from commbench.suites.io.grammar import Spec, share

# ---------------------------------------------------------------- per X: open with the view


def _open(ctx) -> None:
    st: Shared = ctx.layout.own
    row: IoRow = ctx.own
    row.fh = MPI.File.Open(st.fcomm, st.path, amode(), RUN.info)
    row.fh.Set_view(0, MPI.BYTE, row.ftype, "native", RUN.info)


def setup(ctx) -> None:
    st: Shared = ctx.layout.own
    spec: Spec = st.spec
    fcomm = st.fcomm
    frank, fsize = fcomm.Get_rank(), fcomm.Get_size()
    x = ctx.x
    pos1, ln = share(spec, x, ctx.size if spec.pointer == "Priv" else fsize, frank)
    span = ln if spec.pointer == "Priv" else x  # file bytes between consecutive transfers
    ftype, own_type = MPI.BYTE, None
    if spec.pointer == "Indv" and spec.cls != "S" and ln > 0:
        # tiled view: extent X, my len bytes at pos1 -> transfer k lands at k·X + pos1
        base = MPI.Datatype.Create_struct([ln], [pos1], [MPI.BYTE])
        own_type = base.Create_resized(0, x).Commit()
        base.Free()
        ftype = own_type
    if spec.write:
        bufs = [[ctx.sbuf[:ln], MPI.BYTE]]
    else:
        stride = ctx.bufs.recv_stride
        bufs = [[ctx.rbuf[k * stride : k * stride + ln], MPI.BYTE] for k in range(ctx.slots)]
    ctx.own = IoRow(pos1=pos1, len=ln, span=span, ftype=ftype, own_type=own_type, bufs=bufs)
    _open(ctx)


def teardown(ctx) -> None:
    row: IoRow | None = ctx.own
    if row is None:
        return
    fh, row.fh = row.fh, None
    if fh is not None:
        fh.Close()
    if row.own_type is not None:
        row.own_type.Free()
        row.own_type = None


# ---------------------------------------------------------------- kernels


def _calls(spec: Spec, fh: MPI.File) -> tuple:
    """(call, takes an offset) of the blocking elementary action (spec §10.2)."""
    c, w = spec.collective, spec.write
    if spec.pointer == "Expl":
        return (
            (fh.Write_at_all if c else fh.Write_at) if w else (fh.Read_at_all if c else fh.Read_at)
        ), True
    if spec.pointer == "Shared":
        return (
            (fh.Write_ordered if c else fh.Write_shared)
            if w
            else (fh.Read_ordered if c else fh.Read_shared)
        ), False
    return ((fh.Write_all if c else fh.Write) if w else (fh.Read_all if c else fh.Read)), False


def _reset_pointers(spec: Spec, fh: MPI.File) -> None:
    """Every kernel call starts at file offset 0 (spec §5.3: after preliminary runs)."""
    if spec.pointer == "Shared":
        fh.Seek_shared(0, MPI.SEEK_SET)  # collective over the file communicator
    elif spec.pointer != "Expl":
        fh.Seek(0, MPI.SEEK_SET)


def _blocking(ctx, n: int, aggregate: bool) -> float:
    """n blocking transfers; writes end with the sync-barrier-sync triplet (spec §10.3)."""
    spec: Spec = ctx.layout.own.spec
    s: IoRow = ctx.own
    fh: MPI.File = s.fh
    _reset_pointers(spec, fh)
    call, at = _calls(spec, fh)
    bufs = s.bufs
    items = [bufs[k % len(bufs)] for k in range(n)]
    offs = [s.pos1 + k * s.span for k in range(n)]
    check = ctx.cfg.check and not spec.write
    sync, barrier = fh.Sync, ctx.layout.own.fcomm.Barrier
    if check:
        t0 = MPI.Wtime()
        for k in range(n):
            (call(offs[k], items[k]) if at else call(items[k]))
            verify_read(ctx, k, items[k][0])
        return (MPI.Wtime() - t0) / n
    if not spec.write or aggregate:
        t0 = MPI.Wtime()
        if at:
            for off, b in zip(offs, items):
                call(off, b)
        else:
            for b in items:
                call(b)
        if spec.write:
            sync()
            barrier()
            sync()
        return (MPI.Wtime() - t0) / n
    t0 = MPI.Wtime()  # non-aggregate write: every transfer completed singly
    for k in range(n):
        (call(offs[k], items[k]) if at else call(items[k]))
        sync()
        barrier()
        sync()
    return (MPI.Wtime() - t0) / n


def blocking_kernel(ctx, n: int) -> float:
    return _blocking(ctx, n, ctx.mode != "NON-AGGREGATE")


def _istarts(spec: Spec, fh: MPI.File) -> tuple:
    """(start, end, takes an offset) of the nonblocking action: i-call or split collective."""
    w = spec.write
    if spec.collective:
        if spec.pointer == "Expl":
            return (
                (fh.Write_at_all_begin, fh.Write_at_all_end, True)
                if w
                else (fh.Read_at_all_begin, fh.Read_at_all_end, True)
            )
        if spec.pointer == "Shared":
            return (
                (fh.Write_ordered_begin, fh.Write_ordered_end, False)
                if w
                else (fh.Read_ordered_begin, fh.Read_ordered_end, False)
            )
        return (
            (fh.Write_all_begin, fh.Write_all_end, False)
            if w
            else (fh.Read_all_begin, fh.Read_all_end, False)
        )
    if spec.pointer == "Expl":
        return (fh.Iwrite_at if w else fh.Iread_at), None, True
    if spec.pointer == "Shared":
        return (fh.Iwrite_shared if w else fh.Iread_shared), None, False
    return (fh.Iwrite if w else fh.Iread), None, False


def nonblocking_kernel(ctx, n: int) -> tuple[float, float, float]:
    """t_pure from the blocking pattern, then the overlapped run on a reopened file (spec §10.3)."""
    spec: Spec = ctx.layout.own.spec
    s: IoRow = ctx.own
    t_pure = _blocking(ctx, n, aggregate=True)
    s.fh.Close()
    _open(ctx)  # reopening resets every file pointer
    fh: MPI.File = s.fh
    begin, end, at = _istarts(spec, fh)
    bufs = s.bufs
    items = [bufs[k % len(bufs)] for k in range(n)]  # I-reads: one slot per request
    offs = [s.pos1 + k * s.span for k in range(n)]
    exploit, target = cpu.shared().exploit, RUN.target
    barrier = ctx.comm.Barrier
    fbarrier, sync = ctx.layout.own.fcomm.Barrier, fh.Sync
    reqs: list = [None] * n
    for _ in range(policy.N_BARR):
        barrier()
    t0 = MPI.Wtime()
    if end is not None:  # split collective: n × {begin; compute; end}
        for k in range(n):
            (begin(offs[k], items[k]) if at else begin(items[k]))
            exploit(target, False)
            end(items[k])
    else:  # n requests in flight, n × compute, wait for all
        for k in range(n):
            reqs[k] = begin(offs[k], items[k]) if at else begin(items[k])
        for _ in range(n):
            exploit(target, False)
        MPI.Request.Waitall(reqs)
    if spec.write:
        sync()
        fbarrier()
        sync()
    t_ovrl = (MPI.Wtime() - t0) / n
    if ctx.cfg.check and not spec.write and n <= len(bufs):
        # (more requests than slots happens only with -iter_policy off beyond
        # OVERALL_VOL: requests then share a slot and its final data is a race)
        for k in range(n):
            verify_read(ctx, k, bufs[k][0])
    return t_ovrl, t_pure, RUN.t_cpu


def open_close(ctx, n: int) -> float:
    """n × {open on MY_COMM; write 1 byte; close} (spec §10.3, A20)."""
    open_, comm, path, info = MPI.File.Open, ctx.comm, ctx.layout.own.path, RUN.info
    one = [np.zeros(1, np.uint8), MPI.BYTE]
    t0 = MPI.Wtime()
    for _ in range(n):
        fh = open_(comm, path, amode(), info)
        fh.Write(one)
        fh.Close()
    return (MPI.Wtime() - t0) / n
