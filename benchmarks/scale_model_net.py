"""Synthetic model of the net family's rank 0 at scale: its memory, time and records, no MPI.

    python benchmarks/scale_model_net.py [--procs 256,1024,4096,16384] [--ppn 64]
                                         [--samples 20] [--shifts auto] [--slow 3]
                                         [--rank-detail 256] [--host-pairs 64] [--fans 256]
                                         [--tracemalloc] [--json PATH]

What rank 0 of `commbench run --suite net` does after each gather, run in this one process on
synthetic samples instead of measured ones, with the family's own code: the AllPairs plan
(plan.make, plan.statement), the fold of each metric (many_hosts.fold: per host pair up to
--host-pairs hosts (allpairs.Fold), per host beyond (many_hosts.Wide); Fold.add for every shift
step, then verdicts and records), the records of Rings, Bisection, FanIn/FanOut (the targets
of plan.fan_targets, sampled beyond --fans hosts) and the verdicts (steps.py). For each P:
hosts = P / ppn, ranks in blocks of ppn per host (rank_hosts h0, h0, ..., h1, ...),
--samples samples per step, and every record the driver would emit is kept as Session.emit
keeps it: summarised beyond --rank-detail ranks (records.summarise), twice, the Measurement
(Session.records) and its to_dict() (the results file's sink).

Samples: every rank pair's round trip is lognormal around a base (latency 2 x 5 us, bandwidth
--net-large 256 KiB at 10 GB/s), its own per host pair factor (sigma 0.1: the sending host's
factor times the receiving host's) and per sample noise (sigma 0.2); every pair that involves
host h1 is --slow times slower (so the verdicts have something to name). Rings, Bisection and
fans get the same kind of samples.

Per P, in a child process of its own (this script with --one), so that ru_maxrss is that
case's alone:

  steps      AllPairs shift steps per metric (of P-1) and the plan's rule
  covered    host pairs measured of those needed
  recs       records emitted (all patterns, both AllPairs metrics, the verdicts)
  JSON raw   bytes of json.dumps(to_dict()) of every record as built (rank_times: P entries)
  JSON kept  the same as kept (summarised beyond --rank-detail ranks): the results file
  time       seconds in the family's code: folding, host-pair and matrix records, verdicts,
             the other patterns' records and the summaries (not the synthetic samples'
             generation)
  RSS        ru_maxrss peak minus the RSS after imports (MiB): rank 0's peak here
  traced     tracemalloc's peak (MiB), with --tracemalloc (a second child per P: slower)
  named      what the verdicts named (h1 and its links expected)

and then, per P, the records and JSON MiB of each part (AllPairs steps, host pairs or hosts,
matrices, Rings, Bisection, fans, the Verdicts record; the results file's top-level
"verdicts", a copy of the Verdicts record's list, is counted in the totals only).

The issue's target (issue 35): at P = 16384 rank 0 within 4 GiB, at 64 ranks per host and
at one.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LAT_S, BW_BPS, LARGE = 5e-6, 10e9, 256 * 2**10


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def kind_of(rec) -> str:
    """Which part of the net records a record is (the breakdown's rows)."""
    if rec.benchmark != "AllPairs":
        return rec.benchmark if rec.benchmark in ("Verdicts", "Rings", "Bisection") else "Fan"
    if "shift" in rec.extra:
        return "AllPairs step"
    if "host_matrix" in rec.extra:
        return "AllPairs matrix"
    return "AllPairs host" if "host" in rec.extra else "AllPairs host pair"


class Model:
    """One case: P ranks, ppn per host; keeps every record as rank 0 would."""

    def __init__(self, p: int, ppn: int, samples: int, shifts: str, slow: float, detail, hp, fans):
        import numpy as np

        from commbench.suites.net import plan

        self.np = np
        self.p, self.samples, self.slow, self.detail = p, samples, slow, detail
        self.host_pairs, self.fans = hp, fans
        self.hosts = [f"h{r // ppn}" for r in range(p)]
        self.hid = np.arange(p) // ppn
        nh = self.hid.max() + 1
        self.rng = np.random.default_rng(7)
        # per host pair factor: a sending and a receiving factor per host (sigma 0.1 in all),
        # not an nh x nh matrix, which at 16,384 hosts would be 2 GiB of the model's own
        self.out_f = self.rng.lognormal(0.0, 0.1 / 2**0.5, nh)
        self.in_f = self.rng.lognormal(0.0, 0.1 / 2**0.5, nh)
        self.kept: list = []  # (Measurement, dict): Session.records and the results sink
        self.json_raw = self.json_kept = 0
        self.by_kind: dict[str, list[int]] = {}  # kind -> [records, JSON raw, JSON -rt]
        self.spent = 0.0
        t0 = time.perf_counter()
        self.plan = plan.make(self.hosts, shifts, 1)
        self.coverage = plan.statement(self.plan, self.hosts)
        self.spent += time.perf_counter() - t0

    def keep(self, rec) -> None:
        """Keep a record as Session.emit does: summarised beyond --rank-detail ranks
        (records.summarise), as the Measurement (Session.records) and its dict (the sink)."""
        from commbench import records

        raw = len(json.dumps(rec.to_dict()))
        rec = records.summarise(rec, self.detail, self.hosts)
        d = rec.to_dict()
        kept = len(json.dumps(d))
        self.json_raw += raw
        self.json_kept += kept
        got = self.by_kind.setdefault(kind_of(rec), [0, 0, 0])
        got[0], got[1], got[2] = got[0] + 1, got[1] + raw, got[2] + kept
        self.kept.append((rec, d))

    def times(self, src, dst, base: float):
        """P x samples round trips (seconds) of the rank pairs src -> dst."""
        np = self.np
        f = self.out_f[self.hid[src]] * self.in_f[self.hid[dst]]
        f = f * np.where((self.hid[src] == 1) | (self.hid[dst] == 1), self.slow, 1.0)
        noise = self.rng.lognormal(0.0, 0.2, (len(src), self.samples))
        return base * f[:, None] * noise

    def timed(self, fn, *args):
        t0 = time.perf_counter()
        out = fn(*args)
        self.spent += time.perf_counter() - t0
        return out

    def all_pairs(self) -> list:
        from commbench.suites.net import many_hosts

        found = []
        ranks = self.np.arange(self.p)
        for metric, n, base in (("latency", 8, 2 * LAT_S), ("bandwidth", LARGE, LARGE / BW_BPS)):
            args = (metric, n, self.hosts, self.coverage, self.host_pairs)
            fold = self.timed(many_hosts.fold, *args)
            for k in self.plan.shifts:
                t = self.times(ranks, (ranks + k) % self.p, base)
                self.keep(self.timed(fold.add, k, t))
            thr = 2.0 if metric == "latency" else 0.5
            found += self.timed(fold.verdicts, thr)
            for rec in self.timed(fold.records):  # the aggregates go as their records are made
                self.keep(rec)
            del fold  # its aggregates go with it (the driver: at the end of the metric's row)
        return found

    def others(self) -> list:
        """Rings, Bisection, FanIn/FanOut and the verdicts' inputs, built as the driver does."""
        from commbench.suites.net import patterns, plan, steps

        np, p = self.np, self.p
        ranks = np.arange(p)
        for metric, n in (("latency", 8), ("bandwidth", LARGE)):
            for label in ["natural"] + [f"random {i + 1}" for i in range(5)]:
                every = self.times(ranks, (ranks + 1) % p, 2 * LAT_S + n / BW_BPS).tolist()
                order = list(range(p)) if label == "natural" else self.rng.permutation(p).tolist()
                self.keep(self.timed(steps.ring, p, f"{metric} {label}", n, every, order, 1))
        bws: list = []
        for i in range(10):
            partner = patterns.matching(p, self.rng)
            every = self.times(ranks, ranks, LARGE / BW_BPS).tolist()
            args = (p, f"bandwidth round {i + 1}", LARGE, every, partner, 1001)
            rec, got = self.timed(steps.bisection_round, *args)
            bws += got
            self.keep(rec)
        self.keep(self.timed(steps.bisection_distribution, p, LARGE, bws, 10))
        fans: dict = {}
        m = max(1, min(LARGE, 64 * 2**20 // (p - 1)))
        targets, self.fan_rule = self.timed(plan.fan_targets, self.hosts, self.fans, 1)
        for name in ("FanIn", "FanOut"):
            fans[name] = {}
            for h, t in targets.items():
                ts = self.times(np.array([t]), np.array([t]), (p - 1) * m / BW_BPS)[0].tolist()
                rec, fans[name][h] = self.timed(steps.fan, p, name, h, t, m, ts)
                self.keep(rec)
        return self.timed(steps.fan_verdicts, fans, 0.5)

    def run(self) -> dict:
        from commbench.suites.net import steps
        from commbench.suites.net.settings import NetSettings
        from commbench.suites.net.verdicts import named

        found = self.all_pairs() + self.others()
        hosts = list(dict.fromkeys(self.hosts))
        judged = ["FanIn bandwidth", "FanOut bandwidth", "bandwidth", "latency"]
        self.keep(self.timed(steps.verdicts_record, self.p, found, NetSettings(), hosts, judged))
        self.json_raw += len(json.dumps(found))  # the results file's top-level "verdicts"
        self.json_kept += len(json.dumps(found))
        h, links = named(found)
        return {
            "P": self.p,
            "hosts": len(hosts),
            "steps": len(self.plan.shifts),
            "of": self.p - 1,
            "rule": self.plan.rule,
            "covered": self.coverage["covered"],
            "host_pairs": self.coverage["host_pairs"],
            "records": len(self.kept),
            "json_raw": self.json_raw,
            "json_kept": self.json_kept,
            "time_s": self.spent,
            "named_hosts": sorted(h),
            "named_links": len(links),
            "verdicts": len(found),
            "by_kind": self.by_kind,
        }


def one(args) -> dict:
    import mpi4py

    mpi4py.rc.initialize = False  # the net package imports mpi4py.MPI: no MPI_Init here
    mpi4py.rc.finalize = False
    import numpy  # noqa: F401

    import commbench.suites.net.driver  # noqa: F401  (every import before the baseline)

    if args.tracemalloc:
        import tracemalloc

        tracemalloc.start()
    base, before = current_rss_mib(), rss_mib()
    detail = None if args.rank_detail == "all" else int(args.rank_detail)
    model = Model(
        args.one, args.ppn, args.samples, args.shifts, args.slow, detail, args.host_pairs, args.fans
    )
    out = model.run()
    out["rss_peak_mib"] = rss_mib() - base
    out["rss_before_mib"] = before
    if args.tracemalloc:
        out["traced_peak_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
    return out


def child(p: int, args, traced: bool) -> dict:
    cmd = [sys.executable, __file__, "--one", str(p), "--ppn", str(args.ppn)]
    cmd += ["--samples", str(args.samples), "--shifts", args.shifts, "--slow", str(args.slow)]
    cmd += ["--tracemalloc"] if traced else []
    cmd += ["--rank-detail", args.rank_detail, "--host-pairs", str(args.host_pairs)]
    cmd += ["--fans", str(args.fans)]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        return {"P": p, "error": r.stderr[-2000:]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def table(rows: list[dict]) -> None:
    head = (
        f"{'P':>6} {'hosts':>5} {'steps':>12} {'rule':>8} {'covered':>15} {'recs':>6} "
        f"{'JSON raw':>10} {'JSON kept':>10} {'time s':>7} {'RSS MiB':>8} {'traced':>7} named"
    )
    print(head)
    for r in rows:
        if "error" in r:
            print(f"{r['P']:>6} failed: {r['error'][-300:]}")
            continue
        traced = f"{r['traced_peak_mib']:.0f}" if "traced_peak_mib" in r else "-"
        print(
            f"{r['P']:>6} {r['hosts']:>5} {r['steps']:>5} of {r['of']:>5} {r['rule']:>8} "
            f"{r['covered']:>7}/{r['host_pairs']:<7} {r['records']:>6} "
            f"{r['json_raw'] / 2**20:>8.1f}Mi {r['json_kept'] / 2**20:>8.1f}Mi "
            f"{r['time_s']:>7.1f} {r['rss_peak_mib']:>8.0f} {traced:>7} "
            f"{','.join(r['named_hosts']) or '-'} +{r['named_links']} links"
        )


def breakdown(rows: list[dict]) -> None:
    """Per P, the records and JSON MiB (as built / as kept) of each part."""
    print("\nJSON by part: records, MiB as built / as kept")
    for r in rows:
        if "by_kind" in r:
            parts = [
                f"{k} {n}: {raw / 2**20:.1f}/{nort / 2**20:.1f}"
                for k, (n, raw, nort) in sorted(r["by_kind"].items())
            ]
            print(f"{r['P']:>6}  " + "; ".join(parts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", default="256,1024,4096,16384")
    ap.add_argument("--ppn", type=int, default=64, help="ranks per host (default 64)")
    ap.add_argument("--samples", type=int, default=20, help="samples per step (default 20)")
    ap.add_argument("--shifts", default="auto", help="--net-shifts (default auto)")
    ap.add_argument("--slow", type=float, default=3.0, help="how much slower h1 is (default 3)")
    ap.add_argument("--tracemalloc", action="store_true", help="also tracemalloc's peak")
    ap.add_argument("--rank-detail", default="256", help="--rank-detail (default 256; all)")
    ap.add_argument("--host-pairs", type=int, default=64, help="--net-host-pairs (0: all)")
    ap.add_argument("--fans", type=int, default=256, help="--net-fans (0: all)")
    ap.add_argument("--json", help="write every number here")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args)))
        return
    rows = []
    for p in [int(x) for x in args.procs.split(",")]:
        row = child(p, args, False)
        if args.tracemalloc and "error" not in row:
            row["traced_peak_mib"] = child(p, args, True).get("traced_peak_mib")
        rows.append(row)
        print(f"P={p} done", file=sys.stderr, flush=True)
    table(rows)
    breakdown(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
