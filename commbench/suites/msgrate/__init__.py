"""Family "msgrate": Sandia's real-world message rate benchmark (seed 003).

Four patterns, each iteration starting from a cold cache: single direction,
pair-based, pre-posted and all-start. Before every iteration each rank walks
a cache-sized array with a[i] = a[i-1] + 1 (numpy cumsum over a stride-0 view
of 1: one sequential pass that reads the previous element and writes every
element, like the seed's loop, at memory speed instead of interpreter speed),
then writes its send buffers (the seed: "send buffers are generally touched
just before the MPI send"). Rates are counted as the seed counts them: every
message a process sends *and* every one it receives, divided by the average
over processes of the time spent in the timed sections:

  single direction: iters * msgs / avg_time            (a process only sends or only receives;
                                                        odd ranks send to rank-1, as the seed's
                                                        pseudo-code)
  the others:       iters * peers * msgs * 2 / avg_time

Peers follow the seed's layout: npeers/2 "lower" and npeers/2 "higher"
ranks at distances that are multiples of the processes per node (--ppn), so
with the true ppn every peer is on another node. The seed's checks apply:
P >= 3, P > peers, P / ppn > peers.

The patterns are a procedure of their own (commbench.suites.procedure: their
timing is per iteration with untimed cache walks in between, and barriers
where the seed has them: pre-posted and all-start; --barriers adds them to
the other two, as the Sandia C code does; and the rate needs every rank's
total): each is one row, one records.Measurement, which the harness
(commbench.harness.rows) measures; the text table is a view.

The catalog: settings, options, checks and descriptors, importing neither MPI nor numpy; the
patterns and their procedure are commbench.suites.msgrate.patterns (base.Lazy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from commbench.option_types import ConfigError, Option, bytes_option, choice, integer
from commbench.suites.base import Experiment, Family, FamilySettings, Lazy
from commbench.suites.procedure import ROW_OPTIONS

F = "msgrate"
KIND = "msgrate"
TAG = 1
PAIRINGS = ("odd-even", "halves")


@dataclass(frozen=True)
class MsgrateSettings(FamilySettings):
    prefix: ClassVar[str] = "msgrate_"
    peers: int = 6
    iters: int = 100
    msgs: int = 128
    size: int = 8
    cache: int = 16 * 2**20
    ppn: int = 1
    machine: bool = False
    pairing: str = (
        "odd-even"  # single direction: the seed's pseudo-code; "halves": the Sandia C code's
    )
    barriers: bool = (
        False  # single direction and pair-based: a barrier before each timed iteration (C code)
    )


OPTIONS = (
    Option(
        ("--peers",),
        "msgrate_peers",
        "<num>",
        "msgrate: peers each process talks to (default 6)",
        integer("--peers", 1),
    ),
    Option(
        ("--iters",),
        "msgrate_iters",
        "<num>",
        "msgrate: iterations per pattern (default 100; the C code's 4096 is minutes in Python)",
        integer("--iters", 1),
    ),
    Option(
        ("--msgs",),
        "msgrate_msgs",
        "<num>",
        "msgrate: messages per peer per iteration (default 128)",
        integer("--msgs", 1),
    ),
    Option(
        ("--msg-size",),
        "msgrate_size",
        "<bytes>",
        "msgrate: bytes per message (default 8)",
        bytes_option("--msg-size"),
    ),
    Option(
        ("--cache-size",),
        "msgrate_cache",
        "<bytes>",
        "msgrate: cache-invalidation array (default 16m; 0 disables)",
        bytes_option("--cache-size"),
    ),
    Option(
        ("--ppn",),
        "msgrate_ppn",
        "<num>",
        "msgrate: processes per node; peers are ppn ranks apart (default 1)",
        integer("--ppn", 1),
    ),
    Option(
        ("--machine-readable",),
        "msgrate_machine",
        "",
        "msgrate: also print the seed's one-line machine-readable form",
    ),
    Option(
        ("--pairing",),
        "msgrate_pairing",
        "<odd-even|halves>",
        "msgrate: single direction's pairs: odd ranks send to rank-1 (default, the seed's "
        "pseudo-code) or the lower half to rank+P/2 (the Sandia C code)",
        choice("--pairing", PAIRINGS),
        uses=lambda b: b.name == "single_direction",
    ),
    Option(
        ("--barriers",),
        "msgrate_barriers",
        "",
        "msgrate: an untimed barrier before every iteration of single "
        "direction and pair-based too (the Sandia C code; the seed's pseudo-code has none)",
        uses=lambda b: b.name in ("single_direction", "pair_based"),
    ),
)


def validate(cfg, size: int) -> None:
    """The seed's start-up checks, as configuration errors naming the fix."""
    s = MsgrateSettings.of(cfg.params)
    peers, ppn = s.peers, s.ppn
    if size <= peers:
        raise ConfigError(
            f"msgrate: job size {size} <= number of peers {peers} "
            f"(run with -n {peers + 1} or more, or lower --peers below {size})"
        )
    if size // ppn <= peers:
        raise ConfigError(
            f"msgrate: node count {size} / --ppn {ppn} = {size // ppn} <= number of peers {peers} "
            f"(lower --peers or --ppn)"
        )


# Python's bookkeeping per message (a buffer spec of each side and its request): a
# --msgs in the millions costs far more here than its bytes.
SPEC_BYTES = 600


def memory(params: dict, size: int) -> tuple[int, str]:
    """Bytes per process: the cache-walk array, send and receive buffers, the specs."""
    s = MsgrateSettings.of(params)
    n = s.peers * s.msgs
    need = s.cache + 2 * n * s.size + n * SPEC_BYTES
    return need, (
        f"msgrate: --cache-size {s.cache} + 2 x --peers {s.peers} x --msgs {s.msgs} x "
        f"--msg-size {s.size} bytes, and {SPEC_BYTES} bytes of bookkeeping per message"
    )


BENCHMARKS = tuple(
    Experiment(name, desc)
    for name, desc in (
        (
            "single_direction",
            "odd ranks send msgs messages each to the even rank below, one direction",
        ),
        ("pair_based", "per peer in turn: receive msgs from one, send msgs to another, waitall"),
        ("pre_post", "receives posted before the cache walk, then all sends, one waitall"),
        ("all_start", "all receives and sends to every peer started at once, one waitall"),
    )
)

FAMILY = Family(
    name=F,
    title="commbench msgrate",
    part="Sandia real-world message rate",
    benchmarks=BENCHMARKS,
    description="message rate with cold caches, many peers, sends and receives at once (seed 003)",
    min_world=3,
    options=OPTIONS,
    procedure=Lazy("commbench.suites.msgrate.patterns", "procedure"),  # the ranks import it
    honours=ROW_OPTIONS,  # the harness's rows
    view="msgrate",
    validate=validate,
    memory=memory,
)
