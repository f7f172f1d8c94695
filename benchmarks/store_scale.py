"""The results store at 10,000 runs: how long adding a run, a trend and a baseline selection
take, on SQLite and on PostgreSQL (the issue's bound: each under 1 s).

The runs are copies of one real results file (tests/data/mpis/mpich.json: 22 rows with 10
samples each, PingPong and Allreduce on the mpich wheel) with dates one hour apart and every
time scaled by a lognormal factor (sd 3%), so that each is a distinct document with plausible
values; they are added through commbench.store.runs.add, one transaction each, as `store add`
adds them. Then, each timed as the median of 5 (in-process) and once as the command a user
types (a new Python process, start-up included):

  add        one more run into the store of N runs
  baseline   `compare NEW --baseline STORE` (selection of the 5 latest comparable runs, their
             rows, the test)
  trend      `store trend benchmark=PingPong,last=200` (200 runs x 11 rows) and
             `store trend last=50` (every row)
  list       `store list last=20`

    python benchmarks/store_scale.py [--runs 10000] [--pg]   (--pg: also on a PostgreSQL
    server started as tests/support/pgserver.py starts one; root)

docs/results.md quotes its output.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from commbench.commands.compare import arguments as compare_args  # noqa: E402
from commbench.store import runs as store_runs  # noqa: E402
from commbench.store.db import Store  # noqa: E402
from commbench.views import results_file  # noqa: E402

TEMPLATE = ROOT / "tests" / "data" / "mpis" / "mpich.json"


def variant(doc: dict, i: int, rng: random.Random) -> dict:
    d = copy.deepcopy(doc)
    when = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(hours=i)
    d["metadata"]["date"] = when.strftime("%Y-%m-%dT%H:%M:%S+0000")
    f = rng.lognormvariate(0, 0.03)
    for r in d["records"]:
        for k, v in list(r["values"].items()):
            if k.startswith("t") and isinstance(v, float):
                r["values"][k] = v * f
        st = r["extra"].get("samples")
        if isinstance(st, dict):
            st["t_max_samples"] = [v * f for v in st["t_max_samples"]]
    return d


def fill(url: str, n: int, template: dict) -> float:
    rng = random.Random(1)
    started = time.perf_counter()
    with Store.open(url, write=True) as s:
        for i in range(n):
            d = variant(template, i, rng)
            store_runs.add(s, d, results_file.measurements(d), f"synthetic-{i}", "lab", ["nightly"])
            if i and i % 2000 == 0:
                print(f"#   {i} runs added ({time.perf_counter() - started:.0f} s)", flush=True)
    return time.perf_counter() - started


def cli(*args: str) -> float:
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "commbench", *args], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise SystemExit(f"commbench {' '.join(args[:3])}: {p.stderr[-500:]}")
    return time.perf_counter() - t


def timed(fn, k: int = 5) -> float:
    out = []
    for _ in range(k):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def measure(url: str, n: int, template: dict, work: Path) -> list[tuple[str, float, float]]:
    from commbench.store import gate, selector, trend

    new = variant(template, n + 10, random.Random(7))
    new_path = work / "new.json"
    new_path.write_text(json.dumps(new))
    extra = [variant(template, n + 20 + j, random.Random(j)) for j in range(6)]

    pending = iter(extra)

    def add_one():
        d = next(pending)
        with Store.open(url, write=True) as s:
            store_runs.add(s, d, results_file.measurements(d), "one more", "lab")

    def baseline():
        args = compare_args([str(new_path), "--baseline", url, "--system", "lab"])
        with Store.open(url) as s:
            chosen, _, _ = gate.choose(s, selector.parse(""), new, args)
            store_runs.row_values(s, [r["id"] for r in chosen])

    def trend_of(text):
        def go():
            with Store.open(url) as s:
                trend.compute(s, selector.parse(text))

        return go

    rows = [
        ("add one run", timed(add_one), cli("store", "add", str(work / "cli.json"), "--store", url))
    ]  # noqa: E501
    rows.append(("baseline (compare --baseline)", timed(baseline),
                 cli("compare", str(new_path), "--baseline", url, "--system", "lab")))  # fmt: skip
    for text in ("benchmark=PingPong,last=200", "last=50"):
        rows.append((f"trend {text}", timed(trend_of(text), 3),
                     cli("store", "trend", text, "--store", url)))  # fmt: skip
    rows.append(
        ("list last=20", timed(lambda: _list(url)), cli("store", "list", "last=20", "--store", url))
    )  # noqa: E501
    return rows


def _list(url: str) -> None:
    from commbench.store import selector

    with Store.open(url) as s:
        store_runs.find(s, selector.parse("last=20"))


def report(kind: str, n: int, fill_s: float, rows: list, size: str) -> None:
    per = fill_s / n * 1e3
    print(
        f"\n## {kind}: {n} runs of 22 rows, filled in {fill_s:.0f} s ({per:.1f} ms a run); {size}"
    )
    print(f"{'operation':<34}{'in-process [s]':>16}{'command [s]':>14}")
    for name, inproc, command in rows:
        print(f"{name:<34}{inproc:>16.3f}{command:>14.3f}")
    print(f"# command: start-up of `python -m commbench` included ({cli('--help'):.2f} s alone)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=10000)
    ap.add_argument("--pg", action="store_true")
    args = ap.parse_args()
    template = json.loads(TEMPLATE.read_text())
    print(f"# python benchmarks/store_scale.py --runs {args.runs}{' --pg' if args.pg else ''}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "cli.json").write_text(
            json.dumps(variant(template, args.runs + 99, random.Random(9)))
        )  # noqa: E501
        db = work / "results.db"
        fill_s = fill(str(db), args.runs, template)
        rows = measure(str(db), args.runs, template, work)
        report("SQLite", args.runs, fill_s, rows, f"file {db.stat().st_size / 2**20:.0f} MiB")
        if args.pg:
            from tests.support.pgserver import PgServer, ensure_installed

            why = ensure_installed()
            if why:
                print(f"# PostgreSQL not measured: {why}")
                return 0
            with PgServer() as server:
                url = server.create_database("scale")
                fill_s = fill(url, args.runs, template)
                rows = measure(url, args.runs, template, work)
                report("PostgreSQL", args.runs, fill_s, rows, "server on localhost")
    return 0


if __name__ == "__main__":
    sys.exit(main())
