"""One row's value in a new run against the same row in n earlier runs: is the new run
slower by more than a threshold beyond what the earlier runs spread over? (`commbench
compare NEW --baseline STORE`; no MPI; scipy.stats.)

* Model. Whole runs shift (another placement of the ranks, another state of the network,
  of the caches, of the machine's other jobs): a row's per-run value (the median of its
  samples, else its reported time) varies between runs by more than its samples vary
  within one. Its logarithm in the baseline runs, L_1..L_n, is taken as a sample of a
  normal distribution, and the new run's log-value l as one more draw from it when nothing
  changed (times are positive and their run-to-run changes multiplicative).
* Test. The prediction test of H0 "l comes from the baseline's distribution shifted up by
  log(1 + threshold)" against "it lies above that": t = (l - log(1 + threshold) - mean(L)) /
  (s * sqrt(1 + 1/n)), Student's t (the exact predictive distribution under the model);
  p_slower = P(T > t). The mirror gives p_faster. n >= 2; with s = 0 (identical values) the
  p-value is 0 or 1.
* Spread. s is the sample deviation of the log-values of a longer history than the centre's
  n runs (the gate's default: the 20 latest comparable runs, the baseline's among them), with
  m - 1 degrees of freedom for m runs, and never below a floor (default 0.05, about 5 %):
  consecutive runs agree with each other more closely than with the run a week later (they
  share the machine's state), so five of them understate how far the next run may fall, and
  on a shared machine a window of quiet runs would make every ordinary 10-20 % step a
  regression (benchmarks/store_gate.py measured both). The centre stays the latest n runs,
  so the gate follows a machine that changed on purpose.
* Band. What the test calls, printed as it is tested: exp(mean(L) +- (log(1 + threshold)
  + t_{1-alpha} * s * sqrt(1 + 1/n))), the one-sided critical values at alpha beyond the
  threshold. A new run inside it is never called slower or faster (its p-value is above
  alpha, so its Benjamini-Hochberg q is too); outside it, it is called unless the
  correction over the comparison's rows lifts its q above alpha. (A two-sided 95 %
  prediction interval beside a one-sided test printed "new/base 1.385, band 0.713-1.402,
  slower": a row called inside its band.)
* Detectable. The band's upper end over the centre: the smallest slowdown (new/base) this
  row's baseline lets the test call. Where even 2x cannot be called, the gate says so
  rather than "no regression".
* Multiplicity. Benjamini-Hochberg over the rows of one comparison, as the two-file gate
  (commbench.models.twosample.adjust).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

MIN_RUNS = 2


@dataclass(frozen=True)
class BetweenRuns:
    n: int  # baseline runs
    center: float  # geometric mean of the baseline values
    spread: float  # standard deviation of the baseline's log-values (about the relative one)
    band: tuple[float, float]  # where a new value is called faster / slower (the test's bounds)
    ratio: float  # new / center
    p_slower: float
    p_faster: float
    detectable: float  # band[1] / center: the smallest slowdown the test can call here


def test(
    baseline: Sequence[float],
    new: float,
    threshold: float,
    alpha: float = 0.05,
    history: Sequence[float] | None = None,
    min_spread: float = 0.0,
) -> BetweenRuns:
    """The prediction test (module docstring); baseline: n >= MIN_RUNS positive values, the
    centre; history: the values the spread is estimated from (the baseline and the runs before
    it; None: the baseline), with a floor of min_spread on it. Student's t through
    scipy.special's stdtr/stdtrit: a trend tests thousands of rows."""
    from scipy import special

    logs = [math.log(v) for v in baseline]
    wide = logs if history is None else [math.log(v) for v in history]
    n, m = len(logs), len(wide)
    if n < MIN_RUNS or m < MIN_RUNS or new <= 0:
        raise ValueError(f"needs {MIN_RUNS} positive baseline values and a positive new one")
    mean = sum(logs) / n
    middle = sum(wide) / m
    s = max(math.sqrt(sum((x - middle) ** 2 for x in wide) / (m - 1)), min_spread)
    scale = s * math.sqrt(1 + 1 / n)
    shift, x = math.log1p(threshold), math.log(new)
    if scale > 0:
        p_slower = float(special.stdtr(m - 1, -(x - shift - mean) / scale))
        p_faster = float(special.stdtr(m - 1, (x + shift - mean) / scale))
        half = float(special.stdtrit(m - 1, 1 - alpha)) * scale
    else:
        p_slower = 0.0 if x - shift > mean else 1.0
        p_faster = 0.0 if x + shift < mean else 1.0
        half = 0.0
    return BetweenRuns(
        n=n,
        center=math.exp(mean),
        spread=s,
        band=(math.exp(mean - shift - half), math.exp(mean + shift + half)),
        ratio=new / math.exp(mean),
        p_slower=p_slower,
        p_faster=p_faster,
        detectable=math.exp(shift + half),
    )
