"""Family "gpcnet" (alias "congestion"): GPCNeT 1.3's network tests and congestion impact.

network_test's eight tests (random-ring two-sided and get latency, two-sided and put
bandwidth, bandwidth with a barrier, natural-ring bandwidth, multiple allreduces and
alltoalls), each measured as GPCNeT measures it (settings.py, kernels.py) and summarised
with its statistics plus commbench's intervals (stats.py); `Congestion` is
network_load_test: hosts split into victims and congestor groups, the victims' tests
alone and beside the congestors, impact factors with intervals, and verdicts that name a
host whose links degrade under load (load.py, loadverdicts.py). docs/gpcnet.md.

A family of its own rather than part of net: its procedure is GPCNeT's (slices of one
rank per host running at once, fixed iteration counts, a time budget per test, pooled
histograms), where net's steps sample one permutation at a time with every rank
agreeing per sample; the two share nothing but the host names.
"""

from __future__ import annotations

from dataclasses import dataclass

from commbench.suites.base import Experiment, Family, Lazy
from commbench.suites.gpcnet import settings


@dataclass(frozen=True)
class GpcnetExperiment(Experiment):
    # the C engine (commbench/native/gpcnet.c) runs its timed iterations (Congestion: the
    # victims' tests; the congestors' loops are mpi4py's)
    native: str = "gpcnet"


BENCHMARKS = tuple(
    GpcnetExperiment(t.benchmark, f"GPCNeT network_test: {t.label}, {t.units}")
    for t in settings.TESTS
) + (
    GpcnetExperiment(
        "Congestion",
        "GPCNeT network_load_test: victims' tests alone and beside congestors, impact factors",
        default=False,
    ),
)

FAMILY = Family(
    name="gpcnet",
    title="commbench gpcnet",
    part="network tests and congestion",
    benchmarks=BENCHMARKS,
    profile=settings.PROFILE,
    description="GPCNeT's network tests and congestion impact factors, with intervals",
    aliases=("congestion",),
    min_world=2,
    options=settings.OPTIONS,
    procedure=Lazy("commbench.suites.gpcnet.driver", "procedure"),  # the ranks import it
    view="gpcnet",
    honours=frozenset({"time", "engine"}),
    secs="the budget of one test (GPCNeT: 10 s)",
    memory=settings.memory,
)
