"""The gpcnet procedure: network_test's eight tests, each one row, and the Congestion unit.

open() finds the hosts (processor names, sorted: GPCNeT's node ids), each rank's index on
its host, and the slice communicators (commbench.suites.gpcnet.topology); a test runs on
every slice at once (measurement.py measures it and builds its record).
"""

from __future__ import annotations

from collections.abc import Iterator

from mpi4py import MPI

from commbench.native import gpcnet as native_gpcnet
from commbench.session import Session
from commbench.suites.gpcnet import kernels, stats, topology
from commbench.suites.gpcnet.load import CongestionUnit
from commbench.suites.gpcnet.measurement import KIND, Place, measure, record, stand_in
from commbench.suites.gpcnet.settings import BY_NAME
from commbench.suites.procedure import Procedure, Row, Unit, engines


class GpcnetProcedure(Procedure):
    def __init__(self, session: Session):
        self.session = session
        self.place: Place | None = None
        self.hosts: list[str] = []
        self.runners: dict = {"mpi4py": None}  # {engine: its runner}, agreed in open()

    def open(self) -> None:
        comm = self.session.comm
        self.runners = engines(self.session, lambda: native_gpcnet.resolve(comm))
        self.hosts = stand_in(comm.allgather(MPI.Get_processor_name()))
        lay = topology.HostLayout.of(self.hosts, comm.Get_rank())
        sl = comm.Split(lay.local, lay.node)
        names = set(self.session.cfg.benchmarks)
        one_sided = bool(names & {"RRGetLat", "RRPutBW"})
        bufs = kernels.GpcnetBuffers(sl, one_sided, "MultipleAlltoall" in names)
        self.place = Place(comm, sl, bufs, lay.local)

    def close(self) -> None:
        if self.place is not None:
            self.place.bufs.free()
            self.place.slice.Free()
            self.place = None

    def units(self) -> Iterator[Unit]:
        p = self.session.size
        for name in self.session.cfg.benchmarks:
            if name == "Congestion":
                yield CongestionUnit(self, p)
            else:
                t, run = BY_NAME[name], list(self.runners)
                yield TestUnit(name, p, [Row(name, p, t.bytes)], run, kind=KIND, proc=self)


class TestUnit(Unit):
    def __init__(self, *args, proc: GpcnetProcedure, **kw):
        super().__init__(*args, **kw)
        self.proc = proc

    def measure(self, row: Row, engine: str):
        proc, test = self.proc, BY_NAME[row.benchmark]
        at = proc.place
        part = measure(proc.session, test, at, proc.session.cfg.secs, proc.runners[engine])
        st = stats.summarise(at.comm, part, test.lat, proc.hosts)
        if at.comm.Get_rank() == 0:
            st["measurements"] = part["measurements"]
            st["hosts"] = len(set(proc.hosts))
        return st

    def record(self, row: Row, engine: str, st: dict):
        return record(BY_NAME[row.benchmark], row.np, st, {"engine": engine})


def procedure(session: Session) -> GpcnetProcedure:
    return GpcnetProcedure(session)
