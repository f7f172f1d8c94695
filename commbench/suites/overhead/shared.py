"""What every part of the overhead family reads and does alike (Plumbing): the
communicator, rank, settings and timer; one record per experiment with the
calibration shifts of --statistic median|min, the sleeping barrier between
timed phases, calibrating Q one rank at a time. The parts (decomposition,
interference, loggp) are functions taking it; driver.py gives them to the
harness as rows.
"""

from __future__ import annotations

import statistics
import time
from typing import TYPE_CHECKING

from mpi4py import MPI

from commbench import records
from commbench.compute import Calibration, ComputeLoop, calibrate
from commbench.session import Session
from commbench.suites.overhead import F  # noqa: F401 - the family, named in its catalog

if TYPE_CHECKING:
    from commbench.suites.overhead import OverheadSettings

KIND = "overhead"


def _stats(samples: list[float]) -> dict:
    us = [v * 1e6 for v in samples]
    return {
        "mean_us": statistics.fmean(us),
        "min_us": min(us),
        "max_us": max(us),
        "median_us": statistics.median(us),
        "std_us": statistics.stdev(us) if len(us) > 1 else 0.0,
        "n_samples": len(us),
    }


class Plumbing:
    def __init__(self, session: Session, st: OverheadSettings):
        self.session = session
        self.comm = comm = session.comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.st = st
        self.parts = tuple(b.lower() for b in session.cfg.benchmarks)
        self.q_s = st.q_us * 1e-6
        self.distance = min(
            st.distance if st.distance is not None else self.size - 1, self.size - 1
        )
        self.w = MPI.Wtime
        self.made: list = []  # the records of the measurement being made (world rank 0)

    # -- plumbing -------------------------------------------------------------
    def emit(
        self,
        benchmark: str,
        x: int | None,
        samples: list[float] | None,
        extra: dict,
        np_: int = 2,
        calib: tuple[dict, str] | None = None,
    ) -> None:
        """One record of the measurement being made (the harness emits them). calib = (a rank's
        calibration, "comptime" | "sendtime"): the calibrated Q time the samples had subtracted (its
        mean, as the seed); for the median and min analyses median_us and min_us are shifted to
        subtract the calibration's median and minimum instead."""
        if self.rank != 0:
            return
        t = [None] * self.size
        ex = dict(extra)
        if samples:
            t[0] = statistics.fmean(samples)
            ex.update(_stats(samples))
            if calib is not None:
                c, key = calib
                for stat in ("median", "min"):
                    ex[f"{stat}_us"] += (c[key] - c[f"{key}_{stat}"]) * 1e6
                ex["subtracted_us"] = {
                    "mean": c[key] * 1e6,
                    "median": c[f"{key}_median"] * 1e6,
                    "min": c[f"{key}_min"] * 1e6,
                }
        self.made.append(
            records.build(
                benchmark=benchmark,
                family=F,
                kind=KIND,
                np_=np_,
                mode="",
                x=x,
                repetitions=len(samples or ()),
                groups=[list(range(np_))],
                world_size=self.size,
                components=["t"],
                rank_times={"t": t},
                turnover=1.0,
                extra=ex,
            )
        )

    def settle(self) -> None:
        """Barrier without busy polling, so idle ranks leave the cores to the timed ones."""
        req = self.comm.Ibarrier()
        while not req.Test():
            time.sleep(1e-4)

    def calibrate(self, kind: str) -> tuple[ComputeLoop, Calibration, list[dict]]:
        q = ComputeLoop(kind)
        mine = None
        for r in range(self.size):  # one rank at a time: the cores are not shared while timing
            if r == self.rank:
                mine = calibrate(q, self.q_s)
            self.settle()
        assert mine is not None
        every = self.comm.allgather(mine.to_dict())
        return q, mine, every
