"""The gpcnet family's tests, options (`--gpcnet-*`) and settings.

GPCNeT 1.3's constants (its network_test.c and network_load_test.c, read as facts:
docs/gpcnet.md): the ring tests repeat measurements of 30 random rings, each ring a
warm-up and then timed iterations (latency 200 + 200, bandwidth 1 + 8 with 8 messages
of 131,072 bytes in flight to each neighbour), until the test has taken 10 seconds
(here -time, default 10); the allreduce runs repetitions of 1 + 200 operations, the
alltoall of 1 + 64 (64 x 64 / n beyond 64 ranks per slice); the congestors send 4,096
bytes per operation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from commbench.option_types import ConfigError, Option, integer
from commbench.policy import Profile
from commbench.suites.base import FamilySettings

# Only secs_per_sample is read: -time's default, GPCNeT's 10 s per test.
PROFILE = Profile("gpcnet", 0, 22, 1000, 100, 40 * 2**20, 10.0, 2, 0.01)

RINGS = 30  # random rings per measurement, the same 30 in every measurement
BW_BYTES = 131072  # 16384 doubles
IN_FLIGHT = 8  # messages per neighbour per bandwidth iteration
A2A_BYTES = 4096  # 512 doubles per peer
CONGESTOR_BYTES = 4096
SEED = 8675309  # GPCNeT's ring seed (plus the rank's index on its host)
CONGESTORS = ("alltoall", "incast", "putincast", "getbcast")  # GPCNeT's group order


@dataclass(frozen=True)
class Test:
    """One of network_test's eight (kind: the kernel; lat: lower is better)."""

    benchmark: str
    label: str  # GPCNeT's row name
    kind: str  # p2p_lat, get_lat, p2p_bw, put_bw, p2p_sync, nat_bw, allreduce, alltoall
    bytes: int
    lat: bool

    @property
    def units(self) -> str:
        return "usec" if self.lat else "MiB/s/rank"


TESTS = (
    Test("RRTwoSidedLat", "RR Two-sided Lat (8 B)", "p2p_lat", 8, True),
    Test("RRGetLat", "RR Get Lat (8 B)", "get_lat", 8, True),
    Test("RRTwoSidedBW", "RR Two-sided BW (131072 B)", "p2p_bw", BW_BYTES, False),
    Test("RRPutBW", "RR Put BW (131072 B)", "put_bw", BW_BYTES, False),
    Test("RRTwoSidedBWSync", "RR Two-sided BW+Sync (131072 B)", "p2p_sync", BW_BYTES, False),
    Test("NatTwoSidedBW", "Nat Two-sided BW (131072 B)", "nat_bw", BW_BYTES, False),
    Test("MultipleAllreduce", "Multiple Allreduce (8 B)", "allreduce", 8, True),
    Test("MultipleAlltoall", "Multiple Alltoall (4096 B)", "alltoall", A2A_BYTES, False),
)
BY_NAME = {t.benchmark: t for t in TESTS}
# network_load_test's victims: GPCNeT's three, then commbench's link probe (verdicts).
VICTIMS = ("RRTwoSidedLat", "RRTwoSidedBWSync", "MultipleAllreduce")
LINKS = "Links"  # commbench: bandwidth of every victim host pair, isolated and loaded


def victims_option(s: str) -> float:
    """--gpcnet-victims: a fraction of the hosts (0 < F < 1) or a count of hosts (>= 2)."""
    try:
        v = float(s)
    except ValueError:
        v = -1.0
    if 0 < v < 1 or (v >= 2 and v == int(v)):
        return v
    raise ConfigError(
        f"--gpcnet-victims: {s!r} is neither a fraction of the hosts (0 < F < 1) nor a "
        "number of hosts (2 or more)"
    )


def congestors_option(s: str) -> str:
    names = [w.strip().lower() for w in s.split(",") if w.strip()]
    bad = [w for w in names if w not in CONGESTORS]
    if not names or bad:
        raise ConfigError(
            f"--gpcnet-congestors: {s!r}: accepted a comma list of {', '.join(CONGESTORS)}"
        )
    return ",".join(n for n in CONGESTORS if n in names)


def threshold_option(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        v = 0.0
    if not 0 < v < 100:  # NaN fails it too
        raise ConfigError(f"--gpcnet-threshold: {s!r} (accepted: 0 < F < 100, 0.5 = 50 %)")
    return v


OPTIONS = (
    Option(
        ("--gpcnet-layout",),
        "gpcnet_layout",
        "",
        "gpcnet: print GPCNeT's tables (its names, Avg and 99 %, units) instead of commbench's",
    ),
    Option(
        ("--gpcnet-verbose",),
        "gpcnet_verbose",
        "",
        "gpcnet: GPCNeT's verbose columns too: min, max, average of the worst rank, 99.9 %",
    ),
    Option(
        ("--gpcnet-rings",),
        "gpcnet_rings",
        "<num>",
        f"gpcnet: random rings per measurement of a ring test (default {RINGS}, GPCNeT's; "
        "fewer make a measurement shorter where one is long, as one-sided over TCP)",
        integer("--gpcnet-rings", 1),
        default=RINGS,
    ),
    Option(
        ("--gpcnet-victims",),
        "gpcnet_victims",
        "<F|N>",
        "gpcnet Congestion: the hosts that measure, a fraction (default 0.2, GPCNeT's: the "
        "hosts less 80 % of them rounded down) or a count; at least 2",
        victims_option,
        default=0.2,
        uses=lambda b: b.name == "Congestion",
    ),
    Option(
        ("--gpcnet-congestors",),
        "gpcnet_congestors",
        "<list>",
        "gpcnet Congestion: congestor kinds, in GPCNeT's order (default "
        + ",".join(CONGESTORS)
        + "); each needs 2 hosts of its own",
        congestors_option,
        default=",".join(CONGESTORS),
        uses=lambda b: b.name == "Congestion",
    ),
    Option(
        ("--gpcnet-seed",),
        "gpcnet_seed",
        "<num>",
        "gpcnet Congestion: seed of the split of hosts into victims and congestor groups "
        "(default 1; GPCNeT draws it from the clock)",
        integer("--gpcnet-seed", 0),
        default=1,
        uses=lambda b: b.name == "Congestion",
    ),
    Option(
        ("--gpcnet-threshold",),
        "gpcnet_threshold",
        "<F>",
        "gpcnet Congestion: a host is named when its links' impact factor exceeds the other "
        "links' by more than F (default 0.5) and their 95 % intervals are apart",
        threshold_option,
        default=0.5,
        uses=lambda b: b.name == "Congestion",
    ),
)


@dataclass(frozen=True)
class GpcnetSettings(FamilySettings):
    prefix: ClassVar[str] = "gpcnet_"
    layout: bool = False
    verbose: bool = False
    rings: int = RINGS
    victims: float = 0.2
    congestors: str = ",".join(CONGESTORS)
    seed: int = 1
    threshold: float = 0.5

    @property
    def kinds(self) -> list[str]:
        return self.congestors.split(",")


def memory(params: dict, p: int) -> tuple[int, str]:
    """Bytes per process: the ring buffers, the window, the alltoall's and the incast root's."""
    ring = 4 * IN_FLIGHT * BW_BYTES
    coll = 2 * A2A_BYTES * p + CONGESTOR_BYTES * p
    return ring * 2 + coll, (
        f"gpcnet: ring buffers and a window of {ring} bytes each, alltoall and incast buffers "
        f"of {A2A_BYTES} bytes per rank"
    )
