"""What a kernel sees: the process groups of one NP (Layout) and one row's Context."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import cycle, islice, repeat
from typing import Any

import numpy as np
from mpi4py import MPI

from commbench import buffers, policy
from commbench.session import Session
from commbench.suites.base import Benchmark


@dataclass
class Layout:
    """The process groups of one NP: every rank knows all groups."""

    np: int
    groups: list[list[int]]  # world ranks per group in group-rank order
    comm: MPI.Comm | None  # MY_COMM, None on idle ranks
    group: int  # my group index, -1 when idle
    # What a family's np_setup keeps for every size and mode of this (benchmark, NP): an
    # object of the family's own type (IMB-IO: suites.io.files.Shared), None when it has none.
    own: Any = None

    def free(self) -> None:
        if self.comm is not None and self.comm != MPI.COMM_NULL:
            self.comm.Free()


BARRIER_TAG = 1000  # IMB 2021's IMB_BARRIER_TAG
_EMPTY = [bytearray(0), 0, MPI.BYTE]


def dissemination_barrier(comm: MPI.Comm) -> None:
    """IMB 2021's -imb_barrier: a barrier of 0-byte Sendrecv rounds (partners rank ± 2^k),
    independent of the MPI library's MPI_Barrier algorithm. A round's message is
    received within the round, so none is left for a kernel's MPI_ANY_SOURCE receive."""
    size, rank = comm.Get_size(), comm.Get_rank()
    mask = 1
    while mask < size:
        comm.Sendrecv(
            _EMPTY, (rank + mask) % size, BARRIER_TAG, _EMPTY, (rank - mask) % size, BARRIER_TAG
        )
        mask <<= 1


class Context:
    """What a kernel sees for one (benchmark, NP, mode, X) on one member rank."""

    def __init__(
        self,
        session: Session,
        bench: Benchmark,
        layout: Layout,
        mode: str,
        x: int,
        bufs: buffers.Buffers,
        send_len: int,
        recv_len: int,
    ):
        self.session = session
        self.cfg = session.cfg
        self.bench = bench
        self.comm: MPI.Comm = layout.comm  # type: ignore[assignment]
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self.world_rank = session.rank
        self.members = layout.groups[layout.group]
        self.group = layout.group
        self.mode = mode
        self.x = x
        self.bufs = bufs
        self.sbuf = bufs.send.array if bufs.send is not None else np.empty(0, np.uint8)
        self.rbuf = bufs.recv.array if bufs.recv is not None else np.empty(0, np.uint8)
        self.send_len = send_len
        self.recv_len = recv_len
        self.slots = bufs.slots
        self.params = session.cfg.params
        self.layout = layout  # layout.own: what the family's np_setup keeps for this NP
        # What a family's setup leaves for this row's kernels and native loops, each field
        # set by the one function named beside it (nothing travels as string keys):
        self.win: MPI.Win | None = None  # IMB-EXT/RMA's window (suites.onesided.create_window)
        self.disp_unit = 1  # its displacement unit
        self.disps: list[int] = []  # the target displacement of each slot, in disp_unit
        self.uses: np.ndarray | None = None  # -check: repetitions per slot (onesided.count_uses)
        self.requests: dict[int, list] = {}  # IMB-MPI4's persistent requests, {root: [slot k's]}
        # the overlap rows' computation: factor x t_pure, capped at cap s (0: none; nbc)
        self.cpu_target: tuple[float, float] = (1.0, 0.0)
        self.prebuilt: dict[Any, Any] = {}  # a family's argument lists, built once per row
        self.row_timer: Any = None  # --per-iteration's RowTimer while the timed runs last
        self.row_timer_done: Any = None  # and once they are done, until the gather
        self.own: Any = None  # a family's own row state, of its own type (pgas: SegmentRow)
        method = session.cfg.method
        # The methodology's knobs (commbench.imb_methodology): the root of call i, and whether
        # PingPong/PingPing receive from MPI_ANY_SOURCE. `first` is the index of the
        # kernel's first call: the harness times a -sync run one call at a time.
        self.root_shift = method.root_shift
        self.any_source = method.any_source
        self.first = 0
        # barriers after each call timed alone (-sync); set by the harness (Plan.sync)
        self.sync = 0
        # The barrier of the harness (before timing) and of -sync: MPI_Barrier, or IMB's own.
        self.imb_barrier = method.imb_barrier
        self.barrier = (
            (lambda: dissemination_barrier(self.comm)) if method.imb_barrier else self.comm.Barrier
        )
        self.set_types("byte", "float")

    def set_types(self, data: str, red: str) -> None:
        """The MPI datatypes of IMB 2021's -data_type and -red_data_type (policy.DATA_TYPES):
        `dtype`/`width` for messages, `red_dtype`/`red_width`/`red_np` for reductions."""
        np_name, self.width, mpi_name = policy.DATA_TYPES[data]
        self.data_type, self.dtype = data, getattr(MPI, mpi_name)
        self.red_np, self.red_width, mpi_name = policy.DATA_TYPES[red]
        self.red_type, self.red_dtype = red, getattr(MPI, mpi_name)

    # -- buffer specs, prebuilt outside the timed loop ------------------------
    def send_specs(self, count: int | None = None, offset: int = 0, dtype=MPI.BYTE) -> list:
        return self._specs(self.sbuf, self.bufs.send_stride, count, offset, dtype)

    def recv_specs(self, count: int | None = None, offset: int = 0, dtype=MPI.BYTE) -> list:
        return self._specs(self.rbuf, self.bufs.recv_stride, count, offset, dtype)

    def _specs(self, buf: np.ndarray, stride: int, count: int | None, offset: int, dtype) -> list:
        nbytes = self.x if count is None else count
        width = dtype.Get_size() if dtype != MPI.BYTE else 1
        nbytes -= nbytes % width  # whole elements (sizes are multiples of a typed benchmark's unit)
        out = []
        for k in range(self.slots):
            a = k * stride + offset
            view = buf[a : a + nbytes]
            if width == 4:
                view = view.view(np.float32) if dtype == MPI.FLOAT else view.view(np.int32)
            out.append([view, dtype])
        return out

    def each(self, n: int, *spec_lists: list) -> Iterable:
        """n items cycling through the slots from call `first`'s: a constant tuple when
        there is one slot."""
        if all(len(s) == 1 for s in spec_lists):
            return repeat(tuple(s[0] for s in spec_lists), n)
        skip = self.first % self.slots if self.slots else 0
        return islice(zip(*(cycle(s) for s in spec_lists)), skip, skip + n)

    def root_of(self, i: int) -> int:
        """The root of call i (0-based) of a rooted collective: i % NP with -root_shift on
        (IMB 4.0), 0 with it off (IMB 2021). The one place a root is chosen: kernels,
        verifiers and the native loops (its ROOTED shape) follow it."""
        return (i * self.root_shift) % self.size

    def roots(self, n: int) -> Iterable[int]:
        """The roots of the kernel's n calls."""
        if not self.root_shift:
            return repeat(0, n)
        return (self.root_of(i) for i in range(self.first, self.first + n))
