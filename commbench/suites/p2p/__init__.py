"""Family "p2p": IMB-P2P 2021.11 (PingPong, PingPing, Unirandom, Birandom,
Corandom, Stencil2D, Stencil3D, SendRecv_Replace), with its options, its
repetition rule and its output layout (commbench/views/p2p_text.py).

Why a procedure of its own and not per-size kernels: IMB-P2P's methodology
is not IMB-MPI1's. IMB-P2P runs every benchmark once, on all P processes (no
NPmin, 2 NPmin … sequence, no process groups, no -multi); it fixes the
repetitions by a rule of its own (min(max, round(numerator / size)), no
dynamic policy) with n/10 warm-up repetitions; it sleeps (-pause) before and
after every size around a barrier of its own; and its rows are not t_min /
t_max / t_avg of one kernel time per rank but sums and maxima over ranks
divided by message counts that each rank counts as it goes (the random
patterns give ranks different counts), with a message rate column. So
driver.py says what one measurement of one size is (commbench.suites.procedure)
and the harness (commbench.harness.rows) measures the rows as it measures
every procedure family's: the order (--shuffle), the samples of a row
(--samples K, --precision), progress, what a signal keeps.

Layout: the catalog (this module, settings.py: options, the size list,
validation; spec.py: the patterns' table and the stencils' grids), which imports
neither numpy nor MPI and names the rest as base.Lazy; patterns.py (who talks to
whom, the buffers, the timed loops) and driver.py (the procedure and the records).
Engines: native (default) runs the timed loops in C (commbench/native/p2p.c),
with the partners worked out here; mpi4py runs them in Python (1-2 us a call
more at small sizes: docs/p2p.md has both side by side with IMB-P2P).
"""

from __future__ import annotations

from dataclasses import dataclass

from commbench.suites.base import Experiment, Family, Lazy
from commbench.suites.p2p import settings
from commbench.suites.p2p.settings import P2pSettings
from commbench.suites.p2p.spec import PATTERNS, F
from commbench.suites.procedure import ROW_OPTIONS

__all__ = ["FAMILY", "PATTERNS", "P2pSettings"]


@dataclass(frozen=True)
class P2PExperiment(Experiment):
    native: str = "p2p"  # the C engine (commbench/native/p2p.c) runs it


BENCHMARKS = tuple(P2PExperiment(p.name, p.description) for p in PATTERNS.values())

FAMILY = Family(
    name=F,
    title="IMB-P2P",
    part="IMB-P2P part",
    benchmarks=BENCHMARKS,
    profile=settings.PROFILE,
    description=(
        "IMB-P2P: ping-pong, random pairs and rings, "
        "2D/3D stencils, Sendrecv_replace on all processes"
    ),
    aliases=("IMB-P2P",),
    min_world=2,
    options=settings.OPTIONS,
    configure=settings.configure,
    validate=settings.validate,
    procedure=Lazy("commbench.suites.p2p.driver", "procedure"),  # the ranks import it
    view="p2p",
    alloc="mpi",  # IMB-P2P's buffers come from MPI_Alloc_mem
    honours=ROW_OPTIONS | {"iter", "msglog", "msglen", "alloc", "hugepages", "mib", "engine"},
    memory=settings.memory,
)
