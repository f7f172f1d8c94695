"""commbench's gpcnet family against GPCNeT 1.3's binaries on the same emulated hosts.

    python benchmarks/gpcnet_side_by_side.py [--hosts 4] [--ppn 1] [--rounds 3] [--time 10]
                                             [--load] [--only gpcnet|commbench]
                                             [--json PATH] [--timeout 600] [--peers DIR]

Builds --hosts emulated hosts (tests/support/netns.py: network namespaces, MPICH's OFI
netmod over TCP, no shared memory; needs root) and runs on them, each a fresh
job of hosts x ppn ranks, alternating which goes first every round (GPCNeT in
odd rounds, commbench in even ones): <peers>/network_test (unmodified GPCNeT
1.3; it refuses one host) and `python -m commbench run --suite gpcnet -time T
--gpcnet-layout`, which prints GPCNeT's table layout with its row names. With
--load: network_load_test (10 hosts or more: 20 % victims, 80 % congestors)
against `commbench run --suite gpcnet Congestion --gpcnet-layout`, default 10
hosts. Both texts are read by one parser (tests/support/gpcnet_table.py). GPCNeT gives
every test a fixed 10 s; commbench gets -time --time (default 10), so both run
as long.

The table shows per test the median over rounds of each tool's Avg and 99%
and commbench/GPCNeT of those medians, in the test's own units: for usec
(latency) above 1 is commbench slower, for MiB/s/rank (bandwidth) above 1 is
commbench faster; the load test's impact factors (loaded/isolated, X) are
compared the same way. Both sides get MPICH's throttled progress polling
(commbench.mpilib.THROTTLE: 2 cores carry all the ranks) and PYTHONPATH at
this checkout; GPCNeT also LD_LIBRARY_PATH at the mpich wheel's libmpi.so.12
(the binaries carry no search path). --json keeps every round's numbers.
Any failed or timed-out run stops the script with its output's tail, exit 1.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import NoReturn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import mpis  # noqa: E402
from cfloor import conditions, median, rotate  # noqa: E402

from commbench.mpilib import THROTTLE  # noqa: E402
from commbench.self_launcher import find_mpiexec  # noqa: E402
from tests.support import netns  # noqa: E402
from tests.support.gpcnet_table import parse  # noqa: E402

LIBMPI = "libmpi.so.12"
IMPACT = "Key Results: Congestion Impact Factor"


def libmpi_dir() -> str:
    """The folder of the libmpi.so.12 the GPCNeT binaries were linked with (the mpich wheel's):
    the library mpi4py loads, else this Python's LIBDIR or <prefix>/lib."""
    lib = mpis.current().libdir
    places = [lib, sysconfig.get_config_var("LIBDIR"), os.path.join(sys.prefix, "lib")]
    places += [os.path.join(sys.base_prefix, "lib")]
    for d in places:
        if d and (Path(d) / LIBMPI).is_file():
            return str(Path(d).resolve())
    sys.exit(f"no {LIBMPI} in {', '.join(str(d) for d in places if d)} (pip install mpich)")


def joined(first: str, rest: str | None) -> str:
    return os.pathsep.join(p for p in (first, rest) if p)


def commands(a, peers: Path, out: Path) -> dict[str, list[str]]:
    """mpiexec's arguments (hosts and launcher come from the cluster) for each tool."""
    job = ["-n", str(a.hosts * a.ppn), "-ppn", str(a.ppn), "-wdir", str(out)]
    binary = peers / ("network_load_test" if a.load else "network_test")
    suite = ["--suite", "gpcnet", *(["Congestion"] if a.load else [])]
    cb = [sys.executable, "-m", "commbench", "run", *suite, "-time", f"{a.time:g}"]
    return {
        "GPCNeT": [*job, str(binary)],
        "commbench": [*job, *cb, "--gpcnet-layout", "-o", str(out / "commbench.json")],
    }


def environments(libdir: str) -> dict[str, dict[str, str]]:
    both = {**THROTTLE, "PYTHONPATH": joined(str(REPO), os.environ.get("PYTHONPATH"))}
    ld = joined(libdir, os.environ.get("LD_LIBRARY_PATH"))
    return {"GPCNeT": {**both, "LD_LIBRARY_PATH": ld}, "commbench": both}


def text(b: bytes | str | None) -> str:
    return b.decode(errors="replace") if isinstance(b, bytes) else b or ""


def fail(tool: str, args: list[str], why: str, out: str, err: str) -> NoReturn:
    print(f"{tool} failed ({why}): mpiexec {shlex.join(args)}", file=sys.stderr)
    print(f"--- stdout (tail) ---\n{out[-3000:]}", file=sys.stderr)
    print(f"--- stderr (tail) ---\n{err[-3000:]}", file=sys.stderr)
    sys.exit(1)


def run_one(cluster, tool: str, args: list[str], env: dict, a, out: Path) -> dict:
    """One job of `tool` on the cluster: its parsed table, wall time, what it wrote."""
    t0 = time.perf_counter()
    try:
        p = cluster.mpiexec(args, netmod="ofi", timeout=a.timeout, env=env)
    except subprocess.TimeoutExpired as e:
        fail(tool, args, f"no end in {a.timeout} s", text(e.output), text(e.stderr))
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        fail(tool, args, f"exit status {p.returncode}", p.stdout, p.stderr)
    try:
        doc = parse(p.stdout)
    except ValueError as e:
        fail(tool, args, f"unreadable table: {e}", p.stdout, p.stderr)
    if not any(doc["tables"].values()):
        fail(tool, args, "no table rows in its output", p.stdout, p.stderr)
    doc.update(tool=tool, wall_s=round(wall, 1), stdout=p.stdout)
    files = {f.name: f.read_text() for f in sorted(out.glob("*congestion.dat"))}
    if files:  # network_load_test's split: which hosts ran the network tests
        doc["split"] = {k: v.split() for k, v in files.items()}
    if tool == "commbench" and (out / "commbench.json").is_file():
        recs = json.loads((out / "commbench.json").read_text()).get("records", [])
        doc["records"] = [
            {"benchmark": r.get("benchmark"), "gpcnet": (r.get("extra") or {}).get("gpcnet")}
            for r in recs
        ]
    return doc


def rounds(a, peers: Path, libdir: str) -> tuple[list[dict], dict]:
    """--rounds rounds, each tool once per round, first in turn; every run's parse."""
    tools = [t for t in ("GPCNeT", "commbench") if a.only in (None, t.lower())]
    envs = environments(libdir)
    runs: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="gpcnet-sbs-") as d, netns.Cluster(a.hosts) as c:
        shown = commands(a, peers, Path(d) / "ROUND-TOOL")
        for k in range(a.rounds):
            for tool in rotate(tools, k):
                out = Path(d) / f"{k + 1}-{tool}"
                out.mkdir()
                print(f"# round {k + 1}: {tool} ...", file=sys.stderr, flush=True)
                doc = run_one(c, tool, commands(a, peers, out)[tool], envs[tool], a, out)
                print(f"#   {doc['wall_s']} s", file=sys.stderr, flush=True)
                runs.append({"round": k + 1, **doc})
    return runs, {t: shown[t] for t in tools}


def values(runs: list[dict], tool: str) -> dict[tuple[str, str], dict[str, list]]:
    """(table, test) -> {"avg": [per round], "p99": [...], "units": ...} of one tool."""
    got: dict = {}
    for r in (r for r in runs if r["tool"] == tool):
        tables = dict(r["tables"])
        if r["impact"]:
            tables[IMPACT] = {k: {**v, "units": "X"} for k, v in r["impact"].items()}
        for title, rows in tables.items():
            for name, row in rows.items():
                cell = got.setdefault((title, name), {"avg": [], "p99": [], "units": row["units"]})
                cell["avg"].append(row.get("avg"))
                cell["p99"].append(row.get("p99"))
    return got


def summary(runs: list[dict]) -> list[dict]:
    """Per (table, test): the medians of both tools and commbench/GPCNeT of them."""
    g, c = values(runs, "GPCNeT"), values(runs, "commbench")
    out = []
    for key in [*g, *(k for k in c if k not in g)]:
        row = {"table": key[0], "test": key[1], "units": (g.get(key) or c[key])["units"]}
        for col in ("avg", "p99"):
            gv = median([v for v in (g.get(key) or {}).get(col, []) if v is not None])
            cv = median([v for v in (c.get(key) or {}).get(col, []) if v is not None])
            row[col] = {"GPCNeT": gv, "commbench": cv, "ratio": cv / gv if gv else float("nan")}
        out.append(row)
    return out


def meaning(units: str) -> str:
    if units == "usec":
        return ">1 = commbench slower"
    if units == "X":
        return ">1 = commbench saw more impact"
    return ">1 = commbench faster"


def cell(v: float, width: int, digits: int) -> str:
    return f"{v:>{width}.{digits}f}" if v == v else f"{'-':>{width}}"  # nan: not measured


def print_table(rows: list[dict]) -> None:
    head = f"{'test':>31} {'units':>10}"
    for col in ("Avg", "99%"):
        head += f" {'GPCNeT ' + col:>12} {'cb ' + col:>12} {'cb/G':>8}"
    title = None
    for r in rows:
        if r["table"] != title:
            title = r["table"]
            print(f"\n{title}\n{head}")
        line = f"{r['test']:>31} {r['units']:>10}"
        for col in ("avg", "p99"):
            v = r[col]
            line += f" {cell(v['GPCNeT'], 12, 1)} {cell(v['commbench'], 12, 1)}"
            line += f" {cell(v['ratio'], 8, 2)}"
        print(f"{line}  {meaning(r['units'])}", flush=True)


def header(a, peers: Path, libdir: str, shown: dict[str, list[str]], walls: dict) -> None:
    mpi = mpis.current()
    binary = peers / ("network_load_test" if a.load else "network_test")
    print(f"# MPI library: {mpi.first_line} ({mpi.library.path})")
    print(f"# GPCNeT: {binary} (1.3, unmodified; {mpi.linked(binary)})")
    print(f"# {conditions()}")
    print(
        f"# {a.hosts} emulated hosts (tests/support/netns.py, OFI over TCP, MPIR_CVAR_NOLOCAL=1), "
        f"{a.ppn} rank(s) per host; medians of {a.rounds} alternating rounds"
    )
    print(f"# both: {' '.join(f'{k}={v}' for k, v in THROTTLE.items())} PYTHONPATH={REPO}")
    print(f"# GPCNeT also: LD_LIBRARY_PATH={libdir}")
    for tool, args in shown.items():
        print(f"# {tool}: {find_mpiexec()} -launcher ssh ... -hosts h0,... {shlex.join(args)}")
        print(f"#   wall time per run: {', '.join(f'{w:.0f} s' for w in walls[tool])}")


def strict(x):
    """x with every NaN as None: strict JSON (jq and other readers refuse NaN)."""
    if isinstance(x, dict):
        return {k: strict(v) for k, v in x.items()}
    if isinstance(x, list):
        return [strict(v) for v in x]
    return None if isinstance(x, float) and x != x else x


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, help="emulated hosts (default 4; with --load 10)")
    ap.add_argument("--ppn", type=int, default=1, help="ranks per host (default 1)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--time", type=float, default=10, help="commbench's -time (GPCNeT's is 10)")
    ap.add_argument("--load", action="store_true", help="network_load_test against Congestion")
    ap.add_argument("--only", choices=("gpcnet", "commbench"), help="run one side only")
    ap.add_argument("--json", metavar="PATH", help="save every round's numbers here")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per mpiexec (600)")
    ap.add_argument("--peers", default=str(mpis.PEERS / "gpcnet"), help="GPCNeT's folder")
    a = ap.parse_args()
    a.hosts = a.hosts or (10 if a.load else 4)
    least = 10 if a.load else 2
    if a.hosts < least:
        ap.error(
            f"GPCNeT's {'network_load_test' if a.load else 'network_test'} needs {least}+ hosts"
        )
    return a


def main() -> None:
    a = parse_args()
    peers = Path(a.peers).absolute()
    binary = peers / ("network_load_test" if a.load else "network_test")
    if not binary.is_file():
        sys.exit(f"{binary} not found (GPCNeT 1.3, built against the mpich wheel)")
    why = netns.available()
    if why:
        sys.exit(f"no emulated hosts here: {why}")
    libdir = libmpi_dir()
    runs, shown = rounds(a, peers, libdir)
    walls = {t: [r["wall_s"] for r in runs if r["tool"] == t] for t in shown}
    header(a, peers, libdir, shown, walls)
    rows = summary(runs)
    print_table(rows)
    if a.json:
        doc = {"argv": sys.argv, "options": vars(a), "commands": shown, "runs": runs, "rows": rows}
        Path(a.json).write_text(json.dumps(strict(doc), indent=1))


if __name__ == "__main__":
    main()
