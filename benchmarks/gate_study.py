"""The regression gates' operating characteristics, measured: how often identical runs are flagged
(false alarms) and how often a slowdown of known size is (detection), for the two-file gate
(`compare OLD NEW`) and the history gate (`compare NEW --baseline STORE`).

1. A/A (--parts aa): 2 x --pairs identical runs of `commbench run -n 2 PingPong Sendrecv -msglog
   0:12 --samples K` (self-launched, ranks where the OS puts them, as a user runs it), alternating
   A1 B1 A2 B2 ..., every run stored in a fresh results store. The two-file gate judges each pair
   (A_i, B_i); the history gate judges every run after the first --seed against the runs before
   it (`--baseline STORE`, its default 5 latest). Each verdict is counted: pass (exit 0),
   regression (1), too noisy (2 with verdict too-noisy), refused (2 otherwise). Once on a quiet
   machine and once with a background load (--loads quiet,load: one process that spins half of
   every 10 ms, not pinned, at the ranks' priority: a machine shared with a light job).
2. Slowdowns (--parts slow): the ranks bound to cores (`mpiexec -n 2 -bind-to core`, so the
   injection reaches one rank), `PingPong -msglog 0:12 -iter 5000 -iter_policy off --samples K`.
   The injection: a CPU-time stealer (benchmarks/c/steal.c) pinned to rank 1's core at a
   real-time priority, spinning a duty cycle of every 1 ms: rank 1 stalls while it spins, so
   every row is slowed. Its duty for each --effects size (5, 10, 20, 50 %) is calibrated first
   (a preemption costs more than its duty: 5 % duty slows PingPong about 11 %), and the effect
   each trial really had is measured (median over rows of slowed / baseline medians) and shown.
   Each of --trials trials per size: a baseline run (stored, after --seed stored baseline runs)
   and a slowed run; the two-file gate judges (baseline, slowed), the history gate the slowed run
   against the store. Detection: exit 1 with at least half of the rows named.

   On emulated hosts (--parts hosts; root, network namespaces, tests/support/netns.py): 2
   hosts, OFI over TCP, `PingPong -msglog 0:16 -iter 200 -iter_policy off --samples K`; a tbf
   rate cut on h1's link calibrated to each --effects size of 20 % and more on the rows from
   16 KiB (the ones it reaches), and extra bridge hops between h1 and the switch (this kernel
   has no netem delay) adding at least 20 % to the rows up to 64 B; each --trials times, a
   stored baseline run and a slowed one, judged as above; rows named outside the ones the
   injection reaches are counted.
3. Cost (--parts cost): the A/A run's wall time with its samples in rounds and with
   --consecutive-samples, alternating, --trials each.

Prints a table per part, a summary table of the rates, and with --figure PATH a figure of the
detection rate against the effect, the false-alarm rates at 0. docs/statistics.md quotes it.

    python benchmarks/gate_study.py [--pairs 20] [--trials 10] [--samples 20] [--seed 5]
        [--effects 5,10,20,50] [--parts aa,slow,hosts,cost] [--loads quiet,load] [--figure F]
        [--keep DIR]

Needs root (the stealer's real-time priority, the network namespaces) and a C compiler for
part 2.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from cfloor import compare_json

ROOT = Path(__file__).resolve().parents[1]
AA = ["PingPong", "Sendrecv", "-msglog", "0:12"]
SLOW = ["PingPong", "-msglog", "0:12", "-iter", "5000", "-iter_policy", "off"]
PERIOD_US = 1000
BIN = Path(sys.executable).parent


def commbench(*args: str, launcher: list[str] = ()) -> subprocess.CompletedProcess:
    cmd = [*launcher, sys.executable, "-m", "commbench", *args]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)


def run(out: Path, bench: list[str], k: int, store: Path | None, bound: bool = False) -> dict:
    args = ["run", *bench, "--samples", str(k), "--no-progress", "-o", str(out)]
    args += [f"--store={store}"] if store else []
    if bound:  # the user's own mpiexec, binding the ranks: rank r on core r
        p = commbench(*args, launcher=[str(BIN / "mpiexec"), "-n", "2", "-bind-to", "core"])
    else:
        p = commbench(args[0], "-n", "2", *args[1:])
    if p.returncode != 0:
        sys.exit(f"run failed ({p.returncode}): {p.stderr[-2000:]}")
    return json.loads(out.read_text())


def gate(*args: str) -> tuple[str, dict]:
    """A gate's verdict: pass, regression, too-noisy, refused; and its JSON."""
    rc, doc, err = compare_json(*args)
    if doc is None:
        sys.exit(f"compare gave no JSON ({rc}): {err[-2000:]}")
    if rc == 2 and doc.get("verdict") != "too-noisy":
        return "refused", doc
    return {0: "pass", 1: "regression", 2: "too-noisy"}[rc], doc


def medians(doc: dict) -> dict:
    return {
        (r["benchmark"], r["bytes"]): statistics.median(r["extra"]["samples"]["t_max_samples"])
        for r in doc["records"]
        if r["status"] == "ok"
    }


def effect(base: dict, slow: dict) -> float:
    a, b = medians(base), medians(slow)
    return statistics.median(b[key] / a[key] for key in a if key in b)


def detectable(doc: dict) -> float | None:
    d = [r["detectable"] for r in doc.get("rows", []) if r.get("detectable")]
    return statistics.median(d) if d else None


@contextmanager
def load(kind: str):
    """The background load of part 1: none, or one process spinning half of every 10 ms."""
    if kind == "quiet":
        yield
        return
    code = (
        "import time\nwhile True:\n t=time.monotonic()\n while time.monotonic()-t<0.005: pass\n"
        " time.sleep(0.005)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code])
    try:
        yield
    finally:
        p.kill()
        p.wait()


@contextmanager
def stealer(exe: Path, duty: float):
    p = subprocess.Popen([str(exe), "1", f"{duty:.4f}", str(PERIOD_US)], stderr=subprocess.PIPE)
    time.sleep(0.2)
    if p.poll() is not None:
        sys.exit(f"the stealer did not start: {p.stderr.read().decode()[-500:]}")
    try:
        yield
    finally:
        p.kill()
        p.wait()


def tally(verdicts: list[str]) -> str:
    kinds = ("pass", "regression", "too-noisy", "refused")
    return ", ".join(f"{v} {verdicts.count(v)}" for v in kinds if verdicts.count(v))


# -- part 1: identical runs -------------------------------------------------------------------
def aa(a, tmp: Path, kind: str) -> dict:
    db = tmp / f"aa-{kind}.db"
    print(f"## A/A, {kind}: {2 * a.pairs} runs of `commbench run -n 2 {' '.join(AA)} --samples "
          f"{a.samples} --store=DB`, alternating A1 B1 ...")  # fmt: skip
    print(f"   two-file: `compare A_i B_i`; history: `compare RUN --baseline DB` for runs "
          f"{a.seed + 1}..{2 * a.pairs} (each against the runs before it)\n")  # fmt: skip
    print(f"{'pair':>4}  {'two-file':<11} {'slower':>6} {'detect':>6}   {'history A':<11} "
          f"{'history B':<11}")  # fmt: skip
    two, hist = [], []
    with load(kind):
        for i in range(a.pairs):
            pa, pb = tmp / f"{kind}-a{i}.json", tmp / f"{kind}-b{i}.json"
            run(pa, AA, a.samples, db)
            run(pb, AA, a.samples, db)
            v, doc = gate(str(pa), str(pb))
            two.append(v)
            hv = []
            for j, path in ((2 * i, pa), (2 * i + 1, pb)):
                if j >= a.seed:
                    h, _ = gate(str(path), "--baseline", str(db))
                    hist.append(h)
                    hv.append(h)
                else:
                    hv.append("(seed)")
            d = detectable(doc)
            print(f"{i + 1:>4}  {v:<11} {doc.get('summary', {}).get('slower', 0):>6} "
                  f"{d or 0:>6.2f}   {hv[0]:<11} {hv[1]:<11}", flush=True)  # fmt: skip
    print(f"\nbetween runs: {spread(tmp, kind, a.pairs)}")
    print(f"two-file: {tally(two)} of {len(two)} pairs; history: {tally(hist)} of "
          f"{len(hist)} runs\n")  # fmt: skip
    return {"two": two, "hist": hist}


def spread(tmp: Path, kind: str, pairs: int) -> str:
    """How far a row's median moves between runs: per row the sd of its log-median over the
    runs (about the relative sd), and within a run the robust sd of its samples' logs."""
    docs = [json.loads((tmp / f"{kind}-{s}{i}.json").read_text()) for i in range(pairs)
            for s in "ab"]  # fmt: skip
    per = [medians(d) for d in docs]
    between = [statistics.stdev(math.log(m[key]) for m in per) for key in per[0]
               if all(key in m for m in per)]  # fmt: skip
    within = []
    for d in docs:
        for r in d["records"]:
            logs = [math.log(v) for v in r["extra"]["samples"]["t_max_samples"]]
            mid = statistics.median(logs)
            within.append(1.4826 * statistics.median(abs(x - mid) for x in logs))
    return (f"a row's median moves by {statistics.median(between):.1%} (sd, median over rows; "
            f"{min(between):.1%}-{max(between):.1%}); within a run its samples spread by "
            f"{statistics.median(within):.1%} (robust sd)")  # fmt: skip


# -- part 2: injected slowdowns ---------------------------------------------------------------
def build_stealer(tmp: Path) -> Path:
    exe = tmp / "steal"
    p = subprocess.run(["cc", "-O2", "-o", str(exe), str(ROOT / "benchmarks/c/steal.c")],
                       capture_output=True, text=True)  # fmt: skip
    if p.returncode != 0:
        sys.exit(f"cannot build the stealer: {p.stderr}")
    return exe


def probe(tmp: Path, exe: Path, duty: float, tag: str) -> float:
    """The effect of the stealer at duty: a baseline run and a slowed run beside it."""
    base = run(tmp / f"cal-base-{tag}.json", SLOW, 5, None, bound=True)
    with stealer(exe, duty):
        slow = run(tmp / f"cal-slow-{tag}.json", SLOW, 5, None, bound=True)
    return effect(base, slow)


def calibrate(a, tmp: Path, exe: Path) -> dict[int, float]:
    """The duty for each target effect: from a first guess (a preemption costs more than its
    duty), a few probes, each scaling the duty by target / measured excess; the closest kept."""
    out = {}
    for e in a.effects:
        duty, tried = e / 100 / (1 + e / 100) * 0.6, []
        for step in range(4):
            got = probe(tmp, exe, duty, f"{e}-{step}")
            tried.append((abs(got - 1 - e / 100), duty, got))
            print(f"   calibration {e}%: duty {duty:.3f} of every {PERIOD_US} us: {got:.3f}x",
                  flush=True)  # fmt: skip
            if abs(got - 1 - e / 100) <= 0.02 * (1 + e / 100):
                break
            duty = min(max(duty * (e / 100) / max(got - 1, 0.005), duty / 3), min(duty * 3, 0.6))
        out[e] = min(tried)[1]
    return out


def slowdowns(a, tmp: Path) -> dict:
    exe = build_stealer(tmp)
    db = tmp / "slow.db"
    print(f"## slowdowns, ranks bound (`mpiexec -n 2 -bind-to core commbench run {' '.join(SLOW)}"
          f" --samples {a.samples}`); stealer on rank 1's core, SCHED_FIFO, duty of every "
          f"{PERIOD_US} us")  # fmt: skip
    duty = calibrate(a, tmp, exe)
    for i in range(a.seed):
        run(tmp / f"seed{i}.json", SLOW, a.samples, db, bound=True)
    print(
        f"   {a.seed} baseline runs stored; each trial: a baseline run (stored), a slowed "
        "run; two-file `compare BASE SLOWED`, history `compare SLOWED --baseline DB`\n"
    )
    print(f"{'target':>6} {'duty':>6} {'trial':>5} {'effect':>6}  {'two-file':<11} {'named':>5} "
          f"{'detect':>6}  {'history':<11} {'named':>5} {'detect':>6}")  # fmt: skip
    out = {}
    for e in a.effects:
        res = out.setdefault(e, {"two": [], "hist": [], "effect": [], "det2": [], "deth": []})
        for t in range(a.trials):
            base = run(tmp / f"b{e}-{t}.json", SLOW, a.samples, db, bound=True)
            sp = tmp / f"s{e}-{t}.json"
            with stealer(exe, duty[e]):
                slow = run(sp, SLOW, a.samples, None, bound=True)
            eff = effect(base, slow)
            cols = []
            for key, args in (("two", (str(tmp / f"b{e}-{t}.json"), str(sp))),
                              ("hist", (str(sp), "--baseline", str(db)))):  # fmt: skip
                v, doc = gate(*args)
                rows = doc.get("rows", [])
                named = sum(1 for r in rows if r.get("regression"))
                hit = v == "regression" and named >= len(rows) / 2
                res[key].append("detected" if hit else v)
                res["det2" if key == "two" else "deth"].append(detectable(doc))
                cols.append(f"{v:<11} {named:>2}/{len(rows):<2} {detectable(doc) or 0:>6.2f}")
            res["effect"].append(eff)
            print(f"{e:>5}% {duty[e]:>6.3f} {t + 1:>5} {eff:>6.3f}  {cols[0]}  {cols[1]}",
                  flush=True)  # fmt: skip
    return out


# -- part 2b: slowdowns on emulated hosts -----------------------------------------------------
HOSTS = ["PingPong", "-msglog", "0:16", "-iter", "200", "-iter_policy", "off"]
LARGE_FROM = 16384  # rows a rate cut on the link reaches: messages beyond a few packets
SMALL_UPTO = 64  # rows extra hops on the link reach most: latency-bound


def on_rows(base: dict, slow: dict, pick) -> float:
    """The median over the rows pick() keeps of slowed / baseline medians."""
    a, b = medians(base), medians(slow)
    return statistics.median(b[k] / a[k] for k in a if k in b and pick(k[1]))


def hosts(a, tmp: Path) -> dict:
    """Slowdowns of h1's link between 2 emulated hosts (tests/support/netns.py, OFI over TCP):
    a tbf rate cut reaching the rows from LARGE_FROM, calibrated to each --effects size of 20 %
    and more, and extra bridge hops (this kernel has no netem delay) reaching the small rows."""
    sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
    from store_gate import insert_hops, remove_hops  # noqa: PLC0415 - the hops' plumbing

    from tests.support import netns  # noqa: PLC0415

    why = netns.available()
    if why is not None:
        print(f"## slowdowns on emulated hosts: not measured ({why})\n")
        return {}
    db, out = tmp / "hosts.db", {}
    with netns.Cluster(2) as c:

        def hrun(path: Path, store: bool) -> dict:
            args = ["-n", "2", "-ppn", "1", sys.executable, "-m", "commbench", "run", *HOSTS,
                    "--samples", str(a.samples), "--no-progress", "--timeout", "120", "-o",
                    str(path), *([f"--store={db}"] if store else [])]  # fmt: skip
            p = c.mpiexec(args, netmod="ofi", timeout=900, env={"PYTHONPATH": str(ROOT)})
            if p.returncode != 0:
                sys.exit(f"emulated run failed ({p.returncode}): {p.stderr[-2000:]}")
            return json.loads(path.read_text())

        print(f"## slowdowns on 2 emulated hosts (OFI over TCP): `mpiexec -n 2 -ppn 1 commbench "
              f"run {' '.join(HOSTS)} --samples {a.samples}`")  # fmt: skip
        seeds = [hrun(tmp / f"h-seed{i}.json", True) for i in range(a.seed)]
        bw = statistics.median(65536 / medians(d)[("PingPong", 65536)] for d in seeds)  # MB/s
        big, small = (lambda x: x >= LARGE_FROM), (lambda x: x <= SMALL_UPTO)
        injections = []
        for e in [e for e in a.effects if e >= 20]:
            rate = bw * 8 / (2 * (1 + e / 100))  # PingPong keeps a direction busy half the time
            for step in range(3):
                c.limit("h1", rate_mbit=round(rate))
                got = on_rows(seeds[-1], hrun(tmp / f"h-cal{e}-{step}.json", False), big)
                c.unlimit("h1")
                print(f"   calibration {e}%: tbf {rate:.0f} Mbit/s: rows >= {LARGE_FROM} B "
                      f"{got:.3f}x", flush=True)  # fmt: skip
                if abs(got - 1 - e / 100) <= 0.03 * (1 + e / 100):
                    break
                rate *= got / (1 + e / 100)
            r = round(rate)
            injections.append((f"tbf {e}%", big, lambda r=r: c.limit("h1", rate_mbit=r),
                               lambda: c.unlimit("h1")))  # fmt: skip
        hops: list[str] = []
        for n in (1, 2, 3, 4, 6, 8):
            hops = insert_hops(c, n)
            got = on_rows(seeds[-1], hrun(tmp / f"h-hop{n}.json", False), small)
            remove_hops(c, hops)
            print(f"   calibration: {n} extra bridge hops: rows <= {SMALL_UPTO} B {got:.3f}x",
                  flush=True)  # fmt: skip
            if got >= 1.2:
                break
        made: list[str] = []
        injections.append((f"{n} hops", small, lambda n=n: made.extend(insert_hops(c, n)),
                           lambda: remove_hops(c, made)))  # fmt: skip
        print(f"\n{'injection':<10} {'trial':>5} {'effect':>6}  {'two-file':<11} {'named':>5} "
              f"{'other':>5}  {'history':<11} {'named':>5} {'other':>5}")  # fmt: skip
        for name, pick, on, off in injections:
            res = out.setdefault(name, {"two": [], "hist": [], "effect": [], "det2": [],
                                        "deth": []})  # fmt: skip
            for t in range(a.trials):
                bp, sp = tmp / f"h-b-{name}-{t}.json", tmp / f"h-s-{name}-{t}.json"
                base = hrun(bp, True)
                on()
                try:
                    slow = hrun(sp, False)
                finally:
                    off()
                eff = on_rows(base, slow, pick)
                cols = []
                for key, args in (("two", (str(bp), str(sp))),
                                  ("hist", (str(sp), "--baseline", str(db)))):  # fmt: skip
                    v, doc = gate(*args)
                    rows = doc.get("rows", [])
                    hit = [r for r in rows if r.get("regression") and pick(r["bytes"])]
                    other = [r for r in rows if r.get("regression") and not pick(r["bytes"])]
                    reach = sum(1 for r in rows if pick(r["bytes"]))
                    ok = v == "regression" and len(hit) >= reach / 2
                    res[key].append("detected" if ok else v)
                    res["det2" if key == "two" else "deth"].append(detectable(doc))
                    cols.append(f"{v:<11} {len(hit):>2}/{reach:<2} {len(other):>5}")
                res["effect"].append(eff)
                print(f"{name:<10} {t + 1:>5} {eff:>6.3f}  {cols[0]}  {cols[1]}", flush=True)
    print()
    return out


# -- part 3: what rounds cost --------------------------------------------------------------
def cost(a, tmp: Path) -> None:
    """Wall time of the A/A run with its samples in rounds and one after another
    (--consecutive-samples), alternating, --trials each; their medians and ratio."""
    print(f"## cost: `commbench run -n 2 {' '.join(AA)} --samples {a.samples}` in rounds and "
          f"with --consecutive-samples, alternating, {a.trials} each\n")  # fmt: skip
    took: dict[str, list[float]] = {"rounds": [], "consecutive": []}
    for i in range(a.trials):
        for how in took:
            extra = ["--consecutive-samples"] if how == "consecutive" else []
            t = time.monotonic()
            run(tmp / f"cost-{how}-{i}.json", [*AA, *extra], a.samples, None)
            took[how].append(time.monotonic() - t)
    for how, ts in took.items():
        print(f"   {how:<12} " + " ".join(f"{t:.2f}" for t in ts) +
              f"  median {statistics.median(ts):.2f} s")  # fmt: skip
    ratio = statistics.median(took["rounds"]) / statistics.median(took["consecutive"])
    print(f"\nrounds / consecutive: {ratio:.3f} (medians of whole runs, start-up included)\n")


def summary(aa_res: dict, slow_res: dict, a, host_res: dict | None = None) -> None:
    print("## summary\n")
    print("| condition | two-file gate | history gate |\n|---|---|---|")
    for kind, r in aa_res.items():
        print(f"| identical runs, {kind} | {_rate(r['two'], 'regression')} flagged; "
              f"{tally(r['two'])} | {_rate(r['hist'], 'regression')} flagged; "
              f"{tally(r['hist'])} |")  # fmt: skip
    for e, r in slow_res.items():
        eff = statistics.median(r["effect"])
        print(f"| slowdown {e} % (measured {eff:.2f}x) | {_rate(r['two'], 'detected')} "
              f"detected (detectable {_med(r['det2'])}) | {_rate(r['hist'], 'detected')} "
              f"detected (detectable {_med(r['deth'])}) |")  # fmt: skip
    for name, r in (host_res or {}).items():
        eff = statistics.median(r["effect"])
        two, hist = _rate(r["two"], "detected"), _rate(r["hist"], "detected")
        print(f"| emulated hosts, {name} (measured {eff:.2f}x on the rows it reaches) | {two} "
              f"detected (detectable {_med(r['det2'])}) | {hist} detected (detectable "
              f"{_med(r['deth'])}) |")  # fmt: skip


def _rate(verdicts: list[str], what: str) -> str:
    return f"{verdicts.count(what)} of {len(verdicts)}"


def _med(values: list) -> str:
    got = [v for v in values if v]
    return f"{statistics.median(got):.2f}" if got else "-"


def figure(path: str, aa_res: dict, slow_res: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    for key, label, m in (("two", "two-file gate", "o"), ("hist", "history gate", "s")):
        xs = [0.0] + [statistics.median(r["effect"]) - 1 for r in slow_res.values()]
        quiet = aa_res.get("quiet", {}).get(key, [])
        ys = [quiet.count("regression") / max(len(quiet), 1)]
        ys += [r[key].count("detected") / max(len(r[key]), 1) for r in slow_res.values()]
        ax.plot([100 * x for x in xs], ys, marker=m, label=label)
    ax.axhline(0.9, color="grey", lw=0.6, ls="--")
    ax.axhline(0.05, color="grey", lw=0.6, ls=":")
    ax.set_xlabel("slowdown injected, measured (%); 0: identical runs")
    ax.set_ylabel("share of runs flagged")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--seed", type=int, default=5, help="stored runs before the first judged")
    ap.add_argument("--effects", default="5,10,20,50")
    ap.add_argument("--parts", default="aa,slow,hosts,cost")
    ap.add_argument("--loads", default="quiet,load")
    ap.add_argument("--figure", metavar="PATH")
    ap.add_argument("--keep", metavar="DIR", help="keep the results files in DIR")
    a = ap.parse_args()
    a.effects = [int(x) for x in a.effects.split(",")]
    started = time.time()
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S')}, load average {os.getloadavg()[0]:.2f}, "
          f"{os.cpu_count()} CPUs\n")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="gate-study-") as d:
        tmp = Path(a.keep or d)
        tmp.mkdir(parents=True, exist_ok=True)
        aa_res = {k: aa(a, tmp, k) for k in a.loads.split(",")} if "aa" in a.parts else {}
        slow_res = slowdowns(a, tmp) if "slow" in a.parts else {}
        host_res = hosts(a, tmp) if "hosts" in a.parts else {}
        if "cost" in a.parts:
            cost(a, tmp)
    summary(aa_res, slow_res, a, host_res)
    if a.figure:
        figure(a.figure, aa_res, slow_res)
    print(f"\n({time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
