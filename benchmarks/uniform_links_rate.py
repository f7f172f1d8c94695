"""How often the net family's diagnosis names a host or link where there is none, and which
"k of n runs" rule tests/system/test_diagnose.py's uniform-links test should hold.

Four emulated hosts (network namespaces joined by veths, no rate limit: every link the
same) run `commbench run --suite net` once per round, as the test does, and the script
counts the runs whose verdicts name anything. From that count it gives the false-verdict
rate's 95 % Clopper-Pearson interval (scipy), and, for each rule "at most k of n runs name
something", the probability that a correct diagnosis passes (at the interval's upper
end: the test must not fail where nothing is wrong) and the probability that a rule
with a 30 % false-verdict rate passes (it must fail such a rule). A spinning probe's share
of a core before and after says whether the machine was quiet (tests/support/load.py).

    python benchmarks/uniform_links_rate.py [--runs 40]

Needs root (ip netns, tc), as the test.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scipy import stats  # noqa: E402

from tests.support import netns  # noqa: E402 - this checkout's tests first
from tests.support.load import cpu_share, said  # noqa: E402
from tests.system.test_diagnose import emulated  # noqa: E402

BAD = 0.30  # the false-verdict rate of a rule the test must fail


def measure(runs: int) -> tuple[int, float, float]:
    """(runs that named something, seconds per run, the probe's smallest share of a core)."""
    share = cpu_share()
    named = 0
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp, netns.Cluster(4) as c:
        for i in range(runs):
            doc = emulated(c, Path(tmp) / f"r{i}.json", 1)
            named += bool(doc["verdicts"])
            print(
                f"run {i + 1}: {'named ' + str(len(doc['verdicts'])) if doc['verdicts'] else '-'}"
            )
    per_run = (time.monotonic() - t0) / runs
    return named, per_run, min(share, cpu_share())


def rules(p_hi: float) -> list[tuple[int, int, float, float]]:
    """(n, k, P(pass | p_hi), P(pass | BAD)) of the rules with n of 5 … 40 runs, the smallest
    k that passes a correct diagnosis 99 % of the time."""
    out = []
    for n in (*range(5, 16), 20, 25, 30, 35, 40):
        for k in range(n + 1):
            if stats.binom.cdf(k, n, p_hi) >= 0.99:
                out.append((n, k, stats.binom.cdf(k, n, p_hi), stats.binom.cdf(k, n, BAD)))
                break
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40)
    a = ap.parse_args()
    why = netns.available()
    if why:
        sys.exit(f"emulated hosts unavailable: {why}")
    named, per_run, share = measure(a.runs)
    lo, hi = stats.binomtest(named, a.runs).proportion_ci(0.95, method="exact")
    print(f"\nsomething named in {named} of {a.runs} runs ({per_run:.1f} s a run); {said(share)}")
    print(f"false-verdict rate {named / a.runs:.3f}, 95 % interval [{lo:.3f}, {hi:.3f}]")
    print(f"\nrule: at most k of n   P(pass | p = {hi:.3f})   P(pass | p = {BAD})")
    for n, k, good, bad in rules(hi):
        print(f"  {k:2d} of {n:2d}             {good:.4f}                {bad:.4f}")
    print(
        f"  (the rule until now: 3 of 9: {stats.binom.cdf(3, 9, hi):.4f}, "
        f"{stats.binom.cdf(3, 9, BAD):.4f})"
    )


if __name__ == "__main__":
    main()
