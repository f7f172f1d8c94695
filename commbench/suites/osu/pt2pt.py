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
COMMON = frozenset("mixzcTu")
LAT = Defaults(iterations=10000, iterations_large=1000, skip=100, skip_large=10)
BW = Defaults(iterations=100, iterations_large=20, skip=10, skip_large=2)


BENCHMARKS = (
    OsuBenchmark(
        "latency",
        "ping-pong: MPI_Send/MPI_Recv there and back; half the round trip",
        group="pt2pt",
        title="MPI Latency",
        metric="latency",
        takes=COMMON,
        defaults=LAT,
        nprocs=exactly_two,
        loop=Lazy(LOOPS, "latency"),
        native="latency",
        row=Lazy(LOOPS, "lat_row"),
        verify=Lazy(LOOPS, "from_peer"),
        verdict=2,
    ),
    OsuBenchmark(
        "bw",
        "a window of -W MPI_Isend one way, MPI_Waitall, a 1-byte ack",
        group="pt2pt",
        title="MPI Bandwidth",
        metric="bandwidth",
        takes=COMMON | {"W"},
        defaults=BW,
        nprocs=exactly_two,
        loop=Lazy(LOOPS, "bw"),
        native="bw",
        row=Lazy(LOOPS, "bw_row"),
        verify=Lazy(LOOPS, "at_receiver"),
        directions=1,
        verdict=102,
    ),
    OsuBenchmark(
        "bibw",
        "windows of -W MPI_Irecv and MPI_Isend both ways at once, MPI_Waitall",
        group="pt2pt",
        title="MPI Bi-Directional Bandwidth",
        metric="bandwidth",
        takes=COMMON | {"W"},
        defaults=BW,
        nprocs=exactly_two,
        loop=Lazy(LOOPS, "bibw"),
        native="bibw",
        row=Lazy(LOOPS, "bw_row"),
        verify=Lazy(LOOPS, "from_peer"),
        directions=2,
    ),
)
