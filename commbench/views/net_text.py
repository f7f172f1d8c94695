"""The text of a net run (cluster diagnosis): host x host matrices of AllPairs,
the rings, the bisection distribution, fan-in/out per host, and the verdicts.

Rows arrive as the run measures them; the per-step records of AllPairs print
nothing (the matrix does, when its record comes), the verdicts print last:
the hosts and links named, each with its evidence, or "no host or link
stands out". `commbench report FILE` replays the records through this view.
"""

from __future__ import annotations

import statistics
import sys
from typing import TextIO

from commbench import records
from commbench.suites.net import NetSettings
from commbench.views import TextView

LINE = "#" + "-" * 70
MB = 1e6
MATRIX_UP_TO = 32  # hosts: the host x host matrix is printed up to this many (the file has it)
WORST = 10  # beyond: the host pairs with the worst medians are listed


def fmt_cell(v, metric: str) -> str:
    if v is None:
        return "-"
    return f"{v / MB:.1f}" if metric == "bandwidth" else f"{v:.1f}"


def plan_lines(extra: dict) -> list[str]:
    """What AllPairs ran (its plan) and which host pairs that left unmeasured."""
    plan = extra.get("plan")
    if not plan:
        return []
    out = [f"# shifts: {plan['text']}"]
    if plan["rule"] != "all":
        out.append(f"# shifts run: {_ranges(plan['shifts'])}")
    if plan["uncovered"]:
        listed = [f"{a}->{b}" for a, b in plan["uncovered_pairs"]]
        more = plan["uncovered"] - len(listed)
        out.append(
            f"# NOT MEASURED: {plan['uncovered']} of {plan['host_pairs']} host pairs "
            f"({plan['covered']} measured): "
            + ", ".join(listed)
            + (f" and {more} more" if more else "")
        )
    else:
        out.append(f"# every one of the {plan['host_pairs']} host pairs measured")
    return out


def _ranges(ks: list[int]) -> str:
    """1, 2, 3, 64, 128 -> '1-3, 64, 128'."""
    parts: list[list[int]] = []
    for k in ks:
        if parts and k == parts[-1][1] + 1:
            parts[-1][1] = k
        else:
            parts.append([k, k])
    return ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in parts)


def matrix_lines(extra: dict) -> list[str]:
    """The host x host matrix of a matrix record: rows send, columns receive; beyond
    MATRIX_UP_TO hosts the WORST host pairs instead."""
    metric, hosts, m = extra["metric"], extra["hosts"], extra["host_matrix"]
    unit = "MB/s" if metric == "bandwidth" else "usec (half round trip)"
    if len(hosts) > MATRIX_UP_TO:
        if "worst_pairs" in extra:
            return worst_lines(metric, hosts, extra["worst_pairs"], unit, m is not None)
        cells = [
            {"median": v, "src": hosts[i], "dst": hosts[j]}
            for i, row in enumerate(m)
            for j, v in enumerate(row)
            if v is not None and i != j
        ]
        cells.sort(key=lambda c: c["median"], reverse=metric == "latency")
        return worst_lines(metric, hosts, cells, unit, True)
    w = max([9, *(len(h) + 1 for h in hosts)])
    out = [
        f"# AllPairs {metric} [{unit}], median per host pair: rows send, columns receive"
        + (
            "; the diagonal: pairs within a host"
            if any(m[i][i] is not None for i in range(len(hosts)))
            else ""
        ),
        f"{'from/to':>{w}}" + "".join(f"{h:>{w}}" for h in hosts),
    ]
    for i, h in enumerate(hosts):
        out.append(f"{h:>{w}}" + "".join(f"{fmt_cell(v, metric):>{w}}" for v in m[i]))
    return out


def worst_lines(metric: str, hosts: list[str], worst: list[dict], unit: str, matrix: bool) -> list:
    """The WORST worst host pairs (worst first); where the matrix is (the file; plot)."""
    where = (
        "the matrix is in the results file (commbench plot draws it)"
        if matrix
        else "one record per host in the results file"
    )
    out = [
        f"# AllPairs {metric} [{unit}]: {len(hosts)} hosts, {where}; "
        f"the {min(WORST, len(worst))} worst host pairs' medians:"
    ]
    out += [f"#   {c['src']} -> {c['dst']}: {fmt_cell(c['median'], metric)}" for c in worst[:WORST]]
    return out


class NetText(TextView):
    def __init__(self, out: TextIO = sys.stdout):
        super().__init__(out)
        self.block: str | None = None
        self.pairs: dict[str, list] = {}  # metric -> its host-pair records
        self.verdicts_seen = False

    def start(self, header: dict) -> None:
        cfg, meta = header["config"], header["metadata"]
        s = NetSettings.of(cfg["params"])
        self.p(LINE, f"#    commbench {meta['commbench_version']}, net: cluster diagnosis", LINE)
        for label, v in (
            ("Date", meta["date_asctime"]),
            ("MPI Version", meta["mpi_version"]),
            ("Processes", meta["world_size"]),
        ):
            self.p(f"# {label:<12}: {v}")
        per_host = meta.get("ranks_per_host", {})
        self.p(
            f"# {'Hosts':<12}: {len(per_host)} ("
            + ", ".join(f"{h}: {n}" for h, n in per_host.items())
            + ")",
            f"# {'Benchmarks':<12}: {' '.join(cfg['benchmarks'])}",
            f"# {'Settings':<12}: {s.samples} samples per step within -time {cfg['secs']:g} s; "
            f"latency {s.small} bytes, bandwidth {s.large} bytes; AllPairs shifts {s.shifts}; "
            f"thresholds {s.threshold:g} "
            f"(latency {s.latency_threshold:g}); {s.rings} random rings; {s.rounds} bisection "
            f"rounds; seed {s.seed}",
        )
        self.header_notes(header)
        self.out.flush()

    def _head(self, name: str, title: str, columns: str = "") -> None:
        if self.block == name:
            return
        self.block = name
        self.p("", LINE, f"# {title}", LINE, *([columns] if columns else []))

    def record(self, rec: records.Measurement) -> None:
        handler = {
            "AllPairs": self._allpairs,
            "Rings": self._ring,
            "Bisection": self._bisection,
            "FanIn": self._fan,
            "FanOut": self._fan,
            "Verdicts": self._verdicts,
        }.get(rec.benchmark)
        if rec.status != records.OK:
            self.p(f"# {rec.benchmark} {rec.mode}: {rec.status}: {rec.message}")
        elif handler is not None:
            handler(rec)
        self.out.flush()

    def _allpairs(self, rec: records.Measurement) -> None:
        metric = rec.extra.get("metric", "")
        if "shift" in rec.extra or "host" in rec.extra:  # a step; a host (beyond --net-host-pairs)
            return
        if "host_matrix" not in rec.extra:
            self.pairs.setdefault(metric, []).append(rec)
            return
        plan = rec.extra.get("plan")
        steps = f"{plan['steps']} of" if plan and plan["rule"] != "all" else "all"
        self._head(
            f"AllPairs {metric}",
            f"AllPairs {metric}: {rec.bytes} bytes, {rec.np} processes, "
            f"{steps} P-1 = {rec.np - 1} shift steps",
        )
        self.p(*plan_lines(rec.extra), *matrix_lines(rec.extra))
        if "summary" in rec.extra:
            self._summary(rec)
            return
        inter = [r.extra["stats"] for r in self.pairs.get(metric, []) if not r.extra.get("intra")]
        intra = [r.extra["stats"] for r in self.pairs.get(metric, []) if r.extra.get("intra")]
        for label, group in (("between hosts", inter), ("within hosts", intra)):
            if group:
                meds = sorted(st["median"] for st in group)
                binned = sum(1 for st in group if st.get("exact") is False)
                self.p(
                    f"# {label}: {len(group)} host pairs, medians {fmt_cell(meds[0], metric)} .. "
                    f"{fmt_cell(meds[-1], metric)}, {sum(st['n'] for st in group)} samples"
                    + (
                        f" ({binned} host pairs beyond {rec.extra['aggregate']['raw_up_to']} "
                        "samples: statistics from a histogram, "
                        f"{rec.extra['aggregate']['histogram_resolution']:.1%} buckets)"
                        if binned
                        else ""
                    )
                )

    def _summary(self, rec: records.Measurement) -> None:
        """Beyond --net-host-pairs hosts: records per host, the host pairs summarised."""
        metric, agg = rec.extra["metric"], rec.extra["aggregate"]
        self.p(
            f"# {len(rec.extra['hosts'])} hosts: a record per host (its pairs with the other "
            "hosts), not per host pair (--net-host-pairs)"
        )
        for label, st in rec.extra["summary"].items():
            binned = st["beyond_raw"]
            self.p(
                f"# {label}: {st['host_pairs']} host pairs, medians "
                f"{fmt_cell(st['median_min'], metric)} .. {fmt_cell(st['median_max'], metric)}, "
                f"{st['samples']} samples"
                + (
                    f" ({binned} host pairs beyond {agg['raw_up_to']} samples: their hosts' "
                    f"statistics from a histogram, {agg['histogram_resolution']:.1%} buckets)"
                    if binned
                    else ""
                )
            )

    def _ring(self, rec: records.Measurement) -> None:
        self._head(
            "Rings",
            f"Rings (HPCC): exchange with both neighbours at once, {rec.np} processes",
            f"{'ring':>22} {'#bytes':>10} {'#samples':>9} {'t[usec]':>12} {'Mbytes/sec':>12}\n"
            "# t: the slowest rank's median time of one step (2 sends, 2 receives); Mbytes/sec: "
            "2 x #bytes / t",
        )
        v = rec.values
        rate = (
            f"{v.get('bytes_per_sec', 0.0) / MB:.2f}"
            if rec.extra.get("metric") == "bandwidth"
            else "-"
        )
        self.p(
            f"{rec.mode:>22} {rec.bytes:>10} {rec.repetitions:>9} "
            f"{v.get('t_max', 0.0):>12.2f} {rate:>12}"
        )

    def _bisection(self, rec: records.Measurement) -> None:
        self._head(
            "Bisection",
            f"Bisection: random perfect matchings, {rec.bytes} bytes both ways per pair",
            f"{'round':>22} {'#pairs':>8} {'min MB/s':>12} {'median MB/s':>12} {'max MB/s':>12} "
            f"{'sum MB/s':>12}",
        )
        if "stats" in rec.extra:
            st = rec.extra["stats"]
            if st.get("n"):
                self.p(
                    f"# per-pair bandwidth over {rec.extra.get('rounds')} rounds ({st['n']} "
                    f"pairs), MB/s: min {st['min'] / MB:.1f}, p10 {st['p10'] / MB:.1f}, median "
                    f"{st['median'] / MB:.1f}, p90 {st['p90'] / MB:.1f}, max {st['max'] / MB:.1f}"
                )
            return
        bws = sorted(bw for _, _, bw in rec.extra.get("pairs", []))
        if bws:
            self.p(
                f"{rec.mode:>22} {len(bws):>8} {bws[0] / MB:>12.1f} "
                f"{statistics.median(bws) / MB:>12.1f} {bws[-1] / MB:>12.1f} "
                f"{rec.extra.get('sum_bytes_per_sec', 0.0) / MB:>12.1f}"
            )

    def _fan(self, rec: records.Measurement) -> None:
        inward = rec.benchmark == "FanIn"
        chosen = rec.extra.get("targets", {})
        self._head(
            rec.benchmark,
            f"{rec.benchmark}: {rec.np - 1} ranks {'to' if inward else 'from'} the first "
            f"rank of each host at once, {rec.bytes} bytes each",
            (f"# targets: {chosen['text']}\n" if chosen.get("rule") == "sampled" else "")
            + f"{'host':>12} {'rank':>6} {'#samples':>9} {'median MB/s':>12} {'95% CI MB/s':>20}",
        )
        st = rec.extra.get("stats", {})
        ci = st.get("ci95")
        cis = f"{ci[0] / MB:.1f}..{ci[1] / MB:.1f}" if ci else "-"
        self.p(
            f"{rec.extra.get('host', ''):>12} {rec.extra.get('target', ''):>6} {st.get('n', 0):>9} "
            f"{st.get('median', 0.0) / MB:>12.1f} {cis:>20}"
        )

    def _verdicts(self, rec: records.Measurement) -> None:
        self.verdicts_seen = True
        found = rec.extra.get("verdicts", [])
        self._head(
            "Verdicts",
            f"Verdicts: worse than the population by more than {rec.extra.get('threshold')} "
            f"(latency {rec.extra.get('latency_threshold')}) and beyond both 95% CIs "
            f"({', '.join(rec.extra.get('judged', []))})",
        )
        if len(rec.extra.get("hosts", [])) < 3:
            self.p(
                "# fewer than 3 hosts: a host cannot be told "
                "from its links (3+ hosts needed to name one)"
            )
        if not found:
            self.p("# no host or link stands out")
        for v in found:
            why = (
                f" [explained by host {', '.join(v['explained_by'])}]"
                if v.get("explained_by")
                else ""
            )
            self.p(f"SLOW {v['text']}{why}")

    def finish(self, summary: dict) -> None:
        if summary.get("interrupted"):
            self.p("", f"# !! run ended early: {summary['interrupted']}")
            if not self.verdicts_seen:
                self.p("# no verdicts: the run ended before its end")
        self.p("")
        self.out.flush()
