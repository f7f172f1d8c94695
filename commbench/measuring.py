"""How a row is measured beyond IMB's loop: per-iteration timing, the start of
collective repetitions, a precision target and the order of sizes.

The options are parsed here into one frozen Measuring (RunConfig.measuring) and
recorded under config.measuring in the results file; the harness reads them.
With none given every row is measured as IMB measures it (the default).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from commbench.options import ConfigError, Option, choice

STARTS = ("barrier", "window")


def fraction(name: str):
    """A relative precision: '2%' or 0.02, in (0, 1)."""

    def parse(s: str) -> float:
        text = s.strip()
        try:
            v = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            raise ConfigError(f"{name} needs a relative precision such as 2% or 0.02, got {s!r}") from None
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
            raise ConfigError(f"{name} needs <secs>[,<samples>] with secs > 0 and samples >= 2, got {s!r}")
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
    Option(("--per-iteration",), "per_iteration", "",
           "time every repetition on its own: P50/P90/P99/max per row with CIs (docs/statistics.md)"),
    Option(("--sync-start",), "sync_start", "<barrier|window>",
           "collectives: start after barriers (default, IMB) or at a common time of synchronized clocks "
           "(window)", choice("--sync-start", STARTS)),
    Option(("--precision",), "precision", "<P%>",
           "repeat samples of each row until the 95% CI of its median is within +-P (e.g. 2%)", fraction("--precision")),
    Option(("--precision-budget",), "precision_budget", "<secs>[,<samples>]",
           "per-row limit of --precision: seconds and samples", budget("--precision-budget")),
    Option(("--shuffle",), "shuffle", "<seed|random>",
           "measure sizes (and benchmarks) in a shuffled order from this seed (recorded)", seed("--shuffle")),
)


@dataclass(frozen=True)
class Measuring:
    per_iteration: bool = False
    sync_start: str = "barrier"
    precision: float | None = None  # relative half-width of the median's 95% CI to reach
    precision_budget: tuple[float, int | None] | None = None  # (seconds, samples) per row
    shuffle: int | str | None = None  # None: IMB's order

    def as_dict(self) -> dict:
        return asdict(self)


def resolve(values: dict) -> Measuring:
    if "precision_budget" in values and "precision" not in values:
        raise ConfigError("--precision-budget bounds --precision (accepted: --precision P% with it, or no "
                          "--precision-budget)")
    return Measuring(**{k: values[k] for k in Measuring.__dataclass_fields__ if k in values})
