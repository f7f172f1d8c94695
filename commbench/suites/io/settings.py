"""The io options and their IoSettings (the family's FamilySettings), read by every io module.

Part of the catalog (no numpy, no MPI): the package's __init__ reads them in validate and
declares OPTIONS, the run-wide hooks (commbench.suites.io.files: preamble, start) read them too.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass
from typing import ClassVar

from commbench.option_types import ConfigError, Option
from commbench.suites.base import FamilySettings


def _iodir(s: str) -> str:
    if not s:
        raise ConfigError(
            "--iodir needs a directory (accepted: --iodir DIR, an existing writable directory)"
        )
    return os.path.abspath(s)


def _cpu_secs(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        raise ConfigError(f"--io-cpu-secs needs a number of seconds, got {s!r}") from None
    if not math.isfinite(v) or v < 0:
        raise ConfigError(f"--io-cpu-secs must be >= 0 seconds, got {s!r}")
    return v


def _info(s: str) -> tuple[tuple[str, str], ...]:
    form = (
        "accepted: --io-info key=value[,key=value…], e.g. --io-info "
        "romio_cb_write=enable,striping_factor=4"
    )
    pairs = []
    for item in s.split(","):
        key, eq, value = item.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise ConfigError(f"--io-info {s!r}: {item!r} is not key=value; {form}")
        pairs.append((key.strip(), value.strip()))
    return tuple(pairs)


OPTIONS = (
    Option(
        ("--iodir",),
        "iodir",
        "<dir>",
        "IO: directory for the files (default: a private temporary directory); never overwrites, "
        "always cleaned",
        _iodir,
    ),
    Option(
        ("--io-cpu-secs",),
        "io_cpu_secs",
        "<secs>",
        "IO: CPU work per nonblocking transfer, TARGET_CPU_SECS (default 0.1; 0.001 with -check)",
        _cpu_secs,
    ),
    Option(
        ("--io-info",),
        "io_info",
        "<k=v[,k=v]>",
        "IO: MPI_Info hints for every file open (user_set_info), e.g. romio_cb_write=enable",
        _info,
    ),
)


@dataclass(frozen=True)
class IoSettings(FamilySettings):
    """The io options: None / () when not given (they have no declared defaults)."""

    prefix: ClassVar[str] = "io_"
    dir: str | None = None  # --iodir: dest "iodir", outside the prefix (results files record it so)
    cpu_secs: float | None = None  # --io-cpu-secs: dest "io_cpu_secs"
    info: tuple[tuple[str, str], ...] = ()  # --io-info: dest "io_info"

    @classmethod
    def of(cls, params: dict) -> IoSettings:
        s = super().of(params)
        return dataclasses.replace(s, dir=params["iodir"]) if "iodir" in params else s


def target_cpu_secs(cfg) -> float:
    v = IoSettings.of(cfg.params).cpu_secs
    if v is not None:
        return v
    return 0.001 if cfg.check else cfg.profile.target_cpu_secs  # spec §15: CHECK shrinks it
