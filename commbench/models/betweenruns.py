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
  m - 1 degrees of freedom for m runs, and never below a floor (default 0.03, about 3 %):
  consecutive runs agree with each other more closely than with the run a week later (they
  share the machine's state), so five of them understate how far the next run may fall
  (benchmarks/store_gate.py measured it). The floor is what runs back to back differ by at
  the least: a row's median moved by 2.3-2.7 % (sd) between quiet runs and 3.0-3.5 %
  with a background load (benchmarks/gate_study.py); at 5 % the gate could not call a 20 %
  slowdown 9 times in 10 however many runs it held. The centre stays the latest n runs, so
  the gate follows a machine that changed on purpose.
* Band. What the test calls, printed as it is tested: exp(mean(L) +- (log(1 + threshold)
  + t_{1-alpha} * s * sqrt(1 + 1/n))), the one-sided critical values at alpha beyond the
  threshold. A new run inside it is never called slower or faster (its p-value is above
  alpha, so its Benjamini-Hochberg q is too); outside it, it is called unless the
  correction over the comparison's rows lifts its q above alpha. (A two-sided 95 %
  prediction interval beside a one-sided test printed "new/base 1.385, band 0.713-1.402,
  slower": a row called inside its band.)
* The new run's own noise. The spread between runs holds how far a typical run's value
  falls; a new run whose samples spread more than usual (a load during it, a row whose
  samples split between two levels, as a job sharing a core makes them) has a value less
  sure than that. The standard error of its median log-value from its samples (new_se:
  commbench.models.twosample's, the two-file test's) is added to the prediction's
  variance: s^2 (1 + 1/n) + new_se^2. For a quiet run it is small beside s (20 samples
  spreading 3 %: 0.008 beside s >= 0.05); a run where half of a row's samples took 6x
  the others is no longer called slower on its median alone.
* Detectable. exp(log(1 + threshold) + (t_{1-alpha} + t_{POWER}) * scale): the smallest
  slowdown (new/base) the test calls with probability POWER (0.9) at alpha, as the two-file
  test's (commbench.models.twosample); the band's upper end is where it is called half the
  time. Where even 2x cannot be called, the gate says so rather than "no regression".
* Multiplicity. Benjamini-Hochberg over the rows of one comparison, as the two-file gate
  (commbench.models.twosample.adjust).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

MIN_RUNS = 2
POWER = 0.90  # of the detectable ratio, as commbench.models.twosample's


@dataclass(frozen=True)
class BetweenRuns:
    n: int  # baseline runs
    center: float  # geometric mean of the baseline values
    spread: float  # standard deviation of the baseline's log-values (about the relative one)
    band: tuple[float, float]  # where a new value is called faster / slower (the test's bounds)
    ratio: float  # new / center
    p_slower: float
    p_faster: float
    detectable: float  # the smallest slowdown the test calls with probability POWER here


def test(
    baseline: Sequence[float],
    new: float,
    threshold: float,
    alpha: float = 0.05,
    history: Sequence[float] | None = None,
    min_spread: float = 0.0,
    new_se: float = 0.0,
) -> BetweenRuns:
    """The prediction test (module docstring); baseline: n >= MIN_RUNS positive values, the
    centre; history: the values the spread is estimated from (the baseline and the runs before
    it; None: the baseline), with a floor of min_spread on it; new_se: the standard error of
    the new value's logarithm from its own samples (0: none known). Student's t through
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
    scale = math.sqrt(s * s * (1 + 1 / n) + new_se * new_se)
    shift, x = math.log1p(threshold), math.log(new)
    if scale > 0:
        p_slower = float(special.stdtr(m - 1, -(x - shift - mean) / scale))
        p_faster = float(special.stdtr(m - 1, (x + shift - mean) / scale))
        half = float(special.stdtrit(m - 1, 1 - alpha)) * scale
        reach = half + float(special.stdtrit(m - 1, POWER)) * scale
    else:
        p_slower = 0.0 if x - shift > mean else 1.0
        p_faster = 0.0 if x + shift < mean else 1.0
        half = reach = 0.0
    return BetweenRuns(
        n=n,
        center=math.exp(mean),
        spread=s,
        band=(math.exp(mean - shift - half), math.exp(mean + shift + half)),
        ratio=new / math.exp(mean),
        p_slower=p_slower,
        p_faster=p_faster,
        detectable=math.exp(shift + reach),
    )
