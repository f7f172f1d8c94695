"""Start-up: the wall time of a tiny run, commbench against its floors (issue 16 item 7).

    python benchmarks/startup.py [--rounds R] [--np N] [--before CHECKOUT]

Contenders, in alternating rounds (each round a new order), medians printed:

  C PingPong          mpiexec -n N pingpong 0:1000 1:1000 2:1000 (benchmarks/c)
  python -c pass      one interpreter, no MPI (what this Python costs to start)
  python + mpi4py     mpiexec -n N python -c "from mpi4py import MPI" (MPI_Init)
  + numpy             the same and `import numpy` (what every rank needs for its buffers),
                      one BLAS thread as commbench's ranks have it
  commbench mpiexec   mpiexec -n N python -m commbench run PingPong -msglog 0:1 -o -
  commbench -n N      python -m commbench run -n N PingPong -msglog 0:1 -o - (self-launch)
  launcher alone      python -m commbench run -n N ... --mpiexec <a no-op that exits 3>,
                      the launcher's own share (imports, checks, spawn; the parse is the
                      job's rank 0's unless the run needs the launcher's: --store, --expect)

--before CHECKOUT adds the two commbench runs from another checkout (e.g. a
`git worktree add /tmp/before <commit>`), in the same rounds: before and
after side by side.

Bytecode is compiled first (a pip install does that; an editable checkout under
PYTHONDONTWRITEBYTECODE=1 would compile every module in every process, ~0.17 s).
"""

from __future__ import annotations

import argparse
import compileall
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cfloor import REPO, build, conditions, env_for, median, mpiexec, rotate


def timed(cmd: list[str], env: dict, ok=(0,), cwd: str | Path = REPO) -> float:
    t0 = time.perf_counter()
    # cwd: a neutral directory, so PYTHONPATH alone says which checkout runs (-m puts cwd first)
    p = subprocess.run(
        cmd, capture_output=True, text=True, timeout=300, env=env, cwd=cwd, check=False
    )
    t = time.perf_counter() - t0
    if p.returncode not in ok:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--before", help="another checkout of commbench, measured beside this one")
    a = ap.parse_args()
    compileall.compile_dir(str(REPO / "commbench"), quiet=1)
    if a.before:
        compileall.compile_dir(str(Path(a.before) / "commbench"), quiet=1)
    # one BLAS thread, as commbench gives its ranks (commands._single_threaded_blas): the
    # floor's numpy otherwise starts a thread pool per rank, ~60 ms of 2 ranks on 2 cores
    env = dict(env_for(a.np), OPENBLAS_NUM_THREADS="1")
    py, n, mx = sys.executable, str(a.np), mpiexec()
    tiny = ["PingPong", "-msglog", "0:1", "-o", "-"]
    with tempfile.TemporaryDirectory() as d:
        noop = Path(d) / "noop"  # an "mpiexec" that starts nothing: the launcher's time alone
        noop.write_text("#!/bin/sh\nexit 3\n")
        noop.chmod(0o755)
        contenders = {
            "C PingPong": (
                [mx, "-n", n, str(build("pingpong")), "0:1000", "1:1000", "2:1000"],
                (0,),
            ),
            "python -c pass": ([py, "-c", "pass"], (0,)),
            "python + mpi4py": ([mx, "-n", n, py, "-c", "from mpi4py import MPI"], (0,)),
            "+ numpy": ([mx, "-n", n, py, "-c", "from mpi4py import MPI; import numpy"], (0,)),
            "commbench mpiexec": ([mx, "-n", n, py, "-m", "commbench", "run", *tiny], (0,)),
            "commbench -n N": ([py, "-m", "commbench", "run", "-n", n, *tiny], (0,)),
            "launcher alone": (
                [py, "-m", "commbench", "run", "-n", n, "--mpiexec", str(noop), *tiny],
                (3,),
            ),
        }
        if a.before:
            old = {"PYTHONPATH": str(Path(a.before).resolve())}
            contenders["before: mpiexec"] = (
                [mx, "-n", n, py, "-m", "commbench", "run", *tiny],
                (0,),
                old,
            )
            contenders["before: -n N"] = ([py, "-m", "commbench", "run", "-n", n, *tiny], (0,), old)
        times: dict[str, list[float]] = {k: [] for k in contenders}
        for r in range(a.rounds):
            for name in rotate(list(contenders), r):
                cmd, ok, *own = contenders[name]  # own: a contender's environment (--before)
                times[name].append(timed(cmd, dict(env, **(own[0] if own else {})), ok, cwd=d))
    print(f"# {conditions()}; NP {a.np}; {a.rounds} alternating rounds, medians")
    c = median(times["C PingPong"])
    for name, v in times.items():
        print(f"{name:20s} {median(v):7.3f} s   x C {median(v) / c:5.2f}")
    floor = median(times["+ numpy"]) + median(times["python -c pass"])
    print(
        "floor of a self-launched Python run (launcher interpreter + ranks with mpi4py and "
        f"numpy): {floor:.3f} s; commbench's own share: "
        f"{median(times['commbench -n N']) - floor:.3f} s, of which the launcher alone "
        f"{median(times['launcher alone']) - median(times['python -c pass']):.3f} s"
    )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
