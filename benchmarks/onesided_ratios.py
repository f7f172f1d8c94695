"""One-sided ratios measured in one sitting: does a put progress passively, and what does
aggregation save?

    python benchmarks/onesided_ratios.py [--np 2] [--msglog 16] [--time 2] [--async]

Runs, on 2 processes of this machine:
  * IMB-RMA Truly_passive_put   -> t_ovrl / t_pure per size (about 1: the put completed
    while the target computed outside MPI; about 2: it waited for the target to
    re-enter MPI, i.e. no passive progress), and the same against the target's
    real computation time t_cpu (the CPU kernel's smallest unit of work can
    exceed a short t_pure); see also benchmarks/passive_probe.py;
  * IMB-RMA Unidir_put and IMB-EXT Unidir_Put -> NON-AGGREGATE / AGGREGATE time per
    size (how much one completion call per operation costs over one per batch).
--async repeats Truly_passive_put with MPICH's progress thread
(MPIR_CVAR_ASYNC_PROGRESS=1, -thread_level multiple).

Each ratio compares records of one run; absolute numbers depend on the machine
and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from commbench.self_launcher import find_mpiexec


def run(np_: int, args: list[str], env: dict | None = None) -> list[dict]:
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "r.json"
        cmd = [
            find_mpiexec(),
            "-n",
            str(np_),
            sys.executable,
            "-m",
            "commbench",
            "run",
            *args,
            "-o",
            str(out),
        ]
        p = subprocess.run(
            cmd,
            check=False,
            capture_output=True,
            text=True,
            env=dict(os.environ, **(env or {})),
            timeout=1800,
        )
        if p.returncode != 0:
            sys.exit(f"failed: {' '.join(cmd)}\n{p.stderr[-2000:]}")
        return [r for r in json.loads(out.read_text())["records"] if r["status"] == "ok"]


def passive(recs: list[dict], title: str) -> None:
    print(f"\n{title}")
    print("  t_cpu: what the target really computed per repetition (recorded, not printed by IMB)")
    print(
        "  ovrl/(pure+cpu) near 1: no overlap; "
        "ovrl/max(pure,cpu) near 1: the put progressed passively"
    )
    print(
        f"{'bytes':>10} {'t_pure[us]':>12} {'t_ovrl[us]':>12} {'t_cpu[us]':>12} {'ovrl/pure':>10}"
        f" {'ovrl/(pure+cpu)':>16} {'ovrl/max':>10}"
    )
    for r in recs:
        v = r["values"]
        pure, ovrl, cpu = v["t_pure"], v["t_ovrl"], v.get("t_cpu", 0.0)
        print(
            f"{r['bytes']:>10} {pure:>12.2f} {ovrl:>12.2f} {cpu:>12.2f} {ovrl / pure:>10.2f}"
            f" {ovrl / (pure + cpu):>16.2f} {ovrl / max(pure, cpu):>10.2f}"
        )


def aggregation(recs: list[dict], name: str) -> None:
    by = {}
    for r in recs:
        if r["benchmark"] == name:
            by.setdefault(r["bytes"], {})[r["mode"]] = r["values"]["t_max"]
    print(f"\n{name}: one completion per operation vs one per batch")
    print(f"{'bytes':>10} {'non-agg[us]':>12} {'agg[us]':>12} {'non/agg':>10}")
    for x, m in sorted(by.items()):
        if "AGGREGATE" in m and "NON-AGGREGATE" in m:
            print(
                f"{x:>10} {m['NON-AGGREGATE']:>12.2f} {m['AGGREGATE']:>12.2f} "
                f"{m['NON-AGGREGATE'] / m['AGGREGATE']:>10.2f}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--msglog", default="16")
    ap.add_argument("--time", default="2")
    ap.add_argument("--async", dest="use_async", action="store_true")
    a = ap.parse_args()
    common = ["-msglog", a.msglog, "-time", a.time, "-iter", "1000,40,100"]
    passive(
        run(a.np, ["--suite", "rma", *common, "Truly_passive_put"]),
        "Truly_passive_put (MPICH default progress)",
    )
    if a.use_async:
        recs = run(
            a.np,
            ["--suite", "rma", *common, "-thread_level", "multiple", "Truly_passive_put"],
            {"MPIR_CVAR_ASYNC_PROGRESS": "1"},
        )
        passive(recs, "Truly_passive_put (MPIR_CVAR_ASYNC_PROGRESS=1, MPI_THREAD_MULTIPLE)")
    aggregation(run(a.np, ["--suite", "rma", *common, "Unidir_put"]), "Unidir_put")
    aggregation(run(a.np, ["--suite", "ext", *common, "Unidir_Put"]), "Unidir_Put")


if __name__ == "__main__":
    main()
