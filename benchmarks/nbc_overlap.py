"""Does the IMB-NBC overlap figure move as it should?  Ratios, not assertions.

Runs IMB-NBC overlap benchmarks (real MPI processes, `commbench run`) with the
computation per repetition scaled to F × t_pure (--nbc-cpu-factor) and prints,
per benchmark, size and F:

    cpu/pure    t_CPU / t_pure: the computation really is F times the communication
    overlap%    spec §7.7
    ovrl/sum    t_ovrl / (t_pure + t_CPU): 1.0 = nothing overlapped
    ovrl/max    t_ovrl / max(t_pure, t_CPU): 1.0 = perfectly overlapped
    wait/pure   (t_ovrl - t_CPU) / t_pure: the communication time left after the
                computation; 1.0 = it did not advance while computing, 0 = done

Without asynchronous progress MPICH advances a nonblocking collective only
inside MPI calls, so the communication waits for MPI_Wait: expect ovrl/sum
near 1 and overlap near 0 whatever F. With MPIR_CVAR_ASYNC_PROGRESS=1 a
progress thread moves it while the rank computes: ovrl/sum should fall toward
max/sum (0.8 at F=0.25 and F=4, 0.5 at F=1) when there are spare cores for the
progress threads. Each configuration is run --repeat times and the median
taken per row; the load average is printed because a busy node distorts all of it.

    python benchmarks/nbc_overlap.py                     # 2 ranks, both progress modes
    python benchmarks/nbc_overlap.py --np 4 --sizes 65536,1048576 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(
    np_: int,
    factor: float,
    sizes_file: Path,
    benches: list[str],
    iters: int,
    env: dict,
    timeout: float,
) -> list[dict]:
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "r.json"
        cmd = [
            sys.executable,
            "-m",
            "commbench",
            "run",
            "-n",
            str(np_),
            "-o",
            str(out),
            "-iter",
            str(iters),
            "-iter_policy",
            "off",
            "-msglen",
            str(sizes_file),
            "-thread_level",
            "multiple",
            "--nbc-cpu-factor",
            str(factor),
            *benches,
        ]
        p = subprocess.run(
            cmd,
            check=False,
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=timeout,
            env=dict(os.environ, **env),
        )
        if p.returncode != 0:
            raise SystemExit(
                f"commbench failed ({p.returncode}):\n{p.stdout[-2000:]}{p.stderr[-2000:]}"
            )
        return [r for r in json.loads(out.read_text())["records"] if r["status"] == "ok"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--factors", default="0.25,1,4")
    ap.add_argument("--sizes", default="4096,65536,1048576")
    ap.add_argument("--benchmarks", default="Iallreduce,Ialltoall,Ibcast")
    ap.add_argument("--iter", type=int, default=50, help="repetitions per size (-iter, policy off)")
    ap.add_argument(
        "--repeat", type=int, default=1, help="runs per configuration; the median is shown"
    )
    ap.add_argument(
        "--modes",
        default="default,async",
        help="default: MPICH as installed; async: MPIR_CVAR_ASYNC_PROGRESS=1",
    )
    ap.add_argument("--timeout", type=float, default=900)
    a = ap.parse_args()
    factors = [float(f) for f in a.factors.split(",")]
    benches = a.benchmarks.split(",")
    envs = {"default": {}, "async": {"MPIR_CVAR_ASYNC_PROGRESS": "1"}}
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(a.sizes.split(",")) + "\n")
        sizes_file = Path(f.name)
    print(
        f"# {a.np} ranks on {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at "
        f"start; -iter {a.iter}, median of {a.repeat}"
    )
    print(
        f"{'mode':<8}{'benchmark':<12}{'bytes':>9}{'F':>6}{'t_pure':>11}{'t_CPU':>11}{'t_ovrl':>11}"
        f"{'cpu/pure':>10}{'overlap%':>10}{'ovrl/sum':>10}{'ovrl/max':>10}{'wait/pure':>10}"
    )
    try:
        for mode in a.modes.split(","):
            table: dict[tuple, list[dict]] = {}
            for factor in factors:
                for _ in range(a.repeat):
                    for r in run(a.np, factor, sizes_file, benches, a.iter, envs[mode], a.timeout):
                        if r["np"] == a.np:
                            table.setdefault((r["benchmark"], r["bytes"], factor), []).append(
                                r["values"]
                            )
            for b in benches:
                for x in [int(s) for s in a.sizes.split(",")]:
                    for factor in factors:
                        vals = table.get((b, x, factor)) or table.get((b, None, factor))
                        if not vals:
                            continue
                        med = {
                            k: statistics.median(v[k] for v in vals)
                            for k in ("t_pure", "t_cpu", "t_ovrl", "overlap")
                        }
                        ratios = [
                            (
                                v["t_cpu"] / v["t_pure"],
                                v["t_ovrl"] / (v["t_pure"] + v["t_cpu"]),
                                v["t_ovrl"] / max(v["t_pure"], v["t_cpu"]),
                                (v["t_ovrl"] - v["t_cpu"]) / v["t_pure"],
                            )
                            for v in vals
                        ]
                        cp, osum, omax, wait = (statistics.median(c) for c in zip(*ratios))
                        print(
                            f"{mode:<8}{b:<12}{x:>9}{factor:>6g}{med['t_pure']:>11.1f}{med['t_cpu']:>11.1f}"
                            f"{med['t_ovrl']:>11.1f}{cp:>10.2f}{med['overlap']:>10.1f}{osum:>10.2f}{omax:>10.2f}{wait:>10.2f}"
                        )
            sys.stdout.flush()
    finally:
        sizes_file.unlink()
    print(f"# load average {os.getloadavg()[0]:.1f} at the end; times in usec")
    return 0


if __name__ == "__main__":
    sys.exit(main())
