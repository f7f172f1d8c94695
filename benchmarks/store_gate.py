"""`commbench compare NEW --baseline STORE`: the between-run gate's false alarms and detections.

1. False alarms (--parts false): --seed-runs S stored runs, then --runs N more, identical, each
   stored and compared against the S runs before it (`compare NEW --baseline DB`, default
   last=5) and, beside it, the two-file gate against the run just before it (`compare PREV
   NEW`), both at --threshold. Settings: shm (2 ranks, shared memory) and hosts (2 emulated
   hosts, tests/support/netns.py, OFI over TCP). Prints every comparison, the flagged rates and the
   between-run spread of the rows (sd of the baseline's log-values, 95% band).
2. Detection (--parts detect, emulated hosts): S baseline runs at full speed, stored with a tag;
   then h1's link (i) limited by tbf to cut the measured 64 KiB PingPong bandwidth by about 20%
   and (ii) given about +50% small-message latency (netem delay of half the measured PingPong
   latency each way; without netem in the kernel: extra bridge hops between h1 and the switch,
   as many as make +50%), --detect-runs runs each, not stored, compared against the tagged
   baseline (`--baseline DB:tag=...`). Prints each run's verdict and the rows it names.

    python benchmarks/store_gate.py [--runs 20] [--seed-runs 5] [--samples 8] [--threshold 5%]
        [--settings shm,hosts] [--parts false,detect] [--detect-runs 10] [--keep DIR]

Repetitions are fixed (-iter, -iter_policy off) so -time is only the ceiling of a row's samples
and of a sweep (15 x -time for -msglog 0:16): every row is measured unless a run is slowed
several times over. Needs root for the emulated hosts; without it only shm runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cfloor import compare_json  # noqa: E402

from tests.support import netns  # noqa: E402

WORKLOAD = ["PingPong", "Sendrecv", "Allreduce", "-msglog", "0:16"]
ITER = {"shm": 200, "hosts": 50}  # repetitions per sample: a row's 8 samples well under -time
BASE_TAG = "detect-base"
# tbf bucket as Cluster.limit's: with one smaller than a 64 KiB message every message waits for
# tokens, each wait a timer wakeup of tens of us here (cuts of 70-95% at any rate); with 64 KB
# the rate sets how often a message finds the bucket short
BURST_KB = 64
LARGE_FROM = 16384  # rows the rate limit reaches: messages beyond the bucket
SMALL_UPTO = 1024  # rows a latency change dominates
SMALL = [0, 1, 2, 4, 8, 16, 32, 64]  # the sizes of "PingPong 0-64 B"


def sh(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


class Runner:
    """Runs the workload in one setting: shm on this machine or across c's emulated hosts."""

    def __init__(self, a: argparse.Namespace, setting: str, cluster=None):
        self.a, self.setting, self.c = a, setting, cluster

    def options(self) -> list[str]:
        return [
            "--samples",
            str(self.a.samples),
            "-time",
            str(self.a.time),
            "-iter",
            str(ITER[self.setting]),
            "-iter_policy",
            "off",
        ]

    def command(self, bench: list[str]) -> str:
        pre = "commbench run -n 2" if self.c is None else "mpiexec -n 2 -ppn 1 commbench run"
        return f"{pre} {' '.join(bench + self.options())}"

    def run(self, out: Path, bench: list[str] = WORKLOAD, store: list[str] = ()) -> dict:
        argv = [*bench, *self.options(), "--timeout", "120", "-o", str(out), *store]
        if self.c is None:
            p = subprocess.run(
                [sys.executable, "-m", "commbench", "run", "-n", "2", *argv],
                capture_output=True,
                text=True,
                cwd=ROOT,
                timeout=900,
                check=False,
            )
        else:
            p = self.c.mpiexec(
                ["-n", "2", "-ppn", "1", sys.executable, "-m", "commbench", "run", *argv],
                netmod="ofi",
                timeout=900,
                env={"PYTHONPATH": str(ROOT)},
            )
        if p.returncode != 0:
            sys.exit(f"run failed ({p.returncode}): {p.stderr[-2000:]}")
        return json.loads(out.read_text())


def compare(*args: str) -> tuple[int, dict]:
    rc, doc, err = compare_json(*args)
    if doc is None:  # no JSON: an internal error
        doc = {"errors": [err.strip().splitlines()[-1] if err.strip() else "no output"]}
    doc.setdefault("rows", [])
    return rc, doc


def row_us(doc: dict, bench: str, size: int) -> float | None:
    """A row's per-run value as the store takes it: the median of its samples."""
    for r in doc["records"]:
        if r["benchmark"] == bench and r["bytes"] == size and r["status"] == "ok":
            s = r["extra"].get("samples") or {}
            vals = next((v for k, v in s.items() if k.endswith("_samples")), None)
            return statistics.median(vals) if vals else r["values"]["t"]
    return None


def med(values: list) -> float:
    """The median of the values measured (None: a row not measured); nan when none."""
    got = [v for v in values if v is not None and v == v]
    return statistics.median(got) if got else float("nan")


def not_ok(doc: dict) -> int:
    return sum(1 for r in doc["records"] if r["status"] != "ok")


def named(doc: dict, most: int = 12) -> str:
    rows = [r for r in doc["rows"] if r.get("regression")]
    text = ", ".join(f"{_short(r)} {r['ratio']:.2f}x" for r in rows[:most]) or "-"
    return text + (f" and {len(rows) - most} more" if len(rows) > most else "")


def _short(r: dict) -> str:
    return f"{r['benchmark'][:4]} {r['bytes']}"


def _why(rc: int, doc: dict) -> str:
    return "" if rc in (0, 1) else " refused: " + "; ".join(doc.get("errors") or ["?"])[:150]


# -- part 1: false alarms --------------------------------------------------------------
def false_alarms(a, runner: Runner, tmp: Path) -> None:
    db = tmp / f"false-{runner.setting}.db"
    store = [f"--store={db}"]
    print(f"## false alarms, {runner.setting}: {a.seed_runs} seed + {a.runs} judged runs of")
    print(f"   `{runner.command(WORKLOAD)} --store={db.name}`")
    print(
        f"   between: `commbench compare NEW.json --baseline {db.name} --threshold {a.threshold}`"
    )
    print("   confirm: the same with --confirm (the latest stored run must lie above the band too)")
    print(f"   two-file: `commbench compare PREV.json NEW.json --threshold {a.threshold}`\n")
    prev = None
    for i in range(a.seed_runs):
        prev = tmp / f"{runner.setting}-seed{i}.json"
        runner.run(prev, store=store)
    print(
        f"{'run':>3} {'!ok':>3} {'betw':>4}  {'rows flagged (between)':<40} {'conf':>4} "
        f"{'2file':>5}  rows"
    )
    tally = {"between": [], "confirm": [], "files": []}
    bands = []
    for i in range(a.runs):
        new = tmp / f"{runner.setting}-run{i}.json"
        doc = runner.run(new, store=store)
        rb, db_doc = compare(str(new), "--baseline", str(db), "--threshold", a.threshold)
        rc, _ = compare(str(new), "--baseline", str(db), "--confirm", "--threshold", a.threshold)
        rf, f_doc = compare(str(prev), str(new), "--threshold", a.threshold)
        tally["confirm"].append(rc)
        tally["between"].append(rb)
        tally["files"].append(rf)
        bands += [r for r in db_doc["rows"] if r.get("tested")]
        print(
            f"{i + 1:>3} {not_ok(doc):>3} {rb:>4}  {named(db_doc) + _why(rb, db_doc):<40} "
            f"{rc:>4} {rf:>5}  {named(f_doc) + _why(rf, f_doc)}",
            flush=True,
        )
        prev = new
    gates = (("between", "between-run gate"), ("confirm", "between-run gate --confirm"),
             ("files", "two-file gate"))  # fmt: skip
    for k, name in gates:
        v = tally[k]
        print(
            f"{name}: flagged (exit 1) {v.count(1)} of {len(v)}, refused (exit 2) "
            f"{sum(1 for x in v if x not in (0, 1))}"
        )
    spread_table(bands)


def spread_table(rows: list[dict]) -> None:
    """The between-run spread of the tested rows over all comparisons."""
    if not rows:
        print("(no tested rows)\n")
        return
    print("between-run spread (sd of the baseline runs' log-values; 95% band of one more run):")
    print(f"{'':<10} {'sd med':>7} {'sd max':>7} {'band med':>13} {'band max hi':>11}  widest row")
    groups: dict[str, list[dict]] = {"all": rows}
    for r in rows:
        groups.setdefault(r["benchmark"], []).append(r)
    for name, rs in groups.items():
        sd = [r["spread"] for r in rs]
        lo = statistics.median(r["ci"][0] for r in rs)
        hi = statistics.median(r["ci"][1] for r in rs)
        top = max(rs, key=lambda r: r["spread"])
        print(
            f"{name:<10} {statistics.median(sd):>7.3f} {max(sd):>7.3f} {lo:>6.2f}-{hi:<6.2f} "
            f"{max(r['ci'][1] for r in rs):>11.3g}  {_short(top)}"
        )
    print()


# -- part 2: detection ---------------------------------------------------------------------
def detection(a, tmp: Path) -> None:
    db = tmp / "detect.db"
    with netns.Cluster(2) as c:
        runner = Runner(a, "hosts", c)
        base = [
            runner.run(tmp / f"base{i}.json", store=[f"--store={db}", "--tag", BASE_TAG])
            for i in range(a.seed_runs)
        ]
        bw = med([65536 / v for v in (row_us(d, "PingPong", 65536) for d in base) if v])
        lat = med([med([row_us(d, "PingPong", s) for s in SMALL]) for d in base])
        print(
            f"## detection, 2 emulated hosts: {a.seed_runs} baseline runs of "
            f"`{runner.command(WORKLOAD)} --store={db.name} --tag {BASE_TAG}`; each degraded "
            f"run (not stored) by `commbench compare NEW.json --baseline "
            f"{db.name}:tag={BASE_TAG} --threshold {a.threshold}`"
        )
        print(
            f"   measured at full speed (median of the baseline runs): PingPong 64 KiB "
            f"{bw:.0f} MB/s, PingPong 0-64 B {lat:.2f} us\n"
        )
        rate = calibrate_rate(c, runner, bw, tmp)
        degraded(a, runner, tmp, db, "bandwidth", lambda r: r["bytes"] >= LARGE_FROM, rate)
        c.unlimit("h1")
        how, undo = add_latency(c, runner, lat, tmp)
        try:
            degraded(a, runner, tmp, db, "latency", lambda r: r["bytes"] <= SMALL_UPTO, how)
        finally:
            undo()


def calibrate_rate(c, runner: Runner, bw: float, tmp: Path) -> str:
    """A tbf rate on h1's link that cuts the 64 KiB PingPong bandwidth bw (MB/s, the baseline's)
    by about 20%. PingPong keeps each direction busy half the time: a bucket refilled at R
    between two messages bites only below bw / 2, and then PingPong moves 2 R. So it starts at
    0.8 bw / 2, then moves by the cut two runs of the workload measure (bisects once bracketed)."""
    rate, tried, lo, hi = 0.4 * bw * 8, [], 0.0, 0.0  # Mbit/s; lo cuts too much, hi too little
    for step in range(5):
        c.limit("h1", rate_mbit=round(rate), burst_kb=BURST_KB)
        got = 65536 / probe(runner, tmp / f"cal{step}", WORKLOAD, [65536])
        cut = 1 - got / bw
        print(
            f"   calibration: tbf {rate:.0f} Mbit/s: 64 KiB PingPong {got:.0f} MB/s "
            f"(baseline {bw:.0f}), cut {cut:.0%}"
        )
        if cut != cut:  # a row not measured: again at the same rate
            continue
        tried.append((abs(cut - 0.2), rate, cut))
        if 0.15 <= cut <= 0.3:
            break
        lo, hi = (max(lo, rate), hi) if cut > 0.3 else (lo, min(hi or rate, rate))
        rate = (lo * hi) ** 0.5 if lo and hi else rate * (0.7 if cut < 0.15 else 1.4)
    _, rate, cut = min(tried) if tried else (0, 0.4 * bw * 8, float("nan"))
    c.limit("h1", rate_mbit=round(rate), burst_kb=BURST_KB)
    return f"tbf {rate:.0f} Mbit/s burst {BURST_KB} KB on h1's link (calibration cut {cut:.0%})"


def probe(runner: Runner, stem: Path, bench: list[str], sizes: list[int]) -> float:
    """PingPong's value over sizes (median), the median of two runs."""
    docs = [runner.run(stem.with_name(f"{stem.name}-{i}.json"), bench) for i in range(2)]
    return med([med([row_us(d, "PingPong", s) for s in sizes]) for d in docs])


def add_latency(c, runner: Runner, lat: float, tmp: Path):
    """+50% small-message latency on h1's link: netem delay lat/2 each way, else bridge hops."""
    delay = f"{lat / 2:.1f}us"
    ends = ((c.ns("h1"), "eth0"), (c.prefix + "sw", f"{c.ns('h1')}a"))
    rcs = [ipn(ns, f"tc qdisc replace dev {d} root netem delay {delay}") for ns, d in ends]
    if all(r.returncode == 0 for r in rcs):
        return f"netem delay {delay} each way on h1's link", lambda: c.unlimit("h1")
    c.unlimit("h1")
    why = rcs[0].stderr.strip() or "netem failed"

    def small(name: str) -> float:
        return probe(runner, tmp / name, ["PingPong", "-msglog", "0:6"], SMALL)

    full, hops, got = small("hop0"), [], 0.0
    try:
        for n in (2, 3, 4, 6, 8, 12, 16, 24):
            remove_hops(c, hops)
            hops = insert_hops(c, n)
            got = small(f"hop{n}")
            print(
                f"   calibration: {n} bridge hops: PingPong 0-64 B {got:.2f} us ({got / full:.2f}x)"
            )
            if got >= 1.5 * full:
                break
    except BaseException:
        remove_hops(c, hops)
        raise
    text = (
        f"{len(hops)} extra bridge hops between h1 and the switch (netem: {why}; calibration "
        f"{got / full:.2f}x of {full:.2f} us)"
    )
    return text, lambda: remove_hops(c, hops)


def ipn(ns: str, cmd: str) -> subprocess.CompletedProcess:
    """A command (ip ..., tc ...) inside namespace ns."""
    return sh("ip", "netns", "exec", ns, *cmd.split())


def insert_hops(c, n: int) -> list[str]:
    """n namespaces, each a bridge, chained between h1's link and the switch."""
    sw, port, mtu = c.prefix + "sw", f"{c.ns('h1')}a", c.mtu
    made = [f"{c.prefix}k{i}" for i in range(n)]
    for ns in made:
        sh("ip", "netns", "add", ns)
        ipn(ns, "ip link add br0 type bridge")
        ipn(ns, "ip link set br0 up")
    ipn(sw, f"ip link set {port} nomaster")
    ipn(sw, f"ip link set {port} netns {made[0]}")
    ipn(made[0], f"ip link set {port} master br0 up")
    for i, ns in enumerate(made):
        nxt = made[i + 1] if i + 1 < n else sw
        x, y = f"{c.prefix}k{i}x", f"{c.prefix}k{i}y"
        ipn(ns, f"ip link add {x} mtu {mtu} type veth peer name {y} netns {nxt}")
        ipn(ns, f"ip link set {x} master br0 up")
        ipn(nxt, f"ip link set {y} mtu {mtu} master br0 up")
    return made


def remove_hops(c, made: list[str]) -> None:
    """The hops gone, h1's link back on the switch."""
    if not made:
        return
    sw, port = c.prefix + "sw", f"{c.ns('h1')}a"
    ipn(made[0], f"ip link set {port} netns {sw}")
    ipn(sw, f"ip link set {port} master br0 up")
    for ns in made:
        sh("ip", "netns", "del", ns)
    made.clear()


def degraded(a, runner: Runner, tmp: Path, db: Path, what: str, target, how: str) -> None:
    """--detect-runs runs of the degraded link, each against the tagged baseline."""
    print(f"### {what}: {how}; {a.detect_runs} runs against the {a.seed_runs} baseline runs")
    print(
        f"{'run':>3} {'!ok':>3} {'exit':>4} {'PP64K':>6} {'PP0':>6} {'target':>6} "
        f"{'other':>5}  rows named"
    )
    caught, effects = 0, []
    for i in range(a.detect_runs):
        new = tmp / f"{what}{i}.json"
        doc = runner.run(new)
        rc, v = compare(str(new), "--baseline", f"{db}:tag={BASE_TAG}", "--threshold", a.threshold)
        ratio = {r["label"]: r["ratio"] for r in v["rows"]}
        flagged = [r for r in v["rows"] if r.get("regression")]
        hit = sum(1 for r in flagged if target(r))
        caught += rc == 1 and hit > 0
        pp64, pp0 = ratio.get("PingPong np=2 bytes=65536"), ratio.get("PingPong np=2 bytes=0")
        effects.append(pp64 if what == "bandwidth" else pp0)
        print(
            f"{i + 1:>3} {not_ok(doc):>3} {rc:>4} {_x(pp64):>6} {_x(pp0):>6} {hit:>6} "
            f"{len(flagged) - hit:>5}  {named(v) + _why(rc, v)}",
            flush=True,
        )
    eff = med(effects)
    shown = f"bandwidth cut {1 - 1 / eff:.0%}" if what == "bandwidth" else f"latency {eff - 1:+.0%}"
    print(
        f"flagged with a target row named in {caught} of {a.detect_runs} runs; measured effect "
        f"(median new/base of PingPong {'64 KiB' if what == 'bandwidth' else '0 B'}): "
        f"{eff:.2f}x, {shown}\n"
    )


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--seed-runs", type=int, default=5)
    ap.add_argument("--detect-runs", type=int, default=10)
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--time", type=float, default=1.0, help="-time: ceiling of a row (s)")
    ap.add_argument("--threshold", default="5%")
    ap.add_argument("--settings", default="shm,hosts")
    ap.add_argument("--parts", default="false,detect")
    ap.add_argument("--keep", metavar="DIR", help="keep the results files and stores in DIR")
    a = ap.parse_args()
    settings, parts = a.settings.split(","), a.parts.split(",")
    why = netns.available() if "hosts" in settings or "detect" in parts else None
    if why is not None:
        print(f"# no emulated hosts ({why}): only the shm setting, no detection part\n")
        settings, parts = [s for s in settings if s != "hosts"], [p for p in parts if p != "detect"]
    started = time.time()
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M:%S')}, load average {os.getloadavg()[0]:.2f}, "
        f"{os.cpu_count()} CPUs\n"
    )
    with tempfile.TemporaryDirectory(prefix="store-gate-") as d:
        tmp = Path(a.keep or d)
        tmp.mkdir(parents=True, exist_ok=True)
        if "false" in parts:
            for s in settings:
                t = time.time()
                if s == "shm":
                    false_alarms(a, Runner(a, "shm"), tmp)
                else:
                    with netns.Cluster(2) as c:
                        false_alarms(a, Runner(a, "hosts", c), tmp)
                print(f"({time.time() - t:.0f} s, load average {os.getloadavg()[0]:.2f})\n")
        if "detect" in parts:
            t = time.time()
            detection(a, tmp)
            print(f"({time.time() - t:.0f} s, load average {os.getloadavg()[0]:.2f})\n")
    print(f"(total {time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
