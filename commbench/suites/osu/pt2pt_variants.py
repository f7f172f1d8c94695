"""The rest of OSU's point-to-point (OMB 7.4): the persistent latency, bw and bibw;
mbw_mr, multi_lat, latency_mp; bw_fan_in, bw_fan_out. latency_mt is in
latency_mt.py, init in init.py.

Their procedure, read off the binaries with tests/data/osu/trace_pt2pt.c and
their arithmetic with the made-up clocks wtime_steps.c and wtime_rank_steps.c
(tests/data/osu/README.md; docs/osu.md):

- latency_persistent: MPI_Send_init and MPI_Recv_init once, MPI_Start/MPI_Wait of
  each per round trip; bw_persistent: W MPI_Send_init (MPI_Recv_init), MPI_Startall,
  MPI_Waitall, the 1-byte ack; bibw_persistent: W of each on both ranks, MPI_Startall
  receives, sends, MPI_Waitall sends, receives. Counts and rows as latency, bw, bibw.
- mbw_mr: pairs (rank i < pairs, i + pairs); per window two MPI_Barrier, then bw's
  window; 100 iterations and 10 warm-up at every size. MB/s = pairs x size x W x
  iterations / the senders' mean time; Messages/s = that / size; -z: rank 0's
  per-window values x pairs.
- multi_lat: pairs (i, i + P/2), per round trip an MPI_Barrier; latency = the
  senders' mean; latency_mp: latency with an MPI_Barrier before every round trip
  (the 7.4 binary forks no process: no fork in its strace).
- bw_fan_in / bw_fan_out: ranks 1 .. P-1 send W messages each to rank 0 (rank 0 to
  each), acks; MB/s = senders x size x W x iterations / the timing ranks' mean time.

The descriptors and the launcher's checks (process counts, -t, -p) are here, imported by
the catalog (neither MPI nor numpy); the loops, roles, rows, verifiers and extras are
pt2pt_variants_loops.py, named as base.Lazy.
"""

from __future__ import annotations

from commbench.option_types import ConfigError
from commbench.suites.base import Lazy
from commbench.suites.osu.pt2pt import BW, COMMON, LAT, transfer
from commbench.suites.osu.pt2pt import LOOPS as PT2PT
from commbench.suites.osu.pt2pt import VARIANTS as LOOPS
from commbench.suites.osu.spec import Defaults, OsuBenchmark, exactly_two

MBW = Defaults(iterations=100, iterations_large=100, skip=10, skip_large=10)
MAX_PROCS = (
    127  # -t's largest count: the binaries refuse 128 ("Invalid Number of Threads [-t 128]")
)


# Process counts.
def even(p: int) -> str | None:
    return (
        None
        if p >= 2 and p % 2 == 0
        else "commbench: needs an even number of processes (pairs i, i + P/2)"
    )


def at_least_two(p: int) -> str | None:
    return None if p >= 2 else "This test requires at least two processes"


def procs(s) -> tuple[int, int]:
    """latency_mp's -t as the binary prints it: none 2:2, -t N 0:N, -t S:R."""
    if not s.test_calls:
        return 2, 2
    parts = s.test_calls.split(":")
    return (int(parts[0]), int(parts[1])) if len(parts) == 2 else (0, int(parts[0]))


def check_t(s) -> None:
    """-t for latency_mt / latency_mp: N or S:R, each 1 .. 127, as the binaries take it (they
    refuse 0, 128, '2:' and '2:3:4': "Invalid Number of Threads" / "… of Processes")."""
    if s.test_calls is None:
        return
    parts = s.test_calls.split(":")
    if not all(x.isdigit() and 1 <= int(x) <= MAX_PROCS for x in parts):
        raise ConfigError(
            f"-t {s.test_calls}: latency_mt and latency_mp take -t RECV or -t SEND:RECV, each a "
            f"count of threads (latency_mp: processes) from 1 to {MAX_PROCS}, as their binaries "
            f"(accepted: e.g. -t 4, -t 2:3)"
        )


def pairs_fit(s, p: int) -> None:
    """mbw_mr's -p PAIRS needs 2 PAIRS processes."""
    if s.pairs is not None and 2 * s.pairs > p:
        raise ConfigError(
            f"-p {s.pairs}: {s.pairs} pairs need {2 * s.pairs} processes, the run has {p} "
            f"(accepted: -p 1 to {p // 2})"
        )


def _fan(way: str, description: str) -> OsuBenchmark:
    """bw_fan_in (ranks 1..P-1 send to rank 0) or bw_fan_out (rank 0 sends to them)."""
    return OsuBenchmark(
        "bw_fan_" + way,
        description,
        group="pt2pt_variants",
        title="MPI Bandwidth",
        metric="fan",
        takes=COMMON | {"W"},
        defaults=BW,
        nprocs=at_least_two,
        loop=Lazy(LOOPS, "fan_" + way),
        native="bw_fan_" + way,
        prepare=Lazy(LOOPS, "fan_roles"),
        row=Lazy(LOOPS, "multi_bw_row"),
        verify=Lazy(LOOPS, "fan_receivers"),
        gather=True,
        directions=1,
    )


PERSISTENT = {  # latency, bw and bibw with persistent requests
    "latency": "latency with persistent requests: MPI_Start/MPI_Wait of a send and a receive",
    "bw": "bw with persistent requests: MPI_Startall of -W sends, MPI_Waitall, the ack",
    "bibw": "bibw with persistent requests: MPI_Startall of -W receives and sends, MPI_Waitall",
}

BENCHMARKS = (
    *(transfer(kind, what, persistent=True) for kind, what in PERSISTENT.items()),
    OsuBenchmark(
        "mbw_mr",
        "pairs i, i+P/2 (-p): two barriers, a window of -W MPI_Isend, the ack; MB/s and "
        "messages/s of all pairs",
        group="pt2pt_variants",
        title="MPI Multiple Bandwidth / Message Rate",
        metric="mbw_mr",
        takes=COMMON | {"W", "p"},
        defaults=MBW,
        nprocs=at_least_two,
        loop=Lazy(LOOPS, "mbw_mr"),
        native="mbw_mr",
        prepare=Lazy(LOOPS, "pair_roles"),
        row=Lazy(LOOPS, "multi_bw_row"),
        verify=Lazy(LOOPS, "pair_receivers"),
        gather=True,
        directions=1,
        world=pairs_fit,
        extra=Lazy(LOOPS, "mbw_extra"),
    ),
    OsuBenchmark(
        "multi_lat",
        "pairs i, i+P/2: an MPI_Barrier, then a ping-pong; the senders' mean half round trip",
        group="pt2pt_variants",
        title="MPI Multi Latency",
        metric="latency",
        takes=COMMON,
        defaults=LAT,
        nprocs=even,
        loop=Lazy(LOOPS, "barrier_latency"),
        native="barrier_latency",
        prepare=Lazy(LOOPS, "pair_roles"),
        row=Lazy(LOOPS, "senders_latency_row"),
        verify=Lazy(LOOPS, "pair_receivers"),
        gather=True,
    ),
    OsuBenchmark(
        "latency_mp",
        "latency with an MPI_Barrier before every round trip (OMB 7.4 forks no process)",
        group="pt2pt_variants",
        title="MPI Multi-process Latency",
        metric="latency",
        takes=COMMON | {"t"},
        defaults=LAT,
        nprocs=exactly_two,
        loop=Lazy(LOOPS, "barrier_latency"),
        native="barrier_latency",
        row=Lazy(PT2PT, "lat_row"),
        verify=Lazy(PT2PT, "from_peer"),
        validate=check_t,
        extra=Lazy(LOOPS, "mp_extra"),
    ),
    _fan("in", "ranks 1..P-1 each send -W messages to rank 0, which acks each; MB/s of all"),
    _fan("out", "rank 0 sends -W messages to each of ranks 1..P-1, which ack; MB/s of all"),
)
