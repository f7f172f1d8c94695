"""OSU's point-to-point benchmarks: latency, bw, bibw (OMB 7.4).

Their procedure, as the binaries run it (tests/data/osu/README.md: how it was
read off them with an MPI call trace):

- latency: rank 0 MPI_Send, MPI_Recv; rank 1 MPI_Recv, MPI_Send; rank 0 times
  every round trip; latency = the mean of the round trips / 2. Warm-up 100
  (10 above 8192 bytes), iterations 10000 (1000), one MPI_Barrier per size.
- bw: rank 0 posts -W (64) MPI_Isend of the same buffer and MPI_Waitall, then
  receives a 1-byte ack; rank 1 posts -W MPI_Irecv into one buffer, waits, acks;
  rank 0 times every window; bandwidth = size x W x iterations / total seconds,
  MB = 10^6 bytes. Warm-up 10 (2), iterations 100 (20).
- bibw: both ranks post -W MPI_Irecv, -W MPI_Isend, and wait for both;
  bandwidth = 2 x size x W x iterations / total seconds. Counts as bw.

Each needs exactly two processes ("This test requires exactly two processes").
Under -c one more iteration runs after the timed ones on patterned buffers
and the receivers verify every byte (context.Ctx.fill / mismatches).

The descriptors (this module, imported by the catalog: neither MPI nor numpy); the loops,
rows and verifiers are pt2pt_loops.py, named as base.Lazy.
"""

from __future__ import annotations

from commbench.suites.base import Lazy
from commbench.suites.osu.spec import Defaults, OsuBenchmark, exactly_two

LOOPS = "commbench.suites.osu.pt2pt_loops"
VARIANTS = "commbench.suites.osu.pt2pt_variants_loops"  # the persistent forms' loops
COMMON = frozenset("mixzcTu")
LAT = Defaults(iterations=10000, iterations_large=1000, skip=100, skip_large=10)
BW = Defaults(iterations=100, iterations_large=20, skip=10, skip_large=2)
KINDS = {  # name -> (OSU's title, the tag of -c's verdict)
    "latency": ("MPI Latency", 2),
    "bw": ("MPI Bandwidth", 102),
    "bibw": ("MPI Bi-Directional Bandwidth", 0),
}


def transfer(kind: str, description: str, persistent: bool = False) -> OsuBenchmark:
    """latency, bw or bibw, or (persistent) its form with persistent requests
    (pt2pt_variants.py): the same counts, rows and -c, a loop of its own."""
    title, verdict = KINDS[kind]
    name = kind + "_persistent" * persistent
    bw = kind != "latency"
    return OsuBenchmark(
        name,
        description,
        group="pt2pt_variants" if persistent else "pt2pt",
        title=title + " Persistent" * persistent,
        metric="bandwidth" if bw else "latency",
        takes=COMMON | {"W"} if bw else COMMON,
        defaults=BW if bw else LAT,
        nprocs=exactly_two,
        loop=Lazy(VARIANTS if persistent else LOOPS, name),
        native=name,
        row=Lazy(LOOPS, "bw_row" if bw else "lat_row"),
        verify=Lazy(LOOPS, "at_receiver" if kind == "bw" else "from_peer"),
        directions=2 if kind == "bibw" else 1,
        verdict=verdict,
    )


BENCHMARKS = (
    transfer("latency", "ping-pong: MPI_Send/MPI_Recv there and back; half the round trip"),
    transfer("bw", "a window of -W MPI_Isend one way, MPI_Waitall, a 1-byte ack"),
    transfer("bibw", "windows of -W MPI_Irecv and MPI_Isend both ways at once, MPI_Waitall"),
)
