"""IMB-P2P's options, and how they map onto commbench's general ones.

IMB-P2P 2021.11 takes -iter, -msglog, -msglen, -msgsz, -msgwr, -msgrd and
-pause (no -time, -mem, -npmin, -check, -off_cache, -iter_policy …: commbench
refuses those with the p2p family). The three it shares with IMB-MPI1 are
commbench's general options, read the IMB-P2P way:

- `-iter max[,MB]`: at most max repetitions, and round(MB·2^20 / size)
  (IMB-P2P's numerator; the general -iter's OVERALL_VOL, also MB·2^20) at
  size > 0; at least 1. Defaults 100000 and 800 (the family's Profile).
  A third number or a policy (IMB-MPI1's) is refused.
- `-msglog n`: 0, 1, 2, 4 … 2^n; `-msglog k:n`: 2^k … 2^n, *without* 0
  (IMB-MPI1's k:n keeps 0). The general parser's limits stay: k < n < 31.
- `-msglen FILE`: the sizes in the file's order (IMB-P2P's G suffix is not
  taken; 1g is 1024m).

The family's own: -msgsz (a comma list here; IMB-P2P repeats the option),
-msgwr, -msgrd, -pause. The resolved size list is recorded as p2p_sizes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from commbench.option_types import ConfigError, Option, byte_count, integer
from commbench.policy import Profile
from commbench.suites.base import FamilySettings
from commbench.suites.p2p.spec import PATTERNS

# minmsglog -1: "-msglog n" (or none) gave no lower bound, so the list starts 0, 1, 2 …;
# configure() resolves it. MSGS_NONAGGR 0: any third -iter number is seen (and refused).
PROFILE = Profile("p2p", -1, 22, 100000, 0, 800 * 2**20, 10.0, 2, 0.01)

TRUE = ("1", "on", "enable", "yes", "true")
FALSE = ("0", "off", "disable", "no", "false")


def switch(name: str):
    def parse(s: str) -> bool:
        if s.lower() in TRUE + FALSE:
            return s.lower() in TRUE
        raise ConfigError(f"{name} must be one of {'|'.join(TRUE + FALSE)}, got {s!r}")

    return parse


def msgsz(s: str) -> tuple[int, ...]:
    sizes = tuple(byte_count(t) for t in s.split(","))
    if not s or any(v is None for v in sizes):
        raise ConfigError(
            f"-msgsz {s!r}: accepted -msgsz <size>[,<size>…], byte counts with optional "
            "k/m/g suffix (e.g. -msgsz 4097,5k,2m)"
        )
    return sizes  # type: ignore[return-value]


OPTIONS = (
    Option(
        ("-msgsz",),
        "p2p_msgsz",
        "<size>[,<size>…]",
        "p2p: message sizes (k/m/g suffixes), after those "
        "of -msglog/-msglen when given, else alone (IMB-P2P's repeated -msgsz as one list)",
        msgsz,
    ),
    Option(
        ("-msgwr",),
        "p2p_msgwr",
        "<on|off>",
        "p2p: write one byte per 64-byte line of the send buffer before every send (default on)",
        switch("-msgwr"),
        default=True,
    ),
    Option(
        ("-msgrd",),
        "p2p_msgrd",
        "<on|off>",
        "p2p: read one byte per 64-byte line of the receive buffer "
        "after every receive (default on)",
        switch("-msgrd"),
        default=True,
    ),
    Option(
        ("-pause",),
        "p2p_pause",
        "<usec>",
        "p2p: sleep before and after every size (default 100000; -1: none)",
        integer("-pause", -1),
        default=100000,
    ),
)


@dataclass(frozen=True)
class P2pSettings(FamilySettings):
    prefix: ClassVar[str] = "p2p_"
    msgwr: bool = True
    msgrd: bool = True
    pause: int = 100000
    msgsz: tuple = ()
    sizes: tuple = ()  # resolved by configure(): the message sizes in order
    buffers: int = 2  # the most buffers of the largest size a selected benchmark holds


def _given(cfg, dest: str) -> bool:
    return dest in cfg.given


def sizes_of(cfg, extra: tuple) -> list[int]:
    """IMB-P2P's message list from -msglen, -msglog and -msgsz."""
    msglog = _given(cfg, "msglog") or cfg.minlog >= 0 or cfg.maxlog != PROFILE.maxmsglog
    if cfg.msglen is not None:
        base = list(cfg.msglen)
    elif msglog or not extra:
        lo = max(cfg.minlog, 0)
        base = ([0] if cfg.minlog < 0 else []) + [2**k for k in range(lo, cfg.maxlog + 1)]
    else:
        base = []
    return base + list(extra)


def configure(cfg):
    """The size list and buffer count into params; maxlog covering the largest size."""
    if cfg.msglen is not None and (_given(cfg, "msglog") or cfg.minlog >= 0):
        raise ConfigError(
            "-msglog contradicts -msglen (accepted: one of them; -msgsz adds sizes to either)"
        )
    if len(cfg.given.get("p2p_msgsz", ())) > 1:  # IMB-P2P would take both lists; one is kept
        raise ConfigError(
            "-msgsz given more than once (accepted: one -msgsz with a comma list, e.g. -msgsz "
            "4097,5k)"
        )
    sizes = sizes_of(cfg, tuple(cfg.params.get("p2p_msgsz", ())))
    nbuf = max(PATTERNS[n].nbuf for n in cfg.benchmarks)
    params = {**cfg.params, "p2p_sizes": sizes, "p2p_buffers": nbuf}
    maxlog = max(cfg.maxlog, (max(sizes) - 1).bit_length() if max(sizes) > 1 else 0)
    return replace(cfg, params=params, minlog=max(cfg.minlog, 0), maxlog=maxlog)


def validate(cfg, size: int) -> None:
    """IMB-MPI1's parts of the shared options, and a run in which nothing can run."""
    if (
        cfg.msgs_nonaggr != PROFILE.msgs_nonaggr
        or cfg.iter_policy != "dynamic"
        or any(_iter_policy_word(raw) for raw in cfg.given.get("iter", ()))
    ):
        raise ConfigError(
            "-iter: IMB-P2P takes a maximum and a numerator only (accepted: -iter <max>[,<MB>], "
            "repetitions = min(max, round(MB x 2^20 / size)), at least 1)"
        )
    _c_ints(cfg)
    runs = [n for n in cfg.benchmarks if PATTERNS[n].runs_at(size)]
    if not runs:
        need = "; ".join(f"{n}: {_needs(n)}" for n in cfg.benchmarks)
        raise ConfigError(
            f"nothing to measure with {size} processes ({need}) (accepted: a process count "
            f"one of them runs at)"
        )


INT_MAX = 2**31 - 1


def _c_ints(cfg) -> None:
    """The C loops (commbench/native/p2p.c) take the size and the repetitions as C ints: a
    larger value wrapped round to a negative count, which MPI aborted on. Refused here."""
    if cfg.engine == "mpi4py":
        return
    big = max(cfg.params.get("p2p_sizes") or (0,))
    if big > INT_MAX:
        raise ConfigError(
            f"a message of {big} bytes: the C loops of the p2p family count bytes in a C int, at "
            f"most {INT_MAX} (accepted: sizes up to {INT_MAX} bytes, or --engine mpi4py: MPI-4 "
            "large counts)"
        )
    if cfg.msgspersample > INT_MAX:
        raise ConfigError(
            f"-iter {cfg.msgspersample}: the C loops of the p2p family count repetitions in a C "
            f"int (accepted: -iter <max <= {INT_MAX}>[,<MB>], or --engine mpi4py)"
        )


def _iter_policy_word(raw: str | None) -> bool:
    """-iter as given holds a policy word (-iter 1000,40,1,off)."""
    return raw is not None and any(not t.strip().isdigit() for t in raw.split(","))


def _needs(name: str) -> str:
    return {
        "PingPong": "an even count",
        "PingPing": "an even count",
        "Stencil2D": "a ly x lx grid, both >= 2 (4, 6, 8, 9 …)",
        "Stencil3D": "a lz x ly x lx grid, all >= 2 (8, 12, 16 …)",
    }.get(name, "2 or more")


def memory(params: dict, p: int) -> tuple[int, str]:
    """Bytes per process: IMB-P2P's buffers, each of the largest size."""
    s = P2pSettings.of(params)
    big = max(s.sizes or (0,))
    return s.buffers * max(big, 1), f"p2p: {s.buffers} buffers of the largest size, {big} bytes"
