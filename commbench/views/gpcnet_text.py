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
from commbench.suites.gpcnet.settings import Settings

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


class GpcnetText:
    def __init__(self, out: TextIO = sys.stdout):
        self.out = out
        self.s = Settings()
        self.table: str | None = None
        self.meta: dict = {}

    def p(self, line: str = "") -> None:
        self.out.write(line + "\n")

    @property
    def width(self) -> int:
        return 140 if self.s.verbose else 80

    def start(self, header: dict) -> None:
        cfg, self.meta = header["config"], header["metadata"]
        self.s = Settings.of(cfg["params"])
        hosts = self.meta.get("ranks_per_host", {})
        one = len(hosts) < 2
        self.p(LINE)
        self.p(
            f"#    commbench {self.meta['commbench_version']}, gpcnet: GPCNeT 1.3's network "
            "tests and congestion"
        )
        self.p(LINE)
        self.p(
            f"# Processes   : {self.meta['world_size']} on {len(hosts)} hosts "
            f"({', '.join(f'{h}: {n}' for h, n in hosts.items())})"
        )
        self.p(
            f"# Budget      : -time {cfg['secs']:g} s per test (GPCNeT: 10 s), "
            f"{self.s.rings} rings per measurement (GPCNeT: 30)"
        )
        if one:
            self.p(
                "# ONE HOST: every rank stands in for a host; the figures are of shared "
                "memory, not of a network (GPCNeT refuses to run on one node)"
            )
        for note in header.get("notes", []):
            self.p(note if note.startswith("#") else f"# {note}")
        self.out.flush()

    def _open_table(self, phase: str) -> None:
        key = phase or "isolated"
        if self.table == key:
            return
        self.table = key
        self.p("")
        if self.s.layout:
            self.p(outer(self.width))
            self.p(title(TITLES[phase], self.width))
            for line in header_rows(self.s.verbose):
                self.p(line)
        else:
            self.p(LINE)
            self.p(
                f"# {TITLES[phase]}: Avg [95 % CI], 99 % [95 % CI] (bandwidth: the value "
                "99 % of the samples reach)"
            )
            self.p(LINE)
            self.p(
                f"{'Name':>32} {'Avg':>10} {'':>22} {'99%':>10} {'':>22} {'Units':>11} "
                f"{'samples':>9}"
            )

    def record(self, rec: records.Measurement) -> None:
        if rec.status != records.OK:
            self.p(f"# {rec.benchmark} {rec.mode}: {rec.status}: {rec.message}")
        elif rec.benchmark == "Congestion":
            from commbench.views.gpcnet_load import congestion_lines

            for line in congestion_lines(rec, self.s, self.width):
                self.p(line)
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
            for line in gpcnet_table_rows(row, self.s.verbose):
                self.p(line)
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
