"""`commbench compare` as a regression gate: its false alarms and its detections, measured.

1. Same configuration: N pairs of runs (A1 B1 A2 B2 …, alternating, each with
   --samples K), each pair compared at --threshold; prints every pair's exit status
   and the rows it called slower or faster, then the false-alarm rate over rows
   (rows called slower / rows tested) and in how many pairs the gate passed.
2. Injected slowdown: T trials of a baseline against a slowed run. With root and
   network namespaces (tests/support/netns.py): 2 emulated hosts, the baseline at full
   speed, then h1's link rate-limited by tbf; only sizes that outrun the limit
   are slowed, and they are the ones the gate must name. Elsewhere: shared memory
   against MPIR_CVAR_NOLOCAL=1 (every message through the TCP netmod), which slows
   every row.

    python benchmarks/gate_false_alarms.py [--pairs 10] [--samples 20] [--threshold 10%]
                                           [--trials 3]

docs/statistics.md shows its output.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import netns  # noqa: E402

SAME = ["PingPong", "Sendrecv", "-msglog", "0:12"]
# 0 B and 8 KiB … 64 KiB: the latter outrun 100 Mbit/s (12.5 MB/s), 0 B does not
SLOW_SIZES = ["PingPong", "-msglog", "13:16", "-iter", "20"]
SLOWED_FROM = 8192
RATE_MBIT = 100
NOLOCAL = {"MPIR_CVAR_NOLOCAL": "1", "MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": "tcp"}


def commbench(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    e = dict(os.environ, **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "commbench", *args],
        capture_output=True,
        text=True,
        env=e,
        cwd=ROOT,
        timeout=600,
        check=False,
    )


def run_local(out: Path, args: list[str], samples: int, env: dict | None = None) -> None:
    p = commbench("run", "-n", "2", *args, "--samples", str(samples), "-o", str(out), env=env)
    if p.returncode != 0:
        sys.exit(f"run failed ({p.returncode}): {p.stderr[-2000:]}")


def gate(old: Path, new: Path, threshold: str) -> tuple[int, dict]:
    p = commbench("compare", str(old), str(new), "--threshold", threshold, "--json", "-")
    if p.returncode not in (0, 1):
        notes = json.loads(p.stdout)["notes"] if p.stdout.startswith("{") else []
        sys.exit(f"compare failed ({p.returncode}): {p.stderr[-2000:]} {notes}")
    return p.returncode, json.loads(p.stdout)


def _named(doc: dict, verdict: str) -> list[str]:
    return [f"{r['benchmark']} {r['bytes']}" for r in doc["rows"] if r["verdict"] == verdict]


def same_config(tmp: Path, pairs: int, samples: int, threshold: str) -> None:
    print(
        f"## same configuration: {pairs} pairs of "
        f"`commbench run -n 2 {' '.join(SAME)} --samples {samples}`, alternating, compared with "
        f"--threshold {threshold}\n"
    )
    print(
        f"{'pair':>4} {'exit':>4} {'tested':>6} {'slower':>6} "
        f"{'faster':>6}  rows called slower / faster"
    )
    passed = tested = slower = faster = 0
    for i in range(pairs):
        a, b = tmp / f"a{i}.json", tmp / f"b{i}.json"
        run_local(a, SAME, samples)
        run_local(b, SAME, samples)
        rc, doc = gate(a, b, threshold)
        s = doc["summary"]
        passed += rc == 0
        tested, slower, faster = tested + s["tested"], slower + s["slower"], faster + s["faster"]
        print(
            f"{i + 1:>4} {rc:>4} {s['tested']:>6} {s['slower']:>6} {s['faster']:>6}  "
            f"{', '.join(_named(doc, 'slower')) or '-'} / {', '.join(_named(doc, 'faster')) or '-'}"
        )
    print(
        f"\nexit 0 in {passed} of {pairs} pairs; false alarms over rows: {slower} of {tested} "
        f"tested rows called slower ({100 * slower / max(tested, 1):.1f} %), {faster} called "
        f"faster ({100 * faster / max(tested, 1):.1f} %)\n"
    )


def _emulated(c, out: Path, samples: int) -> None:
    p = c.mpiexec(
        [
            "-n",
            "2",
            "-ppn",
            "1",
            sys.executable,
            "-m",
            "commbench",
            "run",
            *SLOW_SIZES,
            "--samples",
            str(samples),
            "--timeout",
            "120",
            "-o",
            str(out),
        ],
        netmod="ofi",
        timeout=300,
        env={"PYTHONPATH": str(ROOT)},
    )
    if p.returncode != 0:
        sys.exit(f"emulated run failed ({p.returncode}): {p.stderr[-2000:]}")


def slowdown(tmp: Path, trials: int, samples: int, threshold: str) -> None:
    why = netns.available()
    if why is None:
        print(
            "## injected slowdown: 2 emulated hosts (tests/support/netns.py, OFI over TCP), "
            f"`{' '.join(SLOW_SIZES)} --samples {samples}`, baseline at full speed against h1's "
            f"link limited to {RATE_MBIT} Mbit/s (tbf), {trials} trials\n"
        )
    else:
        print(
            f"## injected slowdown ({why}: no emulated hosts): shared memory against {NOLOCAL}, "
            f"`{' '.join(SAME)} --samples {samples}`, {trials} trials\n"
        )
    print(f"{'trial':>5} {'exit':>4} {'tested':>6}  rows named (new/old)")
    caught = extra = 0
    for i in range(trials):
        base, slow = tmp / f"base{i}.json", tmp / f"slow{i}.json"
        if why is None:
            with netns.Cluster(2) as c:
                _emulated(c, base, samples)
                c.limit("h1", RATE_MBIT)
                _emulated(c, slow, samples)
        else:
            run_local(base, SAME, samples)
            run_local(slow, SAME, samples, env=NOLOCAL)
        rc, doc = gate(base, slow, threshold)
        slowed = {
            r["label"] for r in doc["rows"] if why is not None or (r["bytes"] or 0) >= SLOWED_FROM
        }
        caught += rc == 1 and slowed <= set(doc["regressions"])
        extra += len(set(doc["regressions"]) - slowed)
        named = ", ".join(
            f"{r['bytes']} ({r['ratio']:.1f}x)" for r in doc["rows"] if r["regression"]
        )
        print(f"{i + 1:>5} {rc:>4} {doc['summary']['tested']:>6}  {named or '-'}")
    print(
        f"\nexit 1 with every slowed row named in {caught} of {trials} trials; {extra} rows named "
        "that the slowdown does not reach\n"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--threshold", default="10%")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--skip-slowdown", action="store_true")
    ap.add_argument("--keep", metavar="DIR", help="keep the results files in DIR")
    a = ap.parse_args()
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="gate-") as d:
        where = Path(a.keep or d)
        where.mkdir(parents=True, exist_ok=True)
        same_config(where, a.pairs, a.samples, a.threshold)
        if not a.skip_slowdown:
            slowdown(where, a.trials, a.samples, a.threshold)
    print(f"({time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
