"""Family "net" (alias "diagnose"): cluster diagnosis, with verdicts that name the slow host or
link.

Patterns (docs/diagnose.md): AllPairs (shift steps k = 1 … P-1: every rank
sends to rank+k while answering rank-k, a P x P latency and bandwidth matrix
in P-1 steps), Rings (HPCC's natural and random rings), Bisection (random
perfect matchings, the distribution of per-pair bandwidth), FanIn and FanOut
(N-1 ranks onto the first rank of each host, and back). Ranks map to hosts by
their processor names; samples are aggregated per host pair with confidence
intervals, intra-host pairs apart; verdicts (verdicts.py) name the hosts and
links that stand out, in the text and under the results file's "verdicts".

A procedure of its own (commbench.suites.procedure): its steps are not the
harness's per-size kernels (each step is a different permutation of partners,
timed per rank pair), and its output is matrices and verdicts, not IMB rows;
the harness (commbench.harness.rows) runs its rows. Layout: settings.py (options),
patterns.py (the timed exchanges), driver.py (the procedure and the records),
verdicts.py (aggregation and judgement, no MPI); views/net_text.py prints it,
views/heatmap.py draws it (`commbench plot`).
"""

from __future__ import annotations

from commbench.suites.base import Experiment, Family
from commbench.suites.net import driver, settings
from commbench.suites.net.settings import Settings

__all__ = ["FAMILY", "Settings"]

BENCHMARKS = (
    Experiment(
        "AllPairs",
        "every rank pair's latency and bandwidth in P-1 shift steps: host x host matrices",
    ),
    Experiment(
        "Rings",
        "HPCC's natural and random rings: exchange with both neighbours, latency and bandwidth",
    ),
    Experiment(
        "Bisection",
        "random perfect matchings, pairs exchanging at once: per-pair bandwidth distribution",
    ),
    Experiment(
        "FanIn", "P-1 ranks send to the first rank of each host at once: its incoming bandwidth"
    ),
    Experiment(
        "FanOut", "the first rank of each host sends to P-1 ranks at once: its outgoing bandwidth"
    ),
)

FAMILY = Family(
    name="net",
    title="commbench net",
    part="cluster diagnosis",
    benchmarks=BENCHMARKS,
    profile=settings.PROFILE,
    description=(
        "cluster diagnosis: all-pairs matrices, rings, bisection, fan-in/out; verdicts name slow "
        "hosts and links"
    ),
    aliases=("diagnose",),
    min_world=2,
    options=settings.OPTIONS,
    procedure=driver.procedure,
    view="net",
    honours=frozenset({"time"}),
    secs="the budget of one step's samples",
    memory=settings.memory,
)
