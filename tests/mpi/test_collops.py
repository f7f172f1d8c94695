"""The one table of collective operations (commbench.suites.collops) against a real MPI:
every operation called with its declared arguments on known data, on 3 and 4 ranks and
every root, and every rank's receive buffer compared with what the table says it must
hold. The IMB and OSU families build their calls and checks from these declarations."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.mpirun import ENV, MPIEXEC

SCRIPT = r"""
import sys
import numpy as np
from mpi4py import MPI
from commbench.suites import collops

comm = MPI.COMM_WORLD
rank, p = comm.Get_rank(), comm.Get_size()
count, bad = 7, []

def data(q, n, at):  # rank q's send elements at .. at + n - 1
    return ((np.arange(at, at + n) * 3 + 11 * q) % 101).astype(np.int32)

def summed(lo, hi, ranks):
    return np.sum([data(q, hi - lo, lo) for q in ranks], axis=0).astype(np.int32)

for o in collops.OPS.values():
    if o.name.startswith("neighbor") or o.name == "barrier":
        continue
    for root in range(p if o.rooted else 1):
        ks, kr = o.extent(p)
        send = data(rank, count * ks, 0)
        recv = np.zeros(count * kr, dtype=np.int32)
        args = collops.arguments(o, rank, p, send, recv, count, MPI.INT, root=root, tsize=4, total=MPI.SUM)
        getattr(comm, o.method)(*args)
        want = collops.expected(o, rank, p, count, data, summed, root=root)
        if want is not None and not np.array_equal(recv[: want.size], want):
            bad.append(f"{o.name} root {root} rank {rank}: {recv[: want.size]} != {want}")
every = comm.gather(bad, root=0)
if rank == 0:
    print("\n".join(b for r in every for b in r) or "ok")
"""  # noqa: E501


@pytest.mark.parametrize("np_", [3, 4])
def test_every_operation_delivers_what_the_table_says(np_):
    import os

    p = subprocess.run(
        [MPIEXEC, "-n", str(np_), sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, **ENV),
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.strip() == "ok", p.stdout[-3000:]
