"""The arguments of the native kernels: cb_args of kernels.c (NativeArgs, its fields read from
kernels.c's CB_ARGS_FIELDS), and the builders that fill it from the harness's Context,
one per shape of arguments (ARGS, the `args` field of a row of kernels.c's table)."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from pathlib import Path

from commbench.native import abi

KERNELS = Path(__file__).with_name("kernels.c")


class NativeArgs(ctypes.Structure):
    """cb_args of kernels.c: its fields are the rows of CB_ARGS_FIELDS there."""

    _fields_ = abi.fields(KERNELS, "CB_ARGS_FIELDS")


# ---------------------------------------------------------------- wiring

# cb_datatype's codes of IMB 2021's type names (commbench.policy.DATA_TYPES).
TYPE_CODES = {"byte": 0, "char": 1, "int": 2, "float": 3, "double": 4}


def _base(ctx, count: int, red: bool = False) -> tuple[NativeArgs, list]:
    """The common arguments; count in elements of the datatype, the message type
    (ctx.data_type) or, for a reduction, ctx.red_type."""
    from mpi4py import MPI

    a = NativeArgs()
    a.dtype = TYPE_CODES[ctx.red_type if red else ctx.data_type]
    a.comm = MPI._addressof(ctx.comm)
    a.sbuf = ctx.sbuf.ctypes.data if ctx.sbuf.nbytes else None
    a.rbuf = ctx.rbuf.ctypes.data if ctx.rbuf.nbytes else None
    a.sstride = ctx.bufs.send_stride
    a.rstride = ctx.bufs.recv_stride
    a.slots = max(ctx.slots, 1)
    a.count = count
    a.rank = ctx.rank
    a.size = ctx.size
    a.peer = 1 - ctx.rank if ctx.size == 2 else -1
    a.source = -1
    a.sync = ctx.sync
    a.root_shift = ctx.root_shift
    a.imb_barrier = int(ctx.imb_barrier)
    a.first = ctx.first
    return a, []


def _with_counts(
    a: NativeArgs, keep: list, counts: list[int], displs: list[int] | None = None
) -> None:
    import numpy as np

    c = np.asarray(counts, dtype=np.intc)
    keep.append(c)
    a.counts = c.ctypes.data
    if displs is not None:
        d = np.asarray(displs, dtype=np.intc)
        keep.append(d)
        a.displs = d.ctypes.data


def _p2p(specific: bool) -> Callable:
    def args(ctx):
        a, keep = _base(ctx, ctx.x // ctx.width)
        if specific:
            a.source = 1 - ctx.rank
        return a, keep

    return args


def _p2p_select(ctx):
    a, keep = _base(ctx, ctx.x // ctx.width)
    if not ctx.any_source:  # the methodology's source (Context.any_source)
        a.source = 1 - ctx.rank
    return a, keep


def _exchange(ctx):
    a, keep = _base(ctx, ctx.x // ctx.width)
    a.soff2 = max(ctx.x, 4)  # the second send block, at mpi1.xp(X)
    return a, keep


def _floats(ctx):
    return _base(ctx, ctx.x // ctx.red_width, red=True)  # a reduction's elements (-red_data_type)


def _reduce_scatter(ctx):
    from commbench import policy

    a, keep = _base(ctx, 0, red=True)
    each = ctx.cfg.method.reduce_scatter_each
    items = policy.reduce_scatter_items(ctx.x, ctx.red_width, ctx.size, each)
    _with_counts(a, keep, policy.even_counts(items, ctx.size))
    return a, keep


def _window(ctx):
    a, keep = _base(ctx, ctx.x // ctx.width)
    pairs = ctx.size // 2  # rank r < NP/2 pairs with r + NP/2; the last of an odd NP idles
    me = ctx.rank
    a.peer = -1 if me >= 2 * pairs else (me + pairs if me < pairs else me - pairs)
    a.window = ctx.params.get("mpi1_window_size", 256)
    return a, keep


def _bytes(ctx):
    return _base(ctx, ctx.x // ctx.width)


def _vbytes(ctx):
    c = ctx.x // ctx.width
    a, keep = _base(ctx, c)
    _with_counts(a, keep, [c] * ctx.size, [j * c for j in range(ctx.size)])
    return a, keep


# ---------------------------------------------------------------- one-sided, nonblocking

# What the one-sided and MPI-4 setups leave in the row's Context (typed fields,
# commbench.harness.context) for the kernels of both engines: ctx.win and ctx.disps
# (commbench.suites.onesided.create_window: the window, each slot's target displacement),
# ctx.uses (its check-mode use counts, onesided.count_uses), ctx.requests (MPI-4's
# persistent requests, {root: [request of slot k]}), ctx.cpu_target (the overlap rows'
# computation, commbench.suites.nbc).


def _onesided(elements: int, active: str, fenced: bool = False) -> Callable:
    """A one-sided pattern's arguments: X bytes (elements 1) or X/4 floats (4) a call, the
    window of ctx.win, slot k's target displacement k * tstride, and which ranks make
    the RMA calls: 'r0' (rank 0), 'r1' (rank 1) or 'all'; fenced: IMB-EXT's Accumulate,
    whose epochs imb2021 fences open and closed apart (imb_methodology). In check mode the C
    loop counts the uses of each slot into ctx.uses, as onesided.count_uses does."""

    def args(ctx):
        import numpy as np
        from mpi4py import MPI

        a, keep = _base(ctx, ctx.x // elements)
        a.win = MPI._addressof(ctx.win)
        disps = ctx.disps
        a.tstride = disps[1] if len(disps) > 1 else 0  # disps[k] = k * disps[1]
        a.active = int(active == "all" or ctx.rank == int(active[1:]))
        a.agg = int(ctx.mode == "AGGREGATE")
        a.fenced = int(fenced and ctx.cfg.method.fenced_accumulate)
        a.soff2 = ctx.x  # Exchange: the second block, in bytes and in displacement units (1)
        if ctx.cfg.check:
            uses = ctx.uses
            if uses is None:
                uses = ctx.uses = np.zeros(ctx.slots, dtype=np.int64)
            a.uses = uses.ctypes.data
        return a, keep

    return args


def _persist(ctx):
    """MPI-4: the addresses of the persistent requests of ctx.requests, one per
    (root, slot) at [root * slots + slot]; a non-rooted operation's for every root."""
    from mpi4py import MPI

    a, keep = _base(ctx, 0)
    by_root = ctx.requests
    first = next(iter(by_root.values()))
    table = [MPI._addressof(req) for root in range(ctx.size) for req in by_root.get(root, first)]
    arr = (ctypes.c_void_p * len(table))(*table)
    keep.append(arr)
    a.preqs = ctypes.addressof(arr)
    a.slots = len(first)  # requests per root (one for Barrier)
    return a, keep


# The argument builders a row of kernels.c's table names: (NativeArgs, keep) from the
# harness's Context, keep holding the arrays that must outlive the call.
ARGS: dict[str, Callable] = {
    "p2p": _p2p(False),  # X bytes, receive from MPI_ANY_SOURCE
    "p2p_specific": _p2p(True),  # X bytes, receive from the partner
    "p2p_select": _p2p_select,  # X bytes, receive as the methodology says (PingPong, PingPing)
    "bytes": _bytes,  # X bytes
    "floats": _floats,  # X/4 floats
    "exchange": _exchange,  # X bytes, second send block at max(X, 4)
    "reduce_scatter": _reduce_scatter,  # counts: X/4 floats spread evenly over the ranks
    "vbytes": _vbytes,  # X bytes per rank, counts X, displacements j*X
    "window": _window,  # X bytes, -window_size messages to the peer r ± NP/2
    "win_r0": _onesided(1, "r0"),  # X bytes, rank 0 makes the RMA calls
    "win_r1": _onesided(1, "r1"),  # X bytes, rank 1 makes them
    "win_all": _onesided(1, "all"),  # X bytes, every rank makes them
    "winf_r0": _onesided(4, "r0"),  # X/4 floats, rank 0
    "winf_all": _onesided(4, "all", fenced=True),  # X/4 floats, every rank: EXT Accumulate
    "persist": _persist,  # MPI-4's persistent requests by root and slot
}
