"""`Congestion`: GPCNeT's network_load_test as the harness's rows.

Rows, in order: `roles` (who is a victim, who runs which congestor: topology.split), each
victim test `isolated` (the victims alone; the other ranks wait), each victim test
`loaded` (congestors.Congestor.run around the victims' test: the victims start once every
congestor has made one pass, and the congestors stop after the pass in which the victims
finished), and `impact`: the impact factors (GPCNeT's, from its one-decimal figures, and
commbench's with 95 % intervals), each victim host's factors, the links' factors and the
verdicts (loadverdicts.py). The victim tests are GPCNeT's three (RR two-sided latency,
RR BW+Sync, multiple allreduce) and commbench's `Links`: the bandwidth of every ordered
victim host pair in shift steps (the net family's exchange), which is what can name the
host whose links degrade under load.
"""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

from commbench import polite, records
from commbench.suites.gpcnet import kernels, loadverdicts, stats, topology
from commbench.suites.gpcnet.congestors import Congestor, idle_run
from commbench.suites.gpcnet.measurement import KIND, Place, measure, record
from commbench.suites.gpcnet.settings import BW_BYTES, BY_NAME, LINKS, VICTIMS, GpcnetSettings
from commbench.suites.net import patterns
from commbench.suites.procedure import Row, Unit

LINK_SAMPLES = 20  # per shift step, within the test's budget shared by its steps


class CongestionUnit(Unit):
    def __init__(self, proc, p: int):
        s = GpcnetSettings.of(proc.session.cfg.params)
        why = topology.no_congestor(len(set(proc.hosts)), s.victims, s.kinds)
        if why is not None:
            super().__init__("Congestion", p, [], kind=KIND, invalid=why)
            self.proc = proc
            return
        rows = [Row("Congestion", p, None, "roles")]
        for phase in ("isolated", "loaded"):
            rows += [Row(v, p, BY_NAME[v].bytes, phase) for v in VICTIMS]
            rows.append(Row(LINKS, p, BW_BYTES, phase))
        rows.append(Row("Congestion", p, None, "impact"))
        super().__init__("Congestion", p, rows, list(proc.runners), kind=KIND)
        self.proc = proc
        self.got: dict = {}  # world rank 0: (phase, test) -> statistics

    # -- set-up -------------------------------------------------------------------------
    def open(self) -> None:
        session, proc = self.proc.session, self.proc
        world, me = session.comm, session.comm.Get_rank()
        s = GpcnetSettings.of(session.cfg.params)
        names = sorted(set(proc.hosts))
        sp = None
        if me == 0:
            sp = topology.split(names, s.victims, s.kinds, s.seed)
        self.split = sp = world.bcast(sp, root=0)
        role = sp.role(proc.hosts[me])
        self.role = role
        colour = 0 if role == "victim" else 1 + (s.kinds.index(role) if role in s.kinds else 9)
        self.group = world.Split(colour, me)
        lay = topology.HostLayout.of(proc.hosts, me)
        order = sp.victims if role == "victim" else sp.groups.get(role, names)
        key = order.index(proc.hosts[me]) if proc.hosts[me] in order else 0
        self.slice = self.group.Split(lay.local, key)
        self.local = lay.local
        self.bufs = kernels.GpcnetBuffers(self.slice, False, False) if role == "victim" else None
        self.net = patterns.NetBuffers(BW_BYTES, 0) if role == "victim" else None
        self.congestor = Congestor(role, self.slice) if role in s.kinds else None

    def close(self) -> None:
        if self.congestor is not None:
            self.congestor.free()
        self.slice.Free()
        self.group.Free()

    # -- measuring ----------------------------------------------------------------------
    def measure(self, row: Row, engine: str):
        world = self.proc.session.comm
        if row.mode == "roles":
            return self.split.as_dict()
        if row.mode == "impact":
            return self._impact() if world.Get_rank() == 0 else None
        patterns.barrier(world)  # waits yield the core: a waiting rank must not slow a test
        part = None
        if row.mode == "loaded" and self.role != "victim":
            if self.congestor is not None:
                self.congestor.run(world, self.group, self._progress)
            else:
                idle_run(world)
        elif row.mode == "loaded":
            polite.wait(world.Ibarrier())  # released once every congestor has made a pass
            part = self._victim(row, engine)
            polite.wait(world.Ibarrier())
        elif self.role == "victim":
            part = self._victim(row, engine)
        patterns.barrier(world)
        st = self._summarise(row, part)
        if row.mode == "loaded":
            st["congestors"] = self._congestor_bw()
        if world.Get_rank() == 0:
            self.got[(row.mode, row.benchmark)] = st
        return st

    def _progress(self, passes: int) -> None:
        self.proc.session.progress(
            "congestor pass", benchmark="Congestion", mode=f"{self.role} pass {passes + 1}"
        )

    def _victim(self, row: Row, engine: str):
        session = self.proc.session
        if row.benchmark == LINKS:
            host = self.proc.hosts[session.comm.Get_rank()]
            return links(self.slice, self.net, self.group, session.cfg.secs, session, host)
        at = Place(self.group, self.slice, self.bufs, self.local)
        runner = self.proc.runners[engine]
        return measure(session, BY_NAME[row.benchmark], at, session.cfg.secs, runner)

    def _summarise(self, row: Row, part) -> dict:
        world, hosts = self.proc.session.comm, self.proc.hosts
        if row.benchmark == LINKS:
            got = world.gather((hosts[world.Get_rank()], part) if part else None, root=0)
            return {"links": loadverdicts.links(got)} if world.Get_rank() == 0 else {}
        return stats.summarise(world, part, BY_NAME[row.benchmark].lat, hosts)

    def _congestor_bw(self) -> dict:
        """World rank 0: each congestor kind's MiB/s per rank over the loaded passes."""
        c = self.congestor
        mine = (self.role, c.bytes, c.secs, c.passes) if c is not None else None
        got = self.proc.session.comm.gather(mine, root=0)
        out: dict = {}
        for g in got or []:
            if g and g[2] > 0 and g[1] > 0:
                out.setdefault(g[0], []).append(g[1] / g[2] / kernels.MiB)
        return {k: {"MiB/s/rank": float(np.mean(v)), "ranks": len(v)} for k, v in out.items()}

    def _impact(self) -> dict:
        s = GpcnetSettings.of(self.proc.session.cfg.params)
        return loadverdicts.impact(self.got, s.threshold, self.split.victims)

    # -- records (world rank 0) -----------------------------------------------------------
    def record(self, row: Row, engine: str, st):
        p = row.np
        if row.mode == "roles":
            return roles_record(p, st, len(set(self.proc.hosts)))
        if row.mode == "impact":
            rec = congestion_record(p, "impact", st)
            for sink in self.proc.session.sinks:
                if hasattr(sink, "add_section"):
                    sink.add_section("verdicts", st["verdicts"])
            return rec
        if row.benchmark == LINKS:
            return congestion_record(p, row.mode, st, benchmark=LINKS, x=BW_BYTES)
        return record(BY_NAME[row.benchmark], p, st, {"phase": row.mode, "engine": engine})


def links(comm, b, group, budget: float, session, host: str) -> dict:
    """Every ordered pair of this slice in shift steps (k = 1..n-1), BW_BYTES one way and a
    0-byte ack back, each pair alone on its link (net's colours): {k: [seconds]}."""
    n, me = comm.Get_size(), comm.Get_rank()
    out: dict = {}
    steps = group.allreduce(n - 1, op=MPI.MAX)  # slices differ where hosts have unequal ranks
    per_step = budget / max(steps, 1)
    for k in range(1, steps + 1):
        col = patterns.colours(n, k, me) if k < n else None
        ts, spent = [], 0.0
        session.progress("link step", benchmark=LINKS, mode=f"shift {k}")
        for _ in range(LINK_SAMPLES):  # every victim agrees at every sample (go)
            t0 = MPI.Wtime()
            if not patterns.go(group, spent > per_step):
                break
            if col is not None:
                ts.append(patterns.shift(comm, b, k, BW_BYTES, 0, col))
            spent += MPI.Wtime() - t0
        if col is not None:
            out[k] = {"to": (me + k) % n, "times": ts}
    names = comm.allgather(host)
    return {"me": me, "names": names, "steps": out}


def roles_record(p: int, split: dict, hosts: int) -> records.Measurement:
    n_c = sum(len(v) for v in split["congestors"].values())
    far = (
        f"{hosts} hosts: GPCNeT asks for at least 10 and recommends the whole system "
        f"(95 % of its nodes or more); {len(split['victims'])} measure and {n_c} congest"
    )
    return congestion_record(p, "roles", split | {"hosts": hosts, "scale_note": far})


def congestion_record(
    p: int, mode: str, extra: dict, benchmark: str = "Congestion", x=None
) -> records.Measurement:
    return records.Measurement(
        benchmark=benchmark,
        family=KIND,
        kind=KIND,
        np=p,
        mode=mode,
        bytes=x,
        repetitions=0,
        world_size=p,
        values={},
        extra=extra,
    )
