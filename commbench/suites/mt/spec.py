"""IMB-MT's benchmarks and settings as declarations (no MPI), part of the mt family's
catalog (commbench/suites/mt/__init__.py): what it runs, and what its procedure
(driver.py) and Python threads (python_loops.py) read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from commbench.suites.base import Experiment, FamilySettings

F = "mt"
KIND = "mt"
WINDOW_DEFAULT = 64  # IMB-MT's -window_size (IMB-MPI1 2021's Uniband uses 256)


@dataclass(frozen=True)
class MtBench(Experiment):
    """An IMB-MT benchmark: how it is measured and which columns IMB-MT prints."""

    native: str = "mt"  # the C engine (commbench/native/mt.c) runs it
    columns: str = "p2p"  # p2p | rate | coll | barrier
    divide: int = 1  # times divided (PingPong, BiBand: 2 messages per repetition)
    window: bool = False  # -window_size messages per repetition; times per message
    bw_factor: int = 1  # SendRecv: 2, Exchange: 4 messages of #bytes per repetition

    @property
    def checked(self) -> bool:
        """-check verifies what it receives (BarrierMT moves no data: suites.option_use)."""
        return self.columns != "barrier"

    @property
    def paired(self) -> bool:
        """Its partners are -stride apart (the point-to-point benchmarks)."""
        return self.columns in ("p2p", "rate")


BENCHMARKS = (
    MtBench(
        "PingPongMT", "pairs r, r+stride: Send/Recv there and back; half the round trip", divide=2
    ),
    MtBench("PingPingMT", "pairs r, r+stride: Isend, Recv, Wait at once"),
    MtBench(
        "SendRecvMT", "ring at distance stride: Sendrecv to the right, from the left", bw_factor=2
    ),
    MtBench(
        "ExchangeMT",
        "ring at distance stride: Isend left and right, Recv both, Waitall",
        bw_factor=4,
    ),
    MtBench(
        "UniBandMT",
        "pairs: -window_size Isends one way, Waitall, a 1-byte ack",
        columns="rate",
        window=True,
    ),
    MtBench(
        "BiBandMT",
        "pairs: -window_size Irecvs and Isends both ways, Waitall, an ack",
        columns="rate",
        window=True,
        divide=2,
    ),
    MtBench(
        "BarrierMT",
        "a thread barrier and MPI_Barrier on the thread's communicator",
        columns="barrier",
    ),
    MtBench("BcastMT", "MPI_Bcast from rank 0, each call timed, barriers after it", columns="coll"),
    MtBench(
        "ReduceMT", "MPI_Reduce (SUM) to rank 0, each call timed, barriers after it", columns="coll"
    ),
    MtBench(
        "AllReduceMT", "MPI_Allreduce (SUM), each call timed, barriers after it", columns="coll"
    ),
)


@dataclass(frozen=True)
class MtSettings(FamilySettings):
    prefix: ClassVar[str] = "mt_"
    stride: int = 0
    warmup: int = 100
    repeat: int = 1000
    window_size: int = WINDOW_DEFAULT
    barrier: str = "on"
    count: tuple[int, ...] = (1, 2, 4, 8)
    malloc_align: int = 64
    malloc_algo: str = "serial"
    datatype: str = "int"
    noheader: bool = False
    threads: int = 1

    @property
    def unit(self) -> int:
        return 1 if self.datatype == "char" else 4
