"""Why Q is a numpy loop: jitter of Q(COMPTIME) for the numpy units against the
seed's scalar qint loop written in plain Python, at the same duration.

Prints, for each loop, the mean duration and the coefficient of variation
(std/mean) over repeated runs, and the ratio of the two. Run on a quiet
machine: python benchmarks/compute_loop_noise.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from commbench.compute import ComputeLoop


def qint_python(rept: int) -> int:
    iss = 0
    while rept > 0:
        rept -= 1
        i, j, iss = 2, 3, 0
        for _ in range(40):  # QINTLOOP of the seed
            k = i + j
            i = j
            j = k
            iss += k * k
    return iss


def runs(fn, arg, count=200):
    out = []
    for _ in range(count):
        t0 = time.perf_counter()
        fn(arg)
        out.append(time.perf_counter() - t0)
    return out


def main(target_s: float = 2e-3) -> None:
    rows = []
    for kind in ("int", "float"):
        q = ComputeLoop(kind)
        t0 = time.perf_counter()
        q.run(200)
        units = max(1, round(target_s / ((time.perf_counter() - t0) / 200)))
        rows.append((f"numpy Q ({kind}), {units} units", runs(q.run, units)))
    t0 = time.perf_counter()
    qint_python(200)
    rept = max(1, round(target_s / ((time.perf_counter() - t0) / 200)))
    rows.append((f"python qint, {rept} x 40 iterations", runs(qint_python, rept)))
    cvs, mads = [], []
    for name, v in rows:
        m, sd = statistics.fmean(v), statistics.stdev(v)
        med = statistics.median(v)
        mad = statistics.median(abs(x - med) for x in v)
        cvs.append(sd / m)
        mads.append(mad / med)
        print(f"{name:<40} mean {m * 1e6:9.1f} us  cv {sd / m:6.3%}  mad/median {mad / med:6.3%}")
    # cv is dominated by preemptions on a shared machine; mad/median is the loop's own jitter
    print(
        f"jitter ratio python qint / numpy Q(int): cv {cvs[2] / cvs[0]:.2f}, mad/median "
        f"{mads[2] / mads[0]:.2f}"
    )


if __name__ == "__main__":
    main()
