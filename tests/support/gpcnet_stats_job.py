"""Run under mpiexec -n 5 by tests/system/test_gpcnet.py: gpcnet's statistics reduced to rank 0
(stats.summarise) against the same statistics computed directly from every rank's slots.

Rank 3 takes no part; rank 1 has a slot <= 0 (does not count) and one slot more than the
others (only the first k count). Prints one JSON line on rank 0: {"got": ..., "want": ...}.
"""

import json
import math

import numpy as np
from mpi4py import MPI

from commbench.suites.gpcnet import stats

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
hosts = ["a", "a", "b", "b", "c"][:size]


def slots_of(r: int) -> np.ndarray:
    rng = np.random.default_rng(r)
    s = rng.lognormal(0, 0.3, 40 + (r == 1))
    if r == 1:
        s[5] = 0.0
    return s


def part_of(r: int, collective: bool) -> dict | None:
    if r == 3:
        return None
    part = {"samples": slots_of(r) * 2, "slots": slots_of(r)}
    if collective:
        part["value"] = float(slots_of(r).sum())
    return part


out = {}
for lat in (True, False):
    for collective in (False, True):
        got = stats.summarise(comm, part_of(rank, collective), lat, hosts)
        if rank:
            continue
        rows = [(r, slots_of(r)) for r in range(size) if r != 3]
        k = min(len(s) for _, s in rows)
        v = np.vstack([np.where(s[:k] > 0, s[:k], np.nan) for _, s in rows])
        per_slot = np.nanmean(v, axis=0)
        worst = np.nanmax(v, axis=0) if lat else np.nanmin(v, axis=0)
        avg = float(per_slot.mean())
        se = float(per_slot.std(ddof=1) / math.sqrt(per_slot.size))
        want = {
            "avg": avg,
            "avg_ci": [avg - stats.Z95 * se, avg + stats.Z95 * se],
            "min": float(np.nanmin(v)),
            "max": float(np.nanmax(v)),
            "avg_worst": float(np.nanmean(worst)),
            "slots": k,
            "ranks": len(rows),
        }
        means = {r: float(s[s > 0].mean()) for r, s in rows}
        if collective:
            vals = [float(s.sum()) for _, s in rows]
            want |= stats.totals(vals, want, lat)
            means = {r: float(s.sum()) for r, s in rows}
        want["per_host"] = {
            h: float(np.mean([m for r, m in means.items() if hosts[r] == h]))
            for h in sorted({hosts[r] for r in means})
        }
        keys = [*want, "p99", "samples"]
        out[f"lat={lat} collective={collective}"] = {
            "got": {k: got.get(k) for k in keys},
            "want": want,
        }
if rank == 0:
    print(json.dumps(out))
