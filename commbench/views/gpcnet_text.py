"""The text of a gpcnet run: commbench's rows (Avg and 99 % with their 95 % intervals, the
samples behind them) or, with --gpcnet-layout, GPCNeT 1.3's own tables (80 columns; 140
with --gpcnet-verbose), so scripts that read GPCNeT's output read commbench's.

Congestion prints who played which role, the victims' tests alone and beside the
congestors, the impact factors (commbench adds their intervals and each victim host's
factors) and the verdicts. `commbench report FILE` replays a results file through this.
"""

from __future__ import annotations

import statistics
import sys
from typing import TextIO

from commbench import records
from commbench.suites.gpcnet.settings import GpcnetSettings
from commbench.views import TextView

LINE = "#" + "-" * 70
COLS = (34, 49, 64, 79)
VCOLS = (34, 49, 64, 79, 94, 109, 124, 139)
TITLES = {
    "": "Isolated Network Tests",
    "isolated": "Isolated Network Tests",
    "loaded": "Network Tests running with Congestion Tests",
}


def bar(width: int, cols: tuple) -> str:
    s = ["-"] * width
    for c in (0, *cols):
        s[c] = "+"
    return "".join(s)


def outer(width: int) -> str:
    return "+" + "-" * (width - 2) + "+"


def title(text: str, width: int) -> str:
    inner = width - 4
    left = (inner - len(text)) // 2
    return "| " + " " * left + text + " " * (inner - left - len(text)) + " |"


def cells(name: str, vals: list, units: str) -> str:
    def num(v) -> str:
        return f"{v:12.1f}" if isinstance(v, (int, float)) else f"{v:>12}"

    return "| " + f"{name[:31]:>31}" + "".join(f" | {num(v)}" for v in vals) + f" | {units:>12} |"


def gpcnet_table_rows(row: dict, verbose: bool) -> list[str]:
    keys = ("min", "max", "avg", "avg_worst", "p99", "p999") if verbose else ("avg", "p99")
    width, cols = (140, VCOLS) if verbose else (80, COLS)
    return [cells(row["name"], [row.get(k) or 0.0 for k in keys], row["units"]), bar(width, cols)]


def header_rows(verbose: bool) -> list[str]:
    names = ["Min", "Max", "Avg", "Avg(Worst)", "99%", "99.9%"] if verbose else ["Avg", "99%"]
    width, cols = (140, VCOLS) if verbose else (80, COLS)
    return [bar(width, cols), cells("Name", names, "Units"), bar(width, cols)]


def ci(v) -> str:
    return f"[{v[0]:.1f}, {v[1]:.1f}]" if v else "[-]"


class GpcnetText(TextView):
    def __init__(self, out: TextIO = sys.stdout):
        super().__init__(out)
        self.s = GpcnetSettings()
        self.table: str | None = None
        self.meta: dict = {}

    @property
    def width(self) -> int:
        return 140 if self.s.verbose else 80

    def start(self, header: dict) -> None:
        cfg, self.meta = header["config"], header["metadata"]
        self.s = GpcnetSettings.of(cfg["params"])
        hosts = self.meta.get("ranks_per_host", {})
        one = len(hosts) < 2
        self.p(
            LINE,
            f"#    commbench {self.meta['commbench_version']}, gpcnet: GPCNeT 1.3's network "
            "tests and congestion",
            LINE,
            f"# Processes   : {self.meta['world_size']} on {len(hosts)} hosts "
            f"({', '.join(f'{h}: {n}' for h, n in hosts.items())})",
            f"# Budget      : -time {cfg['secs']:g} s per test (GPCNeT: 10 s), "
            f"{self.s.rings} rings per measurement (GPCNeT: 30)",
        )
        if one:
            self.p(
                "# ONE HOST: every rank stands in for a host; the figures are of shared "
                "memory, not of a network (GPCNeT refuses to run on one node)"
            )
        self.header_notes(header)
        self.out.flush()

    def _open_table(self, phase: str) -> None:
        key = phase or "isolated"
        if self.table == key:
            return
        self.table = key
        self.p("")
        if self.s.layout:
            self.p(
                outer(self.width), title(TITLES[phase], self.width), *header_rows(self.s.verbose)
            )
        else:
            self.p(
                LINE,
                f"# {TITLES[phase]}: Avg [95 % CI], 99 % [95 % CI] (bandwidth: the value "
                "99 % of the samples reach)",
                LINE,
                f"{'Name':>32} {'Avg':>10} {'':>22} {'99%':>10} {'':>22} {'Units':>11} "
                f"{'samples':>9}",
            )

    def record(self, rec: records.Measurement) -> None:
        if rec.status != records.OK:
            self.p(f"# {rec.benchmark} {rec.mode}: {rec.status}: {rec.message}")
        elif rec.benchmark == "Congestion":
            self.p(*congestion_lines(rec, self.s, self.width))
            self.table = None
        elif rec.benchmark == "Links":
            self._links(rec)
        else:
            self._row(rec)
        self.out.flush()

    def _links(self, rec: records.Measurement) -> None:
        """commbench's link probe: not a GPCNeT row (nothing in its layout)."""
        if self.s.layout:
            return
        pairs = rec.extra.get("links", {})
        meds = sorted(rec.bytes / (statistics.median(ts) * 2**20) for ts in pairs.values() if ts)
        if meds:
            self.p(
                f"{'Links (commbench, 131072 B)':>32} {statistics.median(meds):10.1f} "
                f"{'(median of the host pairs,':>22} {meds[0]:10.1f} {'the slowest pair)':>22} "
                f"{'MiB/s':>11} {len(pairs):>9}"
            )

    def _row(self, rec: records.Measurement) -> None:
        row, st = rec.extra["gpcnet"], rec.extra.get("stats", {})
        self._open_table(rec.mode)
        if self.s.layout:
            self.p(*gpcnet_table_rows(row, self.s.verbose))
            return
        self.p(
            f"{row['name']:>32} {row['avg'] or 0:10.1f} {ci(st.get('avg_ci')):>22} "
            f"{row['p99'] or 0:10.1f} {ci(st.get('p99_ci')):>22} {row['units']:>11} "
            f"{st.get('samples', 0):>9}"
        )
        if self.s.verbose:
            self.p(
                f"{'':>32} min {row['min']:.1f}, max {row['max']:.1f}, worst rank's avg "
                f"{row['avg_worst']:.1f}, 99.9 % {row['p999']:.1f}; "
                f"{st.get('measurements', 0)} measurements"
            )

    def finish(self, summary: dict) -> None:
        self.out.flush()


# ---------------------------------------------------------------- the Congestion records: roles,
# impact factors, verdicts; in commbench's layout or, with --gpcnet-layout, network_load_test's
# key results table

KEY_BAR = "+" + "-" * 33 + "+" + "-" * 22 + "+" + "-" * 21 + "+"


def congestion_lines(rec: records.Measurement, s, width: int) -> list[str]:
    if rec.mode == "roles":
        return roles_lines(rec.extra, s.layout)
    if rec.mode == "impact":
        return impact_lines(rec.extra, s.layout)
    return []


def roles_lines(x: dict, layout: bool) -> list[str]:
    groups = x["congestors"]
    n_c = sum(len(v) for v in groups.values())
    if layout:
        least = min((len(v) for v in groups.values()), default=0)
        return [
            "",
            "NetworkLoad Tests (commbench, GPCNeT 1.3's layout)",
            f"  {len(x['victims'])} nodes running Network Tests",
            f"  {n_c} nodes running Congestion Tests (min {least} nodes per congestor)",
        ]
    out = ["", LINE, "# Congestion: roles (by host)", LINE]
    out.append(f"# victims   : {', '.join(x['victims'])}")
    for kind, hs in groups.items():
        out.append(f"# {kind:<10}: {', '.join(hs)}")
    if x.get("left_out"):
        out.append(f"# not run   : {', '.join(x['left_out'])} (each needs 2 hosts of its own)")
    if x.get("idle"):
        out.append(f"# idle      : {', '.join(x['idle'])}")
    out.append(f"# scale     : {x['scale_note']}")
    return out


def _x(v) -> str:
    return f"{v:.2f}x" if v is not None else "-"


def _ci(c) -> str:
    return f"[{c[0]:.2f}, {c[1]:.2f}]" if c else "[-]"


def impact_lines(x: dict, layout: bool) -> list[str]:
    if layout:
        out = [
            "",
            outer(80),
            title("Network Tests running with Congestion Tests - Key Results", 80),
        ]
        out += [
            "+" + "-" * 33 + "+" + "-" * 44 + "+",
            f"| {'Name':>31} | {'Congestion Impact Factor':>42} |",
            KEY_BAR,
            f"| {'':>31} | {'Avg':>20} | {'99%':>19} |",
            KEY_BAR,
        ]
        for t in x["tests"].values():
            g = t["gpcnet"]
            a = f"{g['avg']:.1f}X" if g.get("avg") is not None else "-"
            b = f"{g['p99']:.1f}X" if g.get("p99") is not None else "-"
            out += [f"| {t['name'][:31]:>31} | {a:>20} | {b:>19} |", KEY_BAR]
        return out + verdict_lines(x)
    out = [
        "",
        LINE,
        "# Congestion impact factors (loaded / isolated; bandwidth isolated / loaded)",
        LINE,
        f"{'Name':>32} {'Avg':>8} {'[95 % CI]':>16} {'99%':>8} {'[95 % CI]':>16}",
    ]
    for t in x["tests"].values():
        out.append(
            f"{t['name']:>32} {_x(t['avg']):>8} {_ci(t['avg_ci']):>16} "
            f"{_x(t['p99']):>8} {_ci(t['p99_ci']):>16}"
        )
    out.append("# per victim host (Avg factors; Links: the median of its links' factors)")
    names = ["Links", *[k for k in x["tests"]]]
    out.append(f"{'host':>32} " + " ".join(f"{n[:16]:>17}" for n in names))
    for h, f in x["per_host"].items():
        out.append(f"{h:>32} " + " ".join(f"{_x(f.get(n)):>17}" for n in names))
    out.append("# links (bandwidth of 131072 bytes, median time loaded / alone)")
    for k, v in x["links"].items():
        out.append(
            f"{k:>32} {_x(v['factor']):>8} {_ci(v['ci95']):>16}  "
            f"({v['samples'][0]} + {v['samples'][1]} samples)"
        )
    return out + verdict_lines(x)


def verdict_lines(x: dict) -> list[str]:
    out = ["", LINE, "# Verdicts under load", LINE]
    if x.get("note"):
        out.append(f"# {x['note']}")
    if not x["verdicts"]:
        out.append("# no host or link degrades under load more than the others")
    out += [f"# {v['text']}" for v in x["verdicts"]]
    return out
