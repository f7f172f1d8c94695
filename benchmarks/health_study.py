"""How often `commbench health --slurm-drain` drains the right node, and never a good one
(docs/health.md quotes it).

On the real 4-node Slurm of tests/support/slurm_cluster.py (a network namespace a node, one
machine), alternating: a run with one node's link limited by tbf (the node drawn in turn,
the rate given, known to this script and not to commbench) and a run with every link
alike. After each run the drained nodes are read back from Slurm (sinfo) and resumed.

    python benchmarks/health_study.py [--runs 10] [--nodes 4] [--rate-mbit 200]

Prints each run (which node was slowed, what commbench named and drained, its exit status,
wall time) and the totals: slowed node drained in N of M runs, good nodes drained in K.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support import slurm, slurm_cluster  # noqa: E402 - this checkout's tests first


def one(c, n: int, slowed: str | None, rate: float, tmp: Path) -> dict:
    out = tmp / f"h{time.monotonic_ns()}.json"
    env = c.env(PYTHONPATH=str(REPO), MPIR_CVAR_CH4_PROGRESS_THROTTLE="1")
    if slowed:
        c.limit(slowed, rate)
    started = time.monotonic()
    try:
        p = subprocess.run(
            ["srun", "--mpi=pmi2", "-N", str(n), "--ntasks-per-node=1", sys.executable, "-m",
             "commbench", "health", "--slurm-drain", "--timeout", "60", "-o", str(out)],
            capture_output=True, text=True, timeout=300, env=env,
        )  # fmt: skip
    finally:
        if slowed:
            c.unlimit(slowed)
    wall = time.monotonic() - started
    nodes = [f"h{i}" for i in range(n)]
    states = dict(zip(nodes, slurm.node_states(c.env())))
    drained = sorted(h for h, s in states.items() if s.startswith("drain"))
    for h in drained:
        subprocess.run(["scontrol", "update", f"nodename={h}", "state=resume"], env=c.env(),
                       capture_output=True, timeout=30)  # fmt: skip
    named = []
    if out.exists():
        verdicts = json.loads(out.read_text()).get("health", {}).get("verdicts", {})
        named = sorted(h for h, v in verdicts.items() if v["verdict"] == "slow")
    return {"slowed": slowed, "named": named, "drained": drained, "rc": p.returncode, "s": wall}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10, help="of each kind")
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--rate-mbit", type=float, default=200)
    a = ap.parse_args()
    why = slurm_cluster.available()
    if why:
        sys.exit(f"no emulated Slurm here: {why}")
    got = []
    with tempfile.TemporaryDirectory() as tmp, slurm_cluster.SlurmCluster(a.nodes) as c:
        for i in range(a.runs):
            for slowed in (f"h{i % a.nodes}", None):  # alternating: slowed, then alike
                r = one(c, a.nodes, slowed, a.rate_mbit, Path(tmp))
                got.append(r)
                print(
                    f"slowed {r['slowed'] or '-':<3} named {','.join(r['named']) or '-':<8} "
                    f"drained {','.join(r['drained']) or '-':<8} exit {r['rc']} {r['s']:.0f} s",
                    flush=True,
                )
    slowed = [r for r in got if r["slowed"]]
    right = sum(r["drained"] == [r["slowed"]] for r in slowed)
    wrong = sum(len([h for h in r["drained"] if h != r["slowed"]]) for r in got)
    print(
        f"{a.nodes} nodes, tbf {a.rate_mbit:g} Mbit/s on one: the slowed node drained alone in "
        f"{right} of {len(slowed)} runs; good nodes drained: {wrong} (in {len(got)} runs, "
        f"{len(got) - len(slowed)} with every link alike); {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
