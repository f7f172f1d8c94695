"""Family "overhead": seed 002's F/S/R/A/U/E decomposition, its §5.2 interference
experiment, and LogGP measured the way Netgauge does — one run, same ranks.

The experiments are sequences of timed phases across up to k+1 ranks (echo
chains, messages arriving during a timed compute loop, streams through a
computing rank), which the harness's per-size kernel shape does not express,
so this family brings its own driver. The data flow is kept: every
measurement becomes a records.Measurement (raw per-experiment means with
min/max/std in `extra`), emitted to the sinks; the tables are a view
(commbench.views.overhead_text) that rebuilds them from the records with the
pure models in commbench.models.overhead. A final "analysis" record carries
the same solved values and fits for machine readers.

MPI mapping (docs/overhead.md): the seed's write/read system calls are
MPI_Send/MPI_Recv; its operating-system forwarding through intermediate
nodes is done here by forwarding ranks that MPI_Probe (message arrived), then
Recv and Send; each forwarder times that Recv+Send and the time is taken out
of the echo, so the chain's differences leave E alone, as the seed's OS
forwarding did (it has no F, A or U on intermediate nodes).

The parts of the package:

- this module: the options, OverheadSettings, validate, the Experiments and FAMILY;
- shared: what every part shares (records with calibration shifts, the
  sleeping barrier, calibrating Q);
- driver: the run order as the harness's rows (commbench.harness.rows), ending
  in the analysis row;
- decomposition: seed tests 1-6 (R, A+U, F+S; R+S; 2(F+E+U); the echo chain);
- interference: the §5.2 streams through a computing rank;
- loggp: Netgauge's parametrised round trips PRTT(n,d,s).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from commbench.option_types import ConfigError, Option, integer, positive_float
from commbench.policy import COMPUTE_KINDS as KINDS
from commbench.suites.base import Experiment, Family, FamilySettings, Lazy

F = "overhead"

SEED_SIZES = (16, 500, 1000, 1500, 2000)  # seed 002, Tables 1-3
PARTS = ("decomposition", "interference", "loggp")


def _sizes(s: str) -> tuple[int, ...]:
    form = "accepted: --sizes <n1>,<n2>,... with at least two distinct non-negative byte counts"
    try:
        v = tuple(int(x) for x in s.split(","))
    except ValueError:
        raise ConfigError(f"--sizes {s!r}: {form}") from None
    if len(set(v)) < 2 or min(v) < 0:
        raise ConfigError(f"--sizes {s!r}: {form} (a line needs two sizes)")
    return tuple(sorted(set(v)))


def _q(s: str) -> tuple[str, ...]:
    low = s.lower()
    if low == "both":
        return KINDS
    if low in KINDS:
        return (low,)
    raise ConfigError(f"--q {s!r}: accepted int, float or both")


def _statistic(s: str) -> str:
    if s.lower() not in ("mean", "median", "min"):
        raise ConfigError(f"--statistic {s!r}: accepted mean, median or min")
    return s.lower()


def _baseline(s: str) -> str:
    if s.lower() not in ("calibrated", "paired"):
        raise ConfigError(f"--baseline {s!r}: accepted calibrated or paired")
    return s.lower()


OPTIONS = (
    Option(
        ("--sizes",),
        "overhead_sizes",
        "<n1,n2,...>",
        "overhead: message sizes in bytes (default the seed's 16,500,1000,1500,2000)",
        _sizes,
        uses=lambda b: b.name in ("decomposition", "loggp"),
    ),
    Option(
        ("--trials",),
        "overhead_trials",
        "<N>",
        "overhead: independent trials, for mean ± std per size (default 5, as the seed)",
        integer("--trials", 1),
        uses=lambda b: b.name in ("decomposition", "loggp"),
    ),
    Option(
        ("--reps",),
        "overhead_reps",
        "<N>",
        "overhead: repetitions averaged per experiment and size, plus one dropped warm-up "
        "(default 100)",
        integer("--reps", 2),
        uses=lambda b: b.name in ("decomposition", "loggp"),
    ),
    Option(
        ("--q",),
        "overhead_q",
        "<int|float|both>",
        "overhead: compute loop Q variants (default both)",
        _q,
        uses=lambda b: b.name in ("decomposition", "interference"),
    ),
    Option(
        ("--q-time",),
        "overhead_q_us",
        "<usec>",
        "overhead: duration of Q(COMPTIME) in microseconds (default 2000)",
        positive_float("--q-time"),
        uses=lambda b: b.name in ("decomposition", "interference"),
    ),
    Option(
        ("--max-distance",),
        "overhead_distance",
        "<k>",
        "overhead: echo distances 1..k through a chain of ranks (default P-1)",
        integer("--max-distance", 2),
        uses=lambda b: b.name == "decomposition",
    ),
    Option(
        ("--loggp-n",),
        "overhead_loggp_n",
        "<n>",
        "overhead: messages per PRTT(n,d,s) round (default 10, Netgauge's)",
        integer("--loggp-n", 2),
        uses=lambda b: b.name == "loggp",
    ),
    Option(
        ("--statistic",),
        "overhead_statistic",
        "<mean|median|min>",
        "overhead: per-experiment statistic solved (default mean, as the seed; median or min "
        "resist a loaded machine)",
        _statistic,
        uses=lambda b: b.name in ("decomposition", "loggp"),
    ),
    Option(
        ("--baseline",),
        "overhead_baseline",
        "<calibrated|paired>",
        "overhead: Q time subtracted from R, F+S, R+S: the start calibration (default, the "
        "seed's) or Q timed in the same round without traffic",
        _baseline,
        uses=lambda b: b.name == "decomposition",
    ),
    Option(
        ("--stream-time",),
        "overhead_stream_s",
        "<secs>",
        "overhead: computation timed in the interference experiment (default 0.5)",
        positive_float("--stream-time"),
        uses=lambda b: b.name == "interference",
    ),
)


@dataclass(frozen=True)
class OverheadSettings(FamilySettings):
    prefix: ClassVar[str] = "overhead_"
    sizes: tuple[int, ...] = SEED_SIZES
    trials: int = 5
    reps: int = 100
    q: tuple[str, ...] = KINDS
    q_us: float = 2000.0
    distance: int | None = None  # default P - 1
    loggp_n: int = 10
    stream_s: float = 0.5
    statistic: str = "mean"
    baseline: str = "calibrated"


def validate(cfg, size: int) -> None:
    if "interference" in cfg.benchmarks and "decomposition" not in cfg.benchmarks:
        raise ConfigError(
            "interference predicts its slowdown from R and S: run it with decomposition "
            "(commbench overhead decomposition interference)"
        )
    d = cfg.params.get("overhead_distance")
    if d is not None and d > size - 1:
        raise ConfigError(
            f"--max-distance {d}: a chain of {d} hops needs "
            f"{d + 1} processes, got {size} (use -n {d + 1})"
        )


def memory(params: dict, size: int) -> tuple[int, str]:
    """Bytes per process: the largest message's send and receive buffers, the streams'."""
    biggest = max(OverheadSettings.of(params).sizes)
    return (
        2 * biggest + 4 * 2000,
        f"overhead: two buffers of the largest --sizes entry, {biggest} bytes",
    )


BENCHMARKS = (
    Experiment(
        "decomposition",
        "E, R, S, F, U, A per size for each Q variant, "
        "fitted lines a + b*n (seed 002 sections 3-4)",
    ),
    Experiment(
        "interference",
        "rank 0 computes while 1..3 neighbours stream 2000-byte messages through it (seed 002 "
        "section 5.2)",
    ),
    Experiment("loggp", "L, o_s, o_r, g, G from Netgauge's parametrised round trips PRTT(n,d,s)"),
)

FAMILY = Family(
    name=F,
    title="commbench overhead",
    part="Krumme-Greenfield overhead decomposition and LogGP",
    benchmarks=BENCHMARKS,
    description=(
        "F/S/R/A/U/E per message size with fitted lines (seed 002), interference, LogGP "
        "(Netgauge PRTT)"
    ),
    min_world=3,
    options=OPTIONS,
    procedure=Lazy("commbench.suites.overhead.driver", "procedure"),  # the ranks import it
    honours=frozenset(),  # its experiments take their own options only
    view="overhead",
    validate=validate,
    memory=memory,
)
