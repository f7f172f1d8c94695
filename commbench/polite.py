"""Waiting for MPI requests without holding a core another rank needs.

With more ranks than cores, a rank busy-polling for a message steals the time slice of the
rank that is to send it, and two ranks that share a core stay slow for a whole run (measured
on 2 cores: pairs 5-25x slow, false verdicts in 5-9 runs of 10; commbench.suites.net). So:
poll with sched_yield for `spin` seconds, then sleep `nap` between polls. With a core per
rank the yield returns at once (well under a microsecond) and waits shorter than `spin`
(latency, fast links) never sleep; a longer wait may end up to `nap` late, little against
its length. The limits' probe (commbench.harness.limits) waits with no spin at all: the
ranks that do not measure leave the cores to the two that do.
"""

from __future__ import annotations

import os
import time

SPIN_S = 200e-6
NAP_S = 50e-6


def wait(*reqs, spin: float = SPIN_S, nap: float = NAP_S) -> None:
    """Until every request of reqs has completed (MPI_Testall), politely."""
    from mpi4py import MPI

    pending = list(reqs)
    t0 = time.monotonic()
    while not MPI.Request.Testall(pending):
        if time.monotonic() - t0 < spin:
            os.sched_yield()
        else:
            time.sleep(nap)
