"""OSU's one-sided benchmarks: put_latency, get_latency, put_bw, get_bw, put_bibw,
acc_latency, get_acc_latency, fop_latency, cas_latency (OMB 7.4).

Their procedure, as the binaries run it (tests/data/osu/README.md: read off them
with an MPI call trace, tests/data/osu/trace_rma.c, and a made-up MPI_Wtime):

- Per size a new window (-w: MPI_Win_allocate, MPI_Win_create on a buffer of the
  program, or MPI_Win_create_dynamic + MPI_Win_attach with the addresses swapped
  by MPI_Send/MPI_Recv), of the size (latency programs), of -W x size (bw, bibw),
  or of -m's MAX (fop, cas); at the end MPI_Barrier and MPI_Win_free.
- Rank 0 is the origin; per -s, one iteration: lock: MPI_Win_lock, the operation,
  MPI_Win_unlock; flush / flush_local: the operation and MPI_Win_flush(_local)
  inside one lock of the whole size; lock_all: MPI_Win_lock_all … unlock_all;
  pscw: MPI_Win_start (untimed) and for latency the operation, complete, post and
  wait (rank 1 mirrors it back), for bw the operations and complete (rank 1 posts
  and waits); fence: fence, the operation, fence, fence (latency; rank 1 puts
  back between its 2nd and 3rd) or fence, the -W operations, fence (bw). put_bibw:
  both ranks put -W messages each way (pscw: post, start, puts, complete, wait).
- Lock kinds: shared, but exclusive for get_acc_latency's lock and flush modes and
  for fop/cas's -s lock.
- Rank 0 times each iteration (two MPI_Wtime: -z's values) and the whole loop; the
  main column divides the whole loop: latency = total / iterations (pscw and fence:
  / 2 iterations), bandwidth = size x W (x 2 for bibw) x iterations / total. The
  -z values of put/get/get_acc latency are halved under pscw and fence, those of
  acc/fop/cas are not (as OSU prints them).

The native loops are commbench/native/osu_rma.c; the mpi4py loops (onesided_loops.py)
make the same calls. Both read the window, buffers and sync from a control block,
ctx.abuf (cbosu_rma_ctl of osu.h), which onesided_loops.prepare sets up.

The programs (RMA), their checks and descriptors are here, imported by the catalog (neither
MPI nor numpy); the windows, loops, per-size set-up, rows and extras are onesided_loops.py,
-c onesided_check.py, named as base.Lazy.
"""

from __future__ import annotations

from commbench.option_types import ConfigError
from commbench.suites.base import Lazy
from commbench.suites.osu.settings import TYPES
from commbench.suites.osu.spec import Defaults, OsuBenchmark, exactly_two

LOOPS = "commbench.suites.osu.onesided_loops"
CHECK = "commbench.suites.osu.onesided_check"
WIN_CALL = {
    "create": "MPI_Win_create",
    "allocate": "MPI_Win_allocate",
    "dynamic": "MPI_Win_create_dynamic",
}
SYNC_CALLS = {
    "lock": "MPI_Win_lock/unlock",
    "flush": "MPI_Win_flush",
    "flush_local": "MPI_Win_flush_local",
    "lock_all": "MPI_Win_lock_all/unlock_all",
    "pscw": "MPI_Win_post/start/complete/wait",
    "fence": "MPI_Win_fence",
}
LAT = Defaults(iterations=10000, iterations_large=1000, skip=100, skip_large=10)
BW = Defaults(iterations=100, iterations_large=20, skip=10, skip_large=2)
BASE = frozenset("mixzws")
ATOMIC = BASE | {"c", "T"}


class RmaProgram:
    """What a one-sided program does: op (onesided_loops.OPS), the loop shape, its default
    window and sync, the syncs it accepts, its lock kinds, how its -z values divide."""

    def __init__(
        self,
        op: str,
        shape: str,
        win: str = "allocate",
        sync: str = "flush",
        syncs: tuple = tuple(SYNC_CALLS),
        lock_x: bool = False,
        flush_x: bool = False,
        tail_halves: bool = True,
        dirs: int = 1,
    ):
        self.op, self.shape, self.win, self.sync, self.syncs = op, shape, win, sync, syncs
        self.lock_x, self.flush_x, self.tail_halves, self.dirs = lock_x, flush_x, tail_halves, dirs


RMA = {
    "put_latency": RmaProgram("put", "latency"),
    "get_latency": RmaProgram("get", "latency"),
    "put_bw": RmaProgram("put", "bw"),
    "get_bw": RmaProgram("get", "bw"),
    "put_bibw": RmaProgram("put", "bibw", sync="pscw", syncs=("pscw", "fence"), dirs=2),
    "acc_latency": RmaProgram("acc", "latency", tail_halves=False),
    "get_acc_latency": RmaProgram(
        "get_acc", "latency", win="create", sync="lock", lock_x=True, flush_x=True
    ),
    "fop_latency": RmaProgram("fop", "latency", lock_x=True, tail_halves=False),
    "cas_latency": RmaProgram("cas", "latency", lock_x=True, tail_halves=False),
}


def chosen(b, s) -> tuple[RmaProgram, str, str]:
    """(the program's RmaProgram, the window kind, the sync) of a run."""
    r = RMA[b.name]
    return r, s.win or r.win, s.sync or r.sync


def validate(b, s) -> None:
    r = RMA[b.name]
    if s.sync and s.sync not in r.syncs:
        raise ConfigError(
            f'-s {s.sync}: osu_{b.name} takes -s {" or ".join(r.syncs)} only (OSU: "Invalid option '
            f'or invalid argument [-s {s.sync}]"; accepted: -s {"|".join(r.syncs)})'
        )
    if "T" not in b.takes and s.type != "mpi_char":
        raise ConfigError(
            f"-T {s.type}: osu_{b.name} takes no -T (it moves MPI_CHAR); in OMB 7.4 the one-sided "
            f"programs with -T are acc_latency, fop_latency, cas_latency (run {b.name} without -T)"
        )
    if b.name == "cas_latency" and s.type in ("mpi_float", "all"):
        raise ConfigError(
            f"-T {s.type}: MPI_Compare_and_swap takes no MPI_FLOAT (MPI allows integer types only; "
            f"osu_cas_latency aborts on it); accepted: -T mpi_char|mpi_int"
        )


def atomic_sizes(s, dtype: str) -> list[int]:
    """fop and cas: one element of the type, whatever -m says (-m sizes their window only)."""
    return [TYPES[dtype]]


def window_bytes(b, ctx, size: int) -> int:
    shape = RMA[b.name].shape
    if shape in ("bw", "bibw"):
        return ctx.window * size
    if b.name in ("fop_latency", "cas_latency"):
        lo_hi = ctx.s.message_size or (None, None)
        return max(lo_hi[1] if lo_hi[1] is not None else b.defaults.max_size, ctx.tsize)
    return size


def _bench(name: str, title: str, description: str, takes=None, **kw) -> OsuBenchmark:
    shape = RMA[name].shape
    bw = shape != "latency"
    takes = takes or (BASE | {"W"} if bw else BASE)
    if "c" in takes:  # acc, fop, cas: -c checks what they moved
        kw.update(verify=Lazy(CHECK, "verify"), refill=Lazy(CHECK, "refill"))
    return OsuBenchmark(
        name,
        description,
        group="rma",
        title=title,
        metric="bandwidth" if bw else "rma_latency",
        takes=takes,
        defaults=BW if bw else LAT,
        nprocs=exactly_two,
        loop=Lazy(LOOPS, shape),
        native=shape,
        row=Lazy(LOOPS, "bw_row" if bw else "lat_row"),
        prepare=Lazy(LOOPS, "prepare"),
        release=Lazy(LOOPS, "release"),
        extra=Lazy(LOOPS, "extra"),
        buffers=2 if bw else 3,
        per_window=2 if bw else 0,
        directions=RMA[name].dirs if bw else 1,
        validate=lambda s, n=name: validate(BY_NAME[n], s),
        **kw,
    )


BENCHMARKS = (
    _bench(
        "put_latency",
        "MPI_Put Latency",
        "MPI_Put of one message and the -s synchronization; us per put",
    ),
    _bench(
        "get_latency",
        "MPI_Get latency",
        "MPI_Get of one message and the -s synchronization; us per get",
    ),
    _bench(
        "put_bw", "MPI_Put Bandwidth", "-W MPI_Put to consecutive offsets per synchronization; MB/s"
    ),
    _bench(
        "get_bw",
        "MPI_Get Bandwidth",
        "-W MPI_Get from consecutive offsets per synchronization; MB/s",
    ),
    _bench(
        "put_bibw",
        "MPI_Put Bi-directional Bandwidth",
        "both ranks -W MPI_Put each way (pscw or fence); MB/s",
    ),
    _bench(
        "acc_latency",
        "MPI_Accumulate latency",
        "MPI_Accumulate (MPI_SUM) and the -s synchronization",
        takes=ATOMIC,
    ),
    _bench(
        "get_acc_latency",
        "MPI_Get_accumulate latency",
        "MPI_Get_accumulate (MPI_SUM), -s lock by default",
    ),
    _bench(
        "fop_latency",
        "MPI_Fetch_and_op latency",
        "MPI_Fetch_and_op (MPI_SUM) of one element",
        takes=ATOMIC,
        sizes=atomic_sizes,
    ),
    _bench(
        "cas_latency",
        "MPI_Compare_and_swap latency",
        "MPI_Compare_and_swap of one element",
        takes=ATOMIC,
        sizes=atomic_sizes,
    ),
)
BY_NAME = {b.name: b for b in BENCHMARKS}
