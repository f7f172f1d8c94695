"""One IMB cell that depends on what ran before it in IMB's process: glibc's malloc (issue 50).

    python benchmarks/imb_heap_history.py [--family mpi1] [--benchmark Exchange]
                                          [--before PingPong,Sendrecv] [--size 1048576]
                                          [--rounds 11] [--np 2] [--python PATH] [--mpiexec PATH]

IMB allocates its buffers with malloc and frees them after each benchmark. glibc serves a
large block with mmap until a freed mmap'd block raises its dynamic threshold (up to 32 MiB):
after benchmarks with 4 MiB buffers, the next one's 1 MiB buffers come from the heap
instead. MALLOC_MMAP_THRESHOLD_ set in the environment fixes the threshold (and turns the
dynamic one off). Contenders, each a fresh job, in alternating rounds, with the sizes
0, 8, 1 KiB, 64 KiB, 1 MiB and 4 MiB, -iter 200 -iter_policy off, as imb_side_by_side.py runs them:

  IMB list           IMB-<FAMILY> <before...> <benchmark>
  IMB alone          IMB-<FAMILY> <benchmark>
  IMB list, fixed    the same as IMB list with MALLOC_MMAP_THRESHOLD_=131072
  IMB alone, fixed   the same as IMB alone with it
  commbench list     commbench run <before...> <benchmark> --methodology imb2021, plain pages
  commbench alone    commbench run <benchmark> ...

and prints the benchmark's time at --size (t[usec], t_avg or t_ovrl as imb_side_by_side.py
reads it): medians, ranges and commbench/IMB side by side.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import mpis
from cfloor import conditions, median, msglen_file, rotate
from imb_side_by_side import REPS, SIZES, commands, tables, time_of

FIXED = {"MALLOC_MMAP_THRESHOLD_": "131072"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", default="mpi1")
    ap.add_argument("--benchmark", default="Exchange")
    ap.add_argument("--before", default="PingPong,Sendrecv")
    ap.add_argument("--size", type=int, default=2**20)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--np", type=int, default=2)
    mpis.add_arguments(ap, peers="IMB-<FAMILY>")
    a = ap.parse_args()
    a.reps, a.memory = REPS, "same"  # as imb_side_by_side.py runs both sides
    mpi = mpis.select(a)
    listed = [b for b in a.before.split(",") if b] + [a.benchmark]
    lens = msglen_file(SIZES)
    env = mpi.env(a.np)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        # imb_side_by_side's command lines: IMB, and commbench --methodology imb2021
        ran = {w: commands(a, mpi, names, lens, out, ["imb2021"])
               for w, names in (("list", listed), ("alone", [a.benchmark]))}  # fmt: skip
        contenders = {}
        for w in ("list", "alone"):
            contenders[f"IMB {w}"] = (ran[w]["IMB"], env)
            contenders[f"IMB {w}, fixed"] = (ran[w]["IMB"], dict(env, **FIXED))
            contenders[f"commbench {w}"] = (ran[w]["imb2021"], env)
        got: dict[str, list[float]] = {k: [] for k in contenders}
        for r in range(a.rounds):
            for name in rotate(list(contenders), r):
                cmd, e = contenders[name]
                p = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=900)
                if p.returncode != 0:
                    sys.exit(f"{name} failed ({p.returncode}): {p.stderr[-2000:]}")
                rows = tables(p.stdout).get((a.benchmark, a.np), {})
                if a.size in rows:
                    got[name].append(time_of(rows[a.size]))
    os.unlink(lens)
    print("\n".join(mpi.header([a.np], f"peers: {mpis.shown(mpi.peers('imb'))}")))
    print(f"# {conditions()}; NP {a.np}; {a.benchmark} at {a.size} B; before it: {a.before}")
    print(f"# medians of {a.rounds} alternating rounds; fixed: MALLOC_MMAP_THRESHOLD_=131072")
    med = {k: median(v) for k, v in got.items() if v}
    for k, v in got.items():
        if v:
            print(f"{k:18s} {med[k]:9.1f} us   (range {min(v):.1f}-{max(v):.1f})")
    for where in ("list", "alone"):
        c = med.get(f"commbench {where}")
        i, f = med.get(f"IMB {where}"), med.get(f"IMB {where}, fixed")
        if c and i and f:
            print(f"commbench/IMB {where:5s}: {c / i:.2f} (IMB as it runs), {c / f:.2f} (fixed)")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
