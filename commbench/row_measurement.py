"""How a row is measured beyond IMB's loop: per-iteration timing, the start of
collective repetitions, a precision target and the order of sizes.

The options are parsed here into one frozen Measuring (RunConfig.measuring) and
recorded under config.measuring in the results file; the harness reads them.
With none given every row is measured as IMB measures it (the default).
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass

from commbench.option_types import ConfigError, Option, choice

STARTS = ("barrier", "window")
PRECISION_SAMPLES = 1000  # --precision: a row's samples when --precision-budget names none
MIN_SAMPLES = 6  # the fewest samples whose median has a 95% order-statistic CI (records.median_ci)


def fraction(name: str):
    """A relative precision: '2%' or 0.02, in (0, 1)."""

    def parse(s: str) -> float:
        text = s.strip()
        try:
            v = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            raise ConfigError(
                f"{name} needs a relative precision such as 2% or 0.02, got {s!r}"
            ) from None
        if not math.isfinite(v) or not 0 < v < 1:
            raise ConfigError(f"{name} must lie between 0 and 100% (e.g. 2% or 0.02), got {s!r}")
        return v

    return parse


def budget(name: str):
    """A per-row budget: '<secs>[,<samples>]' (seconds > 0, samples >= 2)."""

    def parse(s: str) -> tuple[float, int | None]:
        parts = s.split(",")
        try:
            secs = float(parts[0])
            k = int(parts[1]) if len(parts) == 2 else None
        except ValueError:
            raise ConfigError(f"{name} needs <secs>[,<samples>], e.g. 10,200, got {s!r}") from None
        if len(parts) > 2 or not math.isfinite(secs) or secs <= 0 or (k is not None and k < 2):
            raise ConfigError(
                f"{name} needs <secs>[,<samples>] with secs > 0 and samples >= 2, got {s!r}"
            )
        return secs, k

    return parse


def seed(name: str):
    """An order seed: an integer >= 0, or 'random' (a seed drawn at start and recorded)."""

    def parse(s: str) -> int | str:
        if s.lower() == "random":
            return "random"
        if s.isdigit():
            return int(s)
        raise ConfigError(f"{name} needs a seed (an integer >= 0) or 'random', got {s!r}")

    return parse


OPTIONS: tuple[Option, ...] = (
    Option(
        ("--per-iteration",),
        "per_iteration",
        "",
        "time every repetition on its own: P50/P90/P99/max per row with CIs (docs/statistics.md)",
    ),
    Option(
        ("--sync-start",),
        "sync_start",
        "<barrier|window>",
        "collectives: start after barriers (default, IMB) or at a common time of synchronized "
        "clocks (window)",
        choice("--sync-start", STARTS),
    ),
    Option(
        ("--precision",),
        "precision",
        "<P%>",
        "repeat samples of each row until the 95% CI of its median is within +-P (e.g. 2%)",
        fraction("--precision"),
    ),
    Option(
        ("--precision-budget",),
        "precision_budget",
        "<secs>[,<samples>]",
        "per-row limit of --precision: seconds (default -time) and samples (default 1000)",
        budget("--precision-budget"),
    ),
    Option(
        ("--consecutive-samples",),
        "consecutive_samples",
        "",
        "take a row's --samples K one after another instead of in K rounds over the run (the "
        "form before rounds; docs/statistics.md says when)",
    ),
    Option(
        ("--shuffle",),
        "shuffle",
        "<seed|random>",
        "measure sizes (and benchmarks) in a shuffled order from this seed (recorded)",
        seed("--shuffle"),
    ),
)


@dataclass(frozen=True)
class Measuring:
    per_iteration: bool = False
    sync_start: str = "barrier"
    precision: float | None = None  # relative half-width of the median's 95% CI to reach
    precision_budget: tuple[float, int | None] | None = None  # (seconds, samples) per row
    # --samples K one after another (harness.rounds: else in K rounds over the run)
    consecutive_samples: bool = False
    shuffle: int | str | None = None  # None: IMB's order
    # the seed the order is drawn from (--shuffle random: drawn at start)
    shuffle_seed: int | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def samples_taken(samples: int, m: dict) -> str | None:
    """How a run takes a row's --samples K (m: Measuring.as_dict(), a results file's
    config.measuring): "rounds" (K rounds over the run, commbench.harness.rounds),
    "consecutive", or None (one sample a row)."""
    if samples <= 1 and m.get("precision") is None:
        return None
    if (
        m.get("precision") is not None
        or m.get("consecutive_samples")
        or m.get("per_iteration")
        or m.get("sync_start") == "window"
    ):
        return "consecutive"
    return "rounds"


def resolve(values: dict) -> Measuring:
    if "precision_budget" in values and "precision" not in values:
        raise ConfigError(
            "--precision-budget bounds --precision (accepted: --precision P% with it, or no "
            "--precision-budget)"
        )
    _check_precision(values)
    if values.get("consecutive_samples") and values.get("samples", 1) <= 1:
        raise ConfigError(
            "--consecutive-samples orders the samples of --samples K (accepted: --samples K with "
            "K > 1 and --consecutive-samples, or neither)"
        )
    # --per-iteration / --sync-start window: the tests' injected clock faults
    check_faults(os.environ)
    # random: a seed drawn once (rank 0 parses) and recorded, so the order can be repeated
    if "shuffle" in values:
        values = dict(
            values,
            shuffle_seed=_random_seed() if values["shuffle"] == "random" else values["shuffle"],
        )
    return Measuring(**{k: values[k] for k in Measuring.__dataclass_fields__ if k in values})


def _check_precision(values: dict) -> None:
    """--precision's budget must allow a 95% CI;
    --samples K with it is the least number of samples."""
    k = (values.get("precision_budget") or (0, None))[1]
    if k is not None and k < MIN_SAMPLES:
        raise ConfigError(
            f"--precision-budget: {k} samples cannot give a 95% CI of the median (accepted: "
            f"<secs>,<samples> with samples >= {MIN_SAMPLES}, or <secs> alone)"
        )
    want = values.get("samples", 1)
    if "precision" in values and k is not None and want > k:
        raise ConfigError(
            f"--samples {want} with --precision is the least number of samples of a row, more "
            f"than the {k} samples of --precision-budget (accepted: --samples <= {k}, or a larger "
            "budget)"
        )


# ---- --per-iteration and --sync-start window: which rows, and the tests' clock faults

PER_ITERATION_KINDS = ("single", "parallel", "collective", "sync")  # records.Kind values
WINDOW_KINDS = ("collective", "sync")
_OWN_LOOPS = {
    "io": "the io family's file operations are timed as IMB-IO times them",
    "pgas": "the pgas family's kernels time their own epochs",
}


def per_iteration_skip(family: str, benchmark: str, kind: str, mode: str) -> str | None:
    """Why --per-iteration does not time this row's repetitions one by one (None: it does).

    One repetition is timed on its own where it completes on its own: the latency-type
    rows (PingPong, PingPing, Sendrecv, Exchange, one-sided NON-AGGREGATE) and the
    collectives. Not where a repetition's completion is shared by all n of them."""
    if kind not in PER_ITERATION_KINDS:
        return {
            "rate": "a window of messages per repetition: a bandwidth row, not a latency",
            "multiple": "one-to-all transfers completed together: a bandwidth row",
            "overlap": "three components (t_ovrl, t_pure, t_CPU) per repetition",
            "overlap_sync": "three components (t_ovrl, t_pure, t_CPU) per repetition",
            "passive": "two components (t_pure, t_ovrl) per repetition",
        }.get(kind, f"kind {kind!r} has no per-repetition timing")
    if mode == "AGGREGATE":
        return "AGGREGATE mode completes all n repetitions at once"
    if family in _OWN_LOOPS:
        return _OWN_LOOPS[family]
    if family == "rma" and benchmark.startswith("All_"):
        return "one MPI_Win_flush_all completes all n repetitions"
    return None


def window_applies(family: str, benchmark: str, kind: str, mode: str) -> bool:
    """--sync-start window starts this row's repetitions at a common time (collectives only)."""
    return kind in WINDOW_KINDS and per_iteration_skip(family, benchmark, kind, mode) is None


# "rank:seconds[:drift],...": shifts those ranks' clocks
CLOCK_OFFSET_ENV = "COMMBENCH_FAULT_CLOCK_OFFSET"
TIMER_TICK_ENV = "COMMBENCH_FAULT_TIMER_TICK"  # seconds: a coarse timer for --per-iteration
# "rank:seconds": that rank sleeps so long before each block of --sync-start window's starts,
# as a rank the scheduler took the core from would (the tests' late starts, on any machine)
DESCHEDULE_ENV = "COMMBENCH_FAULT_DESCHEDULE"


def parse_clock_faults(text: str) -> dict[int, tuple[float, float]]:
    """COMMBENCH_FAULT_CLOCK_OFFSET: world rank -> (offset seconds, drift)."""
    out: dict[int, tuple[float, float]] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        parts = item.split(":")
        try:
            if len(parts) not in (2, 3) or not parts[0].isdigit():
                raise ValueError
            off, drift = float(parts[1]), float(parts[2]) if len(parts) == 3 else 0.0
        except ValueError:
            raise ConfigError(
                f"{CLOCK_OFFSET_ENV}: {item!r} is not rank:seconds[:drift] (accepted: e.g. "
                "1:0.25,2:-0.1 or 1:0:1e-5)"
            ) from None
        if not (math.isfinite(off) and math.isfinite(drift) and abs(drift) < 0.1):
            raise ConfigError(
                f"{CLOCK_OFFSET_ENV}: {item!r} (accepted: a finite offset in seconds and a drift "
                "with |drift| < 0.1)"
            )
        out[int(parts[0])] = (off, drift)
    return out


def parse_tick(text: str) -> float:
    """COMMBENCH_FAULT_TIMER_TICK: the step of the simulated coarse timer (0: none)."""
    if not text:
        return 0.0
    try:
        tick = float(text)
    except ValueError:
        tick = -1.0
    if not (math.isfinite(tick) and 0 < tick <= 1):
        raise ConfigError(
            f"{TIMER_TICK_ENV}: {text!r} is not a timer step (accepted: seconds, 0 < step <= 1)"
        )
    return tick


def parse_deschedule(text: str) -> dict[int, float]:
    """COMMBENCH_FAULT_DESCHEDULE: world rank -> seconds it sleeps before each block."""
    out: dict[int, float] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        rank, _, secs = item.partition(":")
        try:
            s = float(secs)
        except ValueError:
            s = -1.0
        if not rank.isdigit() or not (math.isfinite(s) and 0 < s <= 10):
            raise ConfigError(
                f"{DESCHEDULE_ENV}: {item!r} is not rank:seconds (accepted: e.g. 1:0.05, "
                "0 < seconds <= 10)"
            )
        out[int(rank)] = s
    return out


def check_faults(env) -> None:
    parse_clock_faults(env.get(CLOCK_OFFSET_ENV, ""))
    parse_tick(env.get(TIMER_TICK_ENV, ""))
    parse_deschedule(env.get(DESCHEDULE_ENV, ""))


def _random_seed() -> int:
    """--shuffle's seed when none is given (secrets imported here: start-up, issue 50)."""
    import secrets

    return secrets.randbelow(2**32)
