"""Registry of benchmark families.

Each family lives in its own module that defines FAMILY (a suites.base.Family).
Adding a family touches this table and its own module only.
"""

from __future__ import annotations

import importlib
from functools import cache

from commbench.suites.base import Benchmark, Family

# Order is the order of `commbench list` and of --suite choices.
FAMILY_MODULES: dict[str, str] = {
    "mpi1": "commbench.suites.mpi1",
    "ext": "commbench.suites.ext",
    "rma": "commbench.suites.rma",
    "nbc": "commbench.suites.nbc",
    "mpi4": "commbench.suites.mpi4",
    "io": "commbench.suites.io",
    "comms": "commbench.suites.comms",
    "pgas": "commbench.suites.pgas",
    "overhead": "commbench.suites.overhead",
    "msgrate": "commbench.suites.msgrate",
    "mt": "commbench.suites.mt",
    "p2p": "commbench.suites.p2p",
    "net": "commbench.suites.net",
    "gpcnet": "commbench.suites.gpcnet",
    "osu": "commbench.suites.osu",
}

ALIASES = {
    "imb-mpi1": "mpi1",
    "imb-ext": "ext",
    "imb-rma": "rma",
    "imb-nbc": "nbc",
    "imb-mpi4": "mpi4",
    "imb-io": "io",
    "imb-mt": "mt",
    "imb-p2p": "p2p",
    "diagnose": "net",
    "congestion": "gpcnet",
    "omb": "osu",
}

# Families whose benchmarks no bare name selects (OSU's latency, barrier, …): only --suite.
EXPLICIT = frozenset({"osu"})


# Families whose threads call MPI at once: the ranks ask MPI_Init_thread for
# MPI_THREAD_MULTIPLE without -thread_level (config.scan_thread_level).
THREADED = frozenset({"mt"})
# Benchmarks of other families whose threads call MPI at once (OSU's latency_mt): named
# with their family, they ask for multiple too.
THREADED_BENCHMARKS = {"osu": frozenset({"latency_mt"})}


def threaded(named: list[str]) -> bool:
    """Does a command line (its --suite values, words and the launcher's family hint) need
    MPI_THREAD_MULTIPLE?"""
    families = {canonical_family(n) for n in named}
    return bool(families & THREADED) or any(
        f in families and names & set(named) for f, names in THREADED_BENCHMARKS.items()
    )


def family_names() -> list[str]:
    return list(FAMILY_MODULES)


def canonical_family(name: str) -> str | None:
    low = name.lower()
    low = ALIASES.get(low, low)
    return low if low in FAMILY_MODULES else None


@cache
def family(name: str) -> Family:
    return importlib.import_module(FAMILY_MODULES[name]).FAMILY


def families() -> list[Family]:
    return [family(n) for n in FAMILY_MODULES]


def families_with(name: str) -> list[tuple[Family, Benchmark]]:
    """Every (family, benchmark) whose name matches case-insensitively."""
    out = []
    for fam in families():
        b = fam.get(name)
        if b is not None:
            out.append((fam, b))
    return out


DEFAULT_FAMILY = "mpi1"


def claimants(name: str) -> set[str]:
    """The families a bare benchmark name selects: every family that has it, or the default
    family alone when it is one of them (IMB-P2P's PingPong and PingPing are IMB-MPI1's names
    too: a bare `commbench run PingPong` stays IMB-MPI1's; --suite p2p selects IMB-P2P's)."""
    if family(DEFAULT_FAMILY).get(name) is not None:  # no other catalog loaded for it
        return {DEFAULT_FAMILY}
    return {f.name for f, _ in families_with(name)} - EXPLICIT
