"""One gpcnet test measured on every rank of its place, and its record: what the
network_test procedure (driver.py) and the Congestion unit (load.py) both run.

A ring test repeats measurements of its 30 rings until it has taken -time seconds
(GPCNeT: 10) -- every rank of the test agrees through an allreduce of the time spent (MIN,
as GPCNeT) before each measurement, which is also where the watchdog (--timeout) hears of
the test. The statistics are reduced to world rank 0 (stats.py), which builds the record:
values t / t_p99 (usec) or bytes_per_sec / bytes_per_sec_p99 (MiB/s/rank x 2^20),
extra["gpcnet"] with GPCNeT's row (name, Avg, 99 %, units, the verbose columns) and
commbench's intervals and per-host means.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from commbench import records
from commbench.session import Session
from commbench.suites.gpcnet import kernels, topology
from commbench.suites.gpcnet.settings import SEED, GpcnetSettings, Test

F = KIND = "gpcnet"


@dataclass
class Place:
    """A rank's part in a test: the ranks taking part (comm), its slice, buffers, hosts."""

    comm: object  # every rank of the test
    slice: object  # this rank's slice of it
    bufs: kernels.GpcnetBuffers
    local: int  # index on its host


def measure(session: Session, test: Test, at: Place, budget: float, runner=None) -> dict:
    """Run one test on every rank of at.comm; this rank's samples and slot values (a ring
    test's measurement: --gpcnet-rings rings, GPCNeT's 30); runner: the native engine's
    (commbench.native.gpcnet), None for the mpi4py loops."""
    start, n_meas = MPI.Wtime(), 0
    samples, slots, spans, ops = [], [], 0.0, 0
    me = at.slice.Get_rank()
    rings = None
    if test.kind not in ("allreduce", "alltoall"):
        rings = topology.rings(
            at.slice.Get_size(),
            GpcnetSettings.of(session.cfg.params).rings,
            SEED + at.local,
            natural=test.kind == "nat_bw",
        )
    while True:
        spent = np.array([MPI.Wtime() - start])
        at.comm.Allreduce(MPI.IN_PLACE, spent, op=MPI.MIN)
        if n_meas and spent[0] >= budget:
            break
        session.progress("measurement", benchmark=test.benchmark, mode=f"measurement {n_meas + 1}")
        if rings is None:
            s, span, k = kernels.collective(test.kind, at.bufs, at.slice, runner)
            samples.append(s)
            spans, ops = spans + span, ops + k
            slots.append(span / k * 1e6 if test.lat else _a2a_rate(at.slice, k, span))
        else:
            for order in rings:
                left, right = topology.neighbours(order, me)
                s, v = kernels.ring(test.kind, at.bufs, at.comm, at.slice, left, right, runner)
                samples.append(s)
                slots.append(v)
        n_meas += 1
    part = {"samples": np.concatenate(samples), "slots": np.asarray(slots), "measurements": n_meas}
    if rings is None:
        at.comm.Barrier()
        part["value"] = spans / ops * 1e6 if test.lat else _a2a_rate(at.slice, ops, spans)
    return part


def _a2a_rate(comm, ops: int, secs: float) -> float:
    return kernels.A2A_BYTES * (comm.Get_size() - 1) * ops / (secs * kernels.MiB) if secs else 0.0


def gpcnet_row(test: Test, st: dict) -> dict:
    """GPCNeT's row of a test from its statistics: its name, Avg, 99 %, units, verbose."""
    keys = ("avg", "p99", "min", "max", "avg_worst", "p999")
    return {"name": test.label, "units": test.units} | {k: st.get(k) for k in keys}


def iteration_bytes(test: Test, hosts: int) -> int:
    """The bytes a rank sends in one timed iteration (an alltoall: to the other hosts)."""
    if test.kind == "alltoall":
        return kernels.A2A_BYTES * max(hosts - 1, 1)
    return 2 * kernels.IN_FLIGHT * kernels.BW_BYTES


def record(test: Test, p: int, st: dict, extra: dict | None = None) -> records.Measurement:
    """World rank 0: the test's record (values in commbench's units: usec, B/s)."""
    if test.lat:
        values = {"t": st.get("avg", 0.0), "t_p99": st.get("p99", 0.0)}
    else:
        rate = st.get("avg", 0.0) * kernels.MiB
        values = {"bytes_per_sec": rate, "bytes_per_sec_p99": st.get("p99", 0.0) * kernels.MiB}
        if rate > 0:  # compare and the gate read times: one iteration's at the Avg rate
            values["t"] = iteration_bytes(test, st.get("hosts", 2)) / rate * 1e6
    return records.Measurement(
        benchmark=test.benchmark,
        family=F,
        kind=KIND,
        np=p,
        mode=(extra or {}).get("phase", ""),
        bytes=test.bytes,
        repetitions=st.get("samples", 0),
        world_size=p,
        values=values,
        extra={"gpcnet": gpcnet_row(test, st), "stats": st, "units": test.units} | (extra or {}),
    )


def stand_in(hosts: list[str]) -> list[str]:
    """Every rank's host; on one host (GPCNeT refuses it) each rank stands in for a host
    ("name#rank"), so the tests run, over shared memory: the view and the record say so."""
    if len(set(hosts)) > 1:
        return hosts
    return [f"{h}#{r}" for r, h in enumerate(hosts)]
