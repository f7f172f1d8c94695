"""GPCNeT 1.3's text tables, read back (network_test and network_load_test; no MPI).

    doc = parse(text)
    doc["tables"]["Isolated Network Tests"]["RR Two-sided Lat (8 B)"]["avg"]

parse(text) -> {
    "title": "Network Tests v1.3",          # the banner's line that ends in a version
    "ranks": 4, "nodes": 4,                 # "Test with 4 MPI ranks (4 nodes)"
    "network_nodes": 2, "congestion_nodes": 8,   # load test only, else None
    "tables": {title: {row name: {"avg": 13.4, "p99": 84.4, "units": "usec"}}},
    "impact": {row name: {"avg": 1.2, "p99": 1.1}},   # load test's Key Results, else {}
}

The tables are '|'-separated cells between '+---+' bars: an outer bar, the title
row (one cell), an inner bar, the column header (`Name | Avg | 99% | Units`,
80 columns; the verbose build's `Name | Min | Max | Avg | Avg(Worst) | 99% |
99.9% | Units`, 140 columns: keys min, max, avg, avg_worst, p99, p999), then a
row per test. The load test's "... - Key Results" table has a header of two
rows (`Name | Congestion Impact Factor`, then ` | Avg | 99%`) and rows of
factors such as `1.2X`: those go to "impact". Titles and names are taken with
runs of spaces made one and none after "(" (the verbose load test pads its
per-test titles inside the parentheses: "... (RR Two-sided Lat Network Test)").
A row whose cells do not match its header raises ValueError; a table cut short
(a killed run) keeps the rows it has.
"""

from __future__ import annotations

import re

COLUMNS = {
    "Min": "min",
    "Max": "max",
    "Avg": "avg",
    "Avg(Worst)": "avg_worst",
    "99%": "p99",
    "99.9%": "p999",
    "Units": "units",
}
_TITLE = re.compile(r"^\s*(\S.* v\d[\d.]*)\s*$")  # "Network Tests v1.3"
_RANKS = re.compile(r"Test with (\d+) MPI ranks \((\d+) nodes\)")
_NETWORK = re.compile(r"^\s*(\d+) nodes running Network Tests")
_CONGESTION = re.compile(r"^\s*(\d+) nodes running Congestion Tests")


def _cells(line: str) -> list[str]:
    return [" ".join(c.split()) for c in line.strip()[1:-1].split("|")]


def _number(cell: str, impact: bool) -> float:
    return float(cell[:-1] if impact and cell.endswith("X") else cell)


def _banner(doc: dict, line: str) -> None:
    m = _TITLE.match(line)
    if doc["title"] is None and m:
        doc["title"] = m.group(1)
    for pattern, key in ((_NETWORK, "network_nodes"), (_CONGESTION, "congestion_nodes")):
        m = pattern.match(line)
        if m:
            doc[key] = int(m.group(1))
    m = _RANKS.search(line)
    if m:
        doc["ranks"], doc["nodes"] = int(m.group(1)), int(m.group(2))


class _Table:
    """The table being read: its title, its columns once the header is read, its rows."""

    def __init__(self, title: str, doc: dict):
        self.impact = title.endswith("Key Results")
        self.rows = doc["impact"] if self.impact else doc["tables"].setdefault(title, {})
        self.columns: list[str] | None = None

    def line(self, cells: list[str], where: int) -> None:
        if cells[0] == "Name":
            if not self.impact:
                self.columns = [COLUMNS.get(c, c) for c in cells[1:]]
            return
        if self.impact and cells[0] == "" and self.columns is None:
            self.columns = [COLUMNS.get(c, c) for c in cells[1:]]
            return
        if self.columns is None or len(cells) != len(self.columns) + 1:
            raise ValueError(f"line {where}: row {cells} does not match header {self.columns}")
        row = {}
        for key, cell in zip(self.columns, cells[1:]):
            try:
                row[key] = cell if key == "units" else _number(cell, self.impact)
            except ValueError:
                raise ValueError(f"line {where}: {key} {cell!r} is not a number") from None
        self.rows[cells[0]] = row


def parse(text: str) -> dict:
    """GPCNeT's stdout (or commbench's --gpcnet-layout) -> its banner, tables and impact."""
    doc: dict = {
        "title": None,
        "ranks": None,
        "nodes": None,
        "network_nodes": None,
        "congestion_nodes": None,
        "tables": {},
        "impact": {},
    }
    table: _Table | None = None
    outer = False  # the line before was an outer bar: this one is a title
    for where, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("+") and line.endswith("+") and len(line) > 1:
            outer = "+" not in line[1:-1]
        elif line.startswith("|") and line.endswith("|") and len(line) > 1:
            if outer:
                title = re.sub(r"\( ", "(", " ".join(_cells(line)))
                table, outer = _Table(title, doc), False
            elif table is not None:
                table.line(_cells(line), where)
        else:
            table, outer = None, False
            _banner(doc, raw)
    return doc
