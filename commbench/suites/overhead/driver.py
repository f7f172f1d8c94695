"""The overhead family's procedure: the plumbing every part shares and the run order.

Driver holds what the parts read (communicator, rank, settings, the timer)
and does what they share: one record per experiment with the calibration
shifts of --statistic median|min, the sleeping barrier between timed phases,
calibrating Q one rank at a time. Its units() give the parts (decomposition,
interference, loggp: functions taking the driver) in the seed's order as rows
the harness runs (commbench.harness.rows), and end with the "analysis" row.
One measurement of a row makes the several records of its part (E, R, S …):
the family has its own trials and --statistic, so it takes no --samples.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from mpi4py import MPI

from commbench import records
from commbench.compute import Calibration, ComputeLoop, calibrate
from commbench.session import Session
from commbench.suites.overhead.decomposition import decomposition
from commbench.suites.overhead.interference import interference
from commbench.suites.overhead.loggp import loggp
from commbench.suites.procedure import Procedure, Row, Unit

if TYPE_CHECKING:
    from commbench.suites.overhead import Settings

F = "overhead"
KIND = "overhead"


def _stats(samples: list[float]) -> dict:
    us = [v * 1e6 for v in samples]
    return {"mean_us": statistics.fmean(us), "min_us": min(us), "max_us": max(us),
            "median_us": statistics.median(us), "std_us": statistics.stdev(us) if len(us) > 1 else 0.0,
            "n_samples": len(us)}


class Driver(Procedure):
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
        self.made: list = []  # the records of the measurement being made (world rank 0)

    # -- plumbing -------------------------------------------------------------
    def emit(self, benchmark: str, x: int | None, samples: list[float] | None, extra: dict, np_: int = 2,
             calib: tuple[dict, str] | None = None) -> None:
        """One record of the measurement being made (the harness emits them). calib = (a rank's calibration, "comptime" | "sendtime"): the
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
        self.made.append(records.build(benchmark=benchmark, family=F, kind=KIND, np_=np_, mode="", x=x,
                                       repetitions=len(samples or ()), groups=[list(range(np_))],
                                       world_size=self.size, components=["t"], rank_times={"t": t},
                                       turnover=1.0, extra=ex))

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

    # -- the run: the harness's rows (commbench.harness.rows) --------------------------
    def units(self) -> Iterator[Unit]:
        """The seed's order: per Q variant the calibration, the decomposition's trials and
        sizes, the interference; then LogGP's trials and sizes; then the analysis."""
        st, p = self.st, self.size
        if "decomposition" in self.parts:
            for kind in st.q:
                rows = [Row("decomposition", p, None, f"calibrating Q ({kind})")]
                rows += [Row("decomposition", p, n, f"Q {kind}, trial {t}") for t in range(st.trials) for n in st.sizes]
                if "interference" in self.parts:  # both Q variants, as the seed's tables
                    rows.append(Row("interference", p, None, f"Q {kind}"))
                yield Part("decomposition", p, rows, kind=KIND, driver=self, q=kind)
        if "loggp" in self.parts:
            yield Part("loggp", p, [Row("loggp", p, n, f"trial {t}") for t in range(st.trials) for n in st.sizes],
                       kind=KIND, driver=self)
        yield Part("analysis", p, [Row("analysis", p)], kind=KIND, driver=self)

    def analysis(self) -> None:
        if self.rank != 0:
            return
        from commbench.models.overhead import analyse, to_plain

        result = analyse(self.session.records, self.st.statistic, self.st.baseline)
        self.emit("analysis", None, None, to_plain(result), np_=self.size)


class Part(Unit):
    """A part of the seed's run; one measurement of a row makes the records its part emits."""

    def __init__(self, *args, driver: Driver, q: str = "", **kw):
        super().__init__(*args, **kw)
        self.driver, self.q = driver, q
        self.calibrated: tuple | None = None

    def measure(self, row: Row, engine: str) -> list:
        drv = self.driver
        drv.made = []
        if row.benchmark == "analysis":
            drv.analysis()
        elif row.benchmark == "loggp":
            loggp(drv, int(row.mode.split()[-1]), row.bytes)
        elif row.benchmark == "interference":
            q, cal, _ = self.calibrated
            interference(drv, q, cal, self.q)
        elif row.bytes is None:  # the calibration of Q
            self.calibrated = q, cal, every = drv.calibrate(self.q)
            load = os.getloadavg() if hasattr(os, "getloadavg") else None
            drv.emit("calibration", None, None, {"q": self.q, "ranks": every, "loadavg": load,
                                                 "cpus": os.cpu_count()}, np_=drv.size)
        else:
            q, cal, every = self.calibrated
            decomposition(drv, q, cal, every, self.q, int(row.mode.split()[-1]), row.bytes)
        return drv.made

    def record(self, row: Row, engine: str, made: list) -> list:
        return made
