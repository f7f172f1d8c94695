"""The PGAS suite's options and the PgasSettings they fill (cfg.params "pgas_*")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from commbench.option_types import Option, bytes_option, choice, integer
from commbench.suites.base import FamilySettings

DEFAULT_STRIDE = 4
DEFAULT_SPAN = 2**20
DEFAULT_SEED = 1
STRIDED_KINDS = ("target", "origin", "both")
SYNC_KINDS = ("p2p", "barrier")


def _strided(bench) -> bool:
    return bench.name.startswith("Strided_")


def _random(bench) -> bool:
    return bench.name.startswith("Random_")


def _synced(bench) -> bool:  # 'synchronize with target' is a step of put-put and get-get only
    return bench.name in ("PutPut_latency", "GetGet_latency")


OPTIONS = (
    Option(
        ("--pgas-offset",),
        "pgas_offset",
        "<Q>",
        "partner offset: pairs {i,i+Q} for i mod 2Q < Q, else {i-Q,i} (default: pairs {i, N/2+i})",
        integer("--pgas-offset", 1),
    ),
    Option(
        ("--pgas-reps",),
        "pgas_reps",
        "<N>",
        "fixed repetitions N per size (same as -iter N "
        "-iter_policy off; default: IMB's dynamic policy)",
        integer("--pgas-reps", 1),
    ),
    Option(
        ("--pgas-stride",),
        "pgas_stride",
        "<S>",
        f"stride S in 4-byte elements of the strided tests (default {DEFAULT_STRIDE})",
        integer("--pgas-stride", 1),
        default=DEFAULT_STRIDE,
        uses=_strided,
    ),
    Option(
        ("--pgas-strided",),
        "pgas_strided",
        "<side>",
        "which side is strided: target (default) | origin | both",
        choice("--pgas-strided", STRIDED_KINDS),
        default="target",
        uses=_strided,
    ),
    Option(
        ("--pgas-sync",),
        "pgas_sync",
        "<p2p|barrier>",
        "'synchronize with target' of put-put / get-get: p2p one-sided flag (default) | barrier",
        choice("--pgas-sync", SYNC_KINDS),
        default="p2p",
        uses=_synced,
    ),
    Option(
        ("--pgas-seed",),
        "pgas_seed",
        "<seed>",
        f"seed of the random tests' targets and addresses (default {DEFAULT_SEED}; recorded)",
        integer("--pgas-seed", 0),
        default=DEFAULT_SEED,
        uses=_random,
    ),
    Option(
        ("--pgas-span",),
        "pgas_span",
        "<bytes>",
        "random tests: bytes of segment each origin may address at a target (default "
        f"{DEFAULT_SPAN})",
        bytes_option("--pgas-span", positive=True),
        default=DEFAULT_SPAN,
        uses=_random,
    ),
)


@dataclass(frozen=True)
class PgasSettings(FamilySettings):
    prefix: ClassVar[str] = "pgas_"
    offset: int | None = None
    reps: int | None = None
    stride: int = DEFAULT_STRIDE
    strided: str = "target"
    sync: str = "p2p"
    seed: int = DEFAULT_SEED
    span: int = DEFAULT_SPAN
