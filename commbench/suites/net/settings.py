"""The net family's options (`--net-*`), its settings and its memory need.

Every pattern repeats each of its steps `--net-samples` times (default 20)
and stops a step early when the step has taken `-time` seconds (default 2
here: a budget per step, agreed by all ranks at every sample). Two message
sizes: `--net-small` (latency, default 8 bytes) and `--net-large` (bandwidth,
default 256 KiB). Verdicts flag what is worse than its population by more
than `--net-threshold` (bandwidth, default 0.5: 1.5 times lower) or
`--net-latency-threshold` (default 2: 3 times higher) and beyond the 95 %
confidence intervals of both medians.

AllPairs' budget (--net-shifts auto|all|N, plan.py): a metric runs at most N shift steps, each
within -time seconds, so it takes at most N x -time (auto: all P-1 shifts while P-1 <=
ALL_UP_TO; beyond, the shifts that cover every host pair, at most AUTO_STEPS of them, a
seeded sample of that cover when it has more: AUTO_STEPS x -time = 256 x 2 s at most).
-time stays the budget of one step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from commbench.option_types import ConfigError, Option, bytes_option, integer, positive_float
from commbench.policy import Profile
from commbench.suites.base import FamilySettings

# Only secs_per_sample is read: -time's default, the budget of one step.
PROFILE = Profile("net", 0, 22, 1000, 100, 40 * 2**20, 2.0, 2, 0.01)
FANIN_CAP = 64 * 2**20  # fan-in/out: at most this many bytes through the target per sample
ALL_UP_TO = 64  # --net-shifts auto: every shift while P-1 <= this
AUTO_STEPS = 256  # --net-shifts auto beyond: at most this many steps per AllPairs metric
HOST_PAIRS_UP_TO = 64  # --net-host-pairs: records per host pair up to this many hosts
MATRIX_UP_TO = 256  # hosts: beyond --net-host-pairs, the host x host matrix up to this many
FANS_UP_TO = 256  # --net-fans: fan targets, every host up to this many, sampled beyond


def fraction(name: str):
    def parse(s: str) -> float:
        v = positive_float(name)(s)
        if v >= 100:
            raise ConfigError(
                f"{name} is a relative excess (0.5 = 50 %), got {s!r} (accepted: 0 < F < 100)"
            )
        return v

    return parse


def shifts_option(s: str) -> str:
    """--net-shifts: auto, all or a positive count of steps (kept as text)."""
    v = s.strip().lower()
    if v in ("auto", "all") or (v.isdigit() and int(v) >= 1):
        return v
    raise ConfigError(
        f"--net-shifts: {s!r} is not a number of shift steps (accepted: auto, all, or N >= 1)"
    )


def up_to(name: str):
    """A count of hosts, or all (kept as 0: no limit)."""

    def parse(s: str) -> int:
        v = s.strip().lower()
        if v == "all":
            return 0
        if v.isdigit() and int(v) >= 1:
            return int(v)
        raise ConfigError(f"{name}: {s!r} is not a number of hosts (accepted: all, or N >= 1)")

    return parse


OPTIONS = (
    Option(
        ("--net-samples",),
        "net_samples",
        "<num>",
        "net: samples per step of every pattern (default 20)",
        integer("--net-samples", 1),
        default=20,
    ),
    Option(
        ("--net-small",),
        "net_small",
        "<bytes>",
        "net: latency message size (default 8)",
        bytes_option("--net-small"),
        default=8,
    ),
    Option(
        ("--net-large",),
        "net_large",
        "<bytes>",
        "net: bandwidth message size (default 256k)",
        bytes_option("--net-large", positive=True),
        default=256 * 2**10,
    ),
    Option(
        ("--net-threshold",),
        "net_threshold",
        "<F>",
        "net: verdicts need a median worse than the "
        "population's by more than F (default 0.5 = 1.5 times) and separate 95 % CIs",
        fraction("--net-threshold"),
        default=0.5,
    ),
    Option(
        ("--net-latency-threshold",),
        "net_latency_threshold",
        "<F>",
        "net: the same for latency (default 2 = "
        "3 times: small-message latency carries scheduling noise)",
        fraction("--net-latency-threshold"),
        default=2.0,
    ),
    Option(
        ("--net-rings",),
        "net_rings",
        "<num>",
        "net: random rings after the natural one (default 5)",
        integer("--net-rings", 0),
        default=5,
    ),
    Option(
        ("--net-rounds",),
        "net_rounds",
        "<num>",
        "net: bisection rounds, a random perfect matching each (default 10)",
        integer("--net-rounds", 1),
        default=10,
    ),
    Option(
        ("--net-shifts",),
        "net_shifts",
        "<auto|all|N>",
        f"net: AllPairs' shift steps per metric (default auto: all P-1 up to {ALL_UP_TO + 1} "
        f"ranks, else those covering every host pair, a seeded sample of {AUTO_STEPS} of them "
        "when more; N: at most N steps; all: P-1)",
        shifts_option,
        default="auto",
        uses=lambda b: b.name == "AllPairs",
    ),
    Option(
        ("--net-host-pairs",),
        "net_host_pairs",
        "<N|all>",
        f"net: AllPairs' records per host pair up to N hosts (default {HOST_PAIRS_UP_TO}); "
        "beyond, a record per host, the worst host pairs and (to "
        f"{MATRIX_UP_TO} hosts) the matrix, so rank 0 stays small at thousands of hosts",
        up_to("--net-host-pairs"),
        default=HOST_PAIRS_UP_TO,
        uses=lambda b: b.name == "AllPairs",
    ),
    Option(
        ("--net-fans",),
        "net_fans",
        "<N|all>",
        f"net: FanIn/FanOut target hosts (default {FANS_UP_TO}): every host up to N, "
        "a seeded sample of N beyond (said in the output)",
        up_to("--net-fans"),
        default=FANS_UP_TO,
        uses=lambda b: b.name in ("FanIn", "FanOut"),
    ),
    Option(
        ("--net-seed",),
        "net_seed",
        "<num>",
        "net: seed of the random rings, matchings and sampled shifts (default 1)",
        integer("--net-seed", 0),
        default=1,
    ),
)


@dataclass(frozen=True)
class NetSettings(FamilySettings):
    prefix: ClassVar[str] = "net_"
    samples: int = 20
    small: int = 8
    large: int = 256 * 2**10
    threshold: float = 0.5
    latency_threshold: float = 2.0
    rings: int = 5
    rounds: int = 10
    shifts: str = "auto"
    host_pairs: int = HOST_PAIRS_UP_TO  # 0: all
    fans: int = FANS_UP_TO  # 0: all
    seed: int = 1


def fan_size(large: int, p: int) -> int:
    """Fan-in/out message size: --net-large,
    capped so the target moves at most FANIN_CAP per sample."""
    return max(1, min(large, FANIN_CAP // max(p - 1, 1)))


def memory(params: dict, p: int) -> tuple[int, str]:
    """Bytes per process: a send and a receive buffer of --net-large,
    and the fan-in target's slices."""
    s = NetSettings.of(params)
    fan = fan_size(s.large, p) * max(p - 1, 1)
    return 2 * s.large + fan, (
        f"net: 2 buffers of --net-large {s.large} bytes and fan-in/out's "
        f"{max(p - 1, 1)} x {fan_size(s.large, p)} bytes"
    )
