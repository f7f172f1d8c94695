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
from collections.abc import Iterator

from commbench.session import Session
from commbench.suites.overhead import OverheadSettings
from commbench.suites.overhead.decomposition import decomposition
from commbench.suites.overhead.interference import interference
from commbench.suites.overhead.loggp import loggp
from commbench.suites.overhead.shared import KIND, F, Plumbing
from commbench.suites.procedure import Procedure, Row, Unit

__all__ = ["F", "KIND", "Driver", "Part"]


class Driver(Plumbing, Procedure):
    # -- the run: the harness's rows (commbench.harness.rows) --------------------------
    def units(self) -> Iterator[Unit]:
        """The seed's order: per Q variant the calibration, the decomposition's trials and
        sizes, the interference; then LogGP's trials and sizes; then the analysis."""
        st, p = self.st, self.size
        if "decomposition" in self.parts:
            for kind in st.q:
                rows = [Row("decomposition", p, None, f"calibrating Q ({kind})")]
                rows += [
                    Row("decomposition", p, n, f"Q {kind}, trial {t}")
                    for t in range(st.trials)
                    for n in st.sizes
                ]
                if "interference" in self.parts:  # both Q variants, as the seed's tables
                    rows.append(Row("interference", p, None, f"Q {kind}"))
                yield Part("decomposition", p, rows, kind=KIND, driver=self, q=kind)
        if "loggp" in self.parts:
            yield Part(
                "loggp",
                p,
                [Row("loggp", p, n, f"trial {t}") for t in range(st.trials) for n in st.sizes],
                kind=KIND,
                driver=self,
            )
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
            drv.emit(
                "calibration",
                None,
                None,
                {"q": self.q, "ranks": every, "loadavg": load, "cpus": os.cpu_count()},
                np_=drv.size,
            )
        else:
            q, cal, every = self.calibrated
            decomposition(drv, q, cal, every, self.q, int(row.mode.split()[-1]), row.bytes)
        return drv.made

    def record(self, row: Row, engine: str, made: list) -> list:
        return made


def procedure(session: Session) -> Driver:
    """The family's procedure (named in its catalog, commbench.suites.overhead)."""
    return Driver(session, OverheadSettings.of(session.params))
