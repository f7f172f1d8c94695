"""How often each library defect of repro/ shows on this machine, quiet and loaded.

A defect of an MPI library that commbench names (mpi_defects.KNOWN_DEFECTS, the Intel MPI
mt-reduce hang the launcher steps around) is shown by a C reproducer in repro/, built with
that library's own mpicc and run with its own mpiexec (tests/support/mpi_envs.py installs the
MPIs). Some defects depend on timing: the tests therefore print whether a defect showed,
and this script measures how often, in alternating rounds of a quiet machine and one with
every core kept busy by a plain busy loop (`sh -c 'while :; do :; done'`, one per core),
so docs/mpis.md can say "shown in N of M runs here, under which load".

    python benchmarks/defect_rates.py [--runs 10] [--timeout 10] [--only impi_mt_reduce]

Prints one line per reproducer, MPI and setting: the outcomes of its quiet and its loaded
runs (passed, defect, hung, other), with the CPU model and core count, since a timing
defect that shows on one machine may not on another.
"""

from __future__ import annotations

import argparse
import collections
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support import mpi_envs  # noqa: E402 - this checkout's tests and commbench first

# (reproducer, MPI (None: the mpich wheel), processes, variables, the outcome that is the defect)
CASES = [
    ("impi_mt_reduce.c", "impi-wheel", 4, {}, "hung"),
    ("impi_mt_reduce.c", "impi-wheel", 4, {"I_MPI_COLL_INTRANODE": "pt2pt"}, "hung"),
    ("impi_mt_reduce.c", None, 4, {}, "hung"),
    ("scatter_init_restart.c", "impi-wheel", 2, {}, "defect"),
    ("scatter_init_restart.c", "debian-mpich", 2, {}, "defect"),
    ("scatter_init_restart.c", None, 2, {}, "defect"),
    ("win_allocate_offset.c", "debian-mpich", 2, {}, "defect"),
    ("romio_large_count_view.c", "debian-mpich", 2, {}, "defect"),
]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


class Busy:
    """One plain busy loop per core while inside."""

    def __enter__(self):
        n = os.cpu_count() or 1
        self.procs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(n)]
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10, help="runs per load (default 10)")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds to a hang (10)")
    ap.add_argument("--only", default="", help="reproducers whose name contains this")
    a = ap.parse_args()
    envs: dict[str | None, mpi_envs.MpiEnv | None] = {None: None}
    cases = [c for c in CASES if a.only in c[0]]
    for name in {c[1] for c in cases} - {None}:
        try:
            envs[name] = mpi_envs.get(name)
        except mpi_envs.Unavailable as e:
            print(f"# {name}: cannot be installed here ({e}); its cases are left out")
    cases = [c for c in cases if c[1] in envs]
    outcomes: dict[tuple, dict[str, collections.Counter]] = {
        (src, mpi, np_, tuple(extra.items())): {
            "quiet": collections.Counter(),
            "busy": collections.Counter(),
        }
        for src, mpi, np_, extra, _ in cases
    }
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.runs):  # alternating rounds: quiet, then loaded
            for load in ("quiet", "busy"):
                ctx = Busy() if load == "busy" else _Nothing()
                with ctx:
                    for src, mpi, np_, extra, _ in cases:
                        r = mpi_envs.reproduce(envs[mpi], src, Path(tmp), np_, a.timeout, **extra)
                        outcomes[(src, mpi, np_, tuple(extra.items()))][load][r.outcome] += 1
                        if r.outcome == "other":  # never expected: what it printed
                            print(f"# {mpi} {load}: {r}", file=sys.stderr)
            print(f"# round {i + 1} of {a.runs} done", file=sys.stderr, flush=True)
    print(f"# {cpu_model()}, {os.cpu_count()} cores; {a.runs} runs per load, alternating rounds;")
    print(f"# loaded: one busy loop per core; a run past {a.timeout:g} s is hung")
    print(f"{'reproducer':26} {'MPI':14} {'np':>2} {'setting':30}", end=" ")
    print(f"{'defect quiet':>13} {'defect loaded':>14}  outcomes")
    for src, mpi, np_, extra, defect in cases:
        c = outcomes[(src, mpi, np_, tuple(extra.items()))]
        setting = ",".join(f"{k}={v}" for k, v in extra.items()) or "-"
        q, b = c["quiet"], c["busy"]
        detail = "; ".join(
            f"{load}: " + ", ".join(f"{k} {v}" for k, v in sorted(c[load].items()))
            for load in ("quiet", "busy")
        )
        print(
            f"{src.removesuffix('.c'):26} {mpi or 'mpich-wheel':14} {np_:>2} {setting:30} "
            f"{q[defect]:>6} of {a.runs:<4} {b[defect]:>7} of {a.runs:<4}  {detail}"
        )
    return 0


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


if __name__ == "__main__":
    sys.exit(main())
