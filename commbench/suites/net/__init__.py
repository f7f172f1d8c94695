"""Family "net" (alias "diagnose"): cluster diagnosis, with verdicts that name the slow host or
link.

Patterns (docs/diagnose.md): AllPairs (shift steps k: every rank sends to
rank+k while answering rank-k; all P-1 of them, a P x P latency and bandwidth
matrix, up to 65 ranks, beyond them the shifts that cover every host pair,
sampled when too many: plan.py, --net-shifts), Rings (HPCC's natural and
random rings), Bisection (random perfect matchings, the distribution of
per-pair bandwidth), FanIn and FanOut
(N-1 ranks onto the first rank of each host, and back). Ranks map to hosts by
their processor names; rank 0 folds each step's samples into one aggregate per
host pair as they arrive (exact up to 4096 values, a 0.5 % log histogram beyond:
aggregate.py), intra-host pairs apart, and beyond --net-host-pairs hosts keeps them
in columns and gives a record per host (many_hosts.py); FanIn/FanOut target every host up
to --net-fans hosts, a seeded sample beyond; verdicts (verdicts.py) name the hosts and
links that stand out, in the text and under the results file's "verdicts".

A procedure of its own (commbench.suites.procedure): its steps are not the
harness's per-size kernels (each step is a different permutation of partners,
timed per rank pair), and its output is matrices and verdicts, not IMB rows;
the harness (commbench.harness.rows) runs its rows. Layout: settings.py (options),
patterns.py (the timed exchanges), plan.py (AllPairs' shifts), driver.py (the
procedure: measuring and gathering), and without MPI: aggregate.py (host-pair
aggregates), allpairs.py, many_hosts.py and steps.py (rank 0's records), verdicts.py
(judgement); views/net_text.py prints it, views/heatmap.py draws it
(`commbench plot`).
"""

from __future__ import annotations

from commbench.suites.base import Experiment, Family, Lazy
from commbench.suites.net import settings
from commbench.suites.net.settings import NetSettings

__all__ = ["FAMILY", "NetSettings"]

BENCHMARKS = (
    Experiment(
        "AllPairs",
        "latency and bandwidth of every host pair in shift steps (all P-1 up to 65 ranks): "
        "host x host matrices",
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
    procedure=Lazy("commbench.suites.net.driver", "procedure"),  # the ranks import it
    view="net",
    honours=frozenset({"time"}),
    secs="the budget of one step's samples",
    memory=settings.memory,
)
