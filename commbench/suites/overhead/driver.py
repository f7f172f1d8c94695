"""The overhead family's driver: the plumbing every part shares and the run order.

Driver holds what the parts read (communicator, rank, settings, the timer)
and does what they share: one record per experiment with the calibration
shifts of --statistic median|min, the sleeping barrier between timed phases,
calibrating Q one rank at a time. Its run() calls the parts
(decomposition, interference, loggp: functions taking the driver) in the
seed's order and ends with the "analysis" record.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import TYPE_CHECKING

from mpi4py import MPI

from commbench import records
from commbench.compute import Calibration, ComputeLoop, calibrate
from commbench.session import Session
from commbench.suites.overhead.decomposition import decomposition
from commbench.suites.overhead.interference import interference
from commbench.suites.overhead.loggp import loggp

if TYPE_CHECKING:
    from commbench.suites.overhead import Settings

F = "overhead"
KIND = "overhead"


def _stats(samples: list[float]) -> dict:
    us = [v * 1e6 for v in samples]
    return {"mean_us": statistics.fmean(us), "min_us": min(us), "max_us": max(us),
            "median_us": statistics.median(us), "std_us": statistics.stdev(us) if len(us) > 1 else 0.0,
            "n_samples": len(us)}


class Driver:
    def __init__(self, session: Session, st: Settings):
        self.session = session
        self.comm = comm = session.comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.st = st
        self.parts = tuple(b.lower() for b in session.cfg.benchmarks)
        self.q_s = st.q_us * 1e-6
        self.distance = min(st.distance if st.distance is not None else self.size - 1, self.size - 1)
        self.w = MPI.Wtime

    # -- plumbing -------------------------------------------------------------
    def emit(self, benchmark: str, x: int | None, samples: list[float] | None, extra: dict, np_: int = 2,
             calib: tuple[dict, str] | None = None) -> None:
        """One record. calib = (a rank's calibration, "comptime" | "sendtime"): the
        calibrated Q time the samples had subtracted (its mean, as the seed); for
        the median and min analyses median_us and min_us are shifted to subtract
        the calibration's median and minimum instead."""
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
                ex["subtracted_us"] = {"mean": c[key] * 1e6, "median": c[f"{key}_median"] * 1e6,
                                       "min": c[f"{key}_min"] * 1e6}
        rec = records.build(benchmark=benchmark, family=F, kind=KIND, np_=np_, mode="", x=x,
                            repetitions=len(samples or ()), groups=[list(range(np_))],
                            world_size=self.size, components=["t"], rank_times={"t": t},
                            turnover=1.0, extra=ex)
        self.session.emit(rec)

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

    # -- the run --------------------------------------------------------------
    def run(self) -> int:
        st = self.st
        if "decomposition" in self.parts:
            for kind in st.q:
                self.session.progress(f"calibrating Q ({kind})", benchmark="decomposition", np=self.size)
                q, cal, every = self.calibrate(kind)
                load = os.getloadavg() if hasattr(os, "getloadavg") else None
                self.emit("calibration", None, None, {"q": kind, "ranks": every, "loadavg": load,
                                                     "cpus": os.cpu_count()}, np_=self.size)
                for trial in range(st.trials):
                    for n in st.sizes:
                        self.session.progress(f"decomposition, Q {kind}, trial {trial}", benchmark="decomposition",
                                              np=self.size, bytes=n)
                        decomposition(self, q, cal, every, kind, trial, n)
                if "interference" in self.parts:  # both Q variants, as the seed's tables
                    self.session.progress(f"interference, Q {kind}", benchmark="interference", np=self.size)
                    interference(self, q, cal, kind)
        if "loggp" in self.parts:
            for trial in range(st.trials):
                for n in st.sizes:
                    self.session.progress(f"LogGP, trial {trial}", benchmark="loggp", np=self.size, bytes=n)
                    loggp(self, trial, n)
        self.finish_analysis()
        return 0

    def finish_analysis(self) -> None:
        if self.rank != 0:
            return
        from commbench.models.overhead import analyse, to_plain

        result = analyse(self.session.records, self.st.statistic, self.st.baseline)
        self.emit("analysis", None, None, to_plain(result), np_=self.size)
