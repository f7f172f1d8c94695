"""The tables of an IMB log: each "# Benchmarking" block's lines (#processes, or the groups
of a -multi run and the processes waiting in MPI_Barrier; MODE; IMB-MT's threads and
window_size), then its column line and its rows. Each row becomes a record whose values
are the columns' numbers (docs/import.md has the mapping); -multi 1's per-group rows of
one size become one record with group_values; IMB's status text (out-of-mem,
int-overflow, time-out) a record of that status; any other row is malformed (LogError).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from commbench import records
from commbench.importers.common import Log, LogError, fixed, integer, numeric, turnover_of
from commbench.importers.imb_header import FAMILIES, Header
from commbench.records import Kind

COLUMNS = {
    "group": "group",
    "#bytes": "bytes",
    "#repetitions": "repetitions",
    "t[usec]": "t",
    "t_min[usec]": "t_min",
    "t_max[usec]": "t_max",
    "t_avg[usec]": "t_avg",
    "mbytes/sec": "bytes_per_sec",
    "msg/sec": "msgs_per_sec",
    "t_ovrl[usec]": "t_ovrl",
    "t_pure[usec]": "t_pure",
    "t_cpu[usec]": "t_cpu",
    "overlap[%]": "overlap",
    "defects": "defects",
}
# How IMB prints each column (IMB_output.c's IMB_edit_format, IMB-P2P's and IMB-MT's own
# printf): sizes and counts "%d", Msg/sec "%.0f", every other number "%.2f".
INTEGERS = {"group", "bytes", "repetitions"}
DECIMALS = {"msgs_per_sec": 0}
STATUSES = {
    "out-of-mem": records.OUT_OF_MEM,
    "int-overflow": records.INT_OVERFLOW,
    "time-out": records.TIMEOUT,
}

BENCH = re.compile(
    r"^#\s+Benchmarking\s+(?P<multi>Multi-)?(?P<name>\S+)\s*(?:\((?P<grid>[^)]*)\))?"
)
PROCS = re.compile(r"^#\s+#processes\s*=\s*(?P<np>\d+)(?:\s*\(threads:\s*(?P<threads>\d+)\))?")
GROUPS = re.compile(r"^#\s+\(\s*(?P<n>\d+)\s+groups?\s+of\s+(?P<np>\d+)\s+process")
GROUP_RANKS = re.compile(r"^#\s+Group\s+(?P<g>\d+):(?P<ranks>[\s\d]*)$")
MORE_RANKS = re.compile(r"^#(?P<ranks>(?:\s+\d+)+)\s*$")
IDLE = re.compile(r"^#\s+\(\s*(?P<n>\d+)\s+additional\s+process")
MODE = re.compile(r"^#\s+MODE:\s*(?P<mode>\S.*?)\s*$")
WINDOW = re.compile(r"^#\s+window_size\s*=\s*(?P<w>\d+)")
INVALID = re.compile(
    r"^#\s*!!\s*Benchmark\s+(?P<name>\S+)\s+(?:is\s+)?invalid\s+for\s+(?P<np>\d+)\s+process"
)


@dataclass
class Table:
    name: str
    line: int
    multi: bool
    grid: list[int] | None
    np: int = 0
    threads: int | None = None
    groups: list[list[int]] = field(default_factory=list)
    idle: int = 0
    mode: str = ""
    window: int | None = None
    cols: list[str] | None = None
    names: list[str] = field(default_factory=list)  # the column headings as printed
    heads: str = ""  # the column line as printed
    # -multi 1: (group, line, row)
    pending: list[tuple[int, int, dict]] = field(default_factory=list)
    recs: list = field(default_factory=list)


class Tables:
    """The table being read (None between tables) and the records it has made; the tool
    and the Mbytes unit are the header's."""

    def __init__(self, log: Log, header: Header):
        self.log = log
        self.header = header
        self.table: Table | None = None

    def table_line(self, n: int, line: str) -> bool:
        t = self.table
        if (m := BENCH.match(line)) is not None:
            self.close()
            grid = (
                [int(v) for v in re.findall(r"\d+", m.group("grid"))] if m.group("grid") else None
            )
            self.table = Table(m.group("name"), n, bool(m.group("multi")), grid)
            self.log.hold = True  # until close() has set the table's turnover
        elif (m := INVALID.match(line)) is not None:
            self.close()
            np_ = int(m.group("np"))
            self.log.add(
                n,
                benchmark=m.group("name"),
                family=FAMILIES.get(self.header.tool, "mpi1"),
                kind=Kind.SINGLE.value,
                np=np_,
                mode="",
                bytes=None,
                repetitions=0,
                status=records.INVALID,
                message=line.strip(),
                world_size=np_,
                values={},
            )
        elif t is None:
            return False
        elif (m := PROCS.match(line)) is not None:
            t.np = int(m.group("np"))
            t.threads = int(m.group("threads")) if m.group("threads") else None
        elif (m := GROUPS.match(line)) is not None:
            t.np = int(m.group("np"))
        elif (m := GROUP_RANKS.match(line)) is not None:
            t.groups.append([int(r) for r in m.group("ranks").split()])
        elif t.groups and t.cols is None and (m := MORE_RANKS.match(line)) is not None:
            t.groups[-1] += [int(r) for r in m.group("ranks").split()]
        elif (m := IDLE.match(line)) is not None:
            t.idle = int(m.group("n"))
        elif (m := MODE.match(line)) is not None:
            t.mode = m.group("mode")
        elif (m := WINDOW.match(line)) is not None:
            t.window = int(m.group("w"))
        else:
            return False
        return True

    def column_line(self, n: int, line: str) -> bool:
        toks = [c.lower() for c in line.split()]
        if not toks or "#repetitions" not in toks or any(c not in COLUMNS for c in toks):
            return False
        t = self.table
        if t is None:
            raise LogError(n, "a column line before any '# Benchmarking' line")
        if not t.np:
            raise LogError(
                n, f"the table of {t.name} (line {t.line}) has no '# #processes = N' line"
            )
        self.close_rows()
        t.cols, t.names, t.heads = [COLUMNS[c] for c in toks], line.split(), " ".join(line.split())
        return True

    def row(self, n: int, line: str) -> None:
        t = self.table
        toks = line.split()
        if len(toks) != len(t.cols) or not all(numeric(x) for x in toks):
            self.status_row(n, line, toks)
            return
        d: dict = {}
        for c, head, tok in zip(t.cols, t.names, toks):
            if c in INTEGERS:
                d[c] = integer(tok, n, head)
            elif (v := fixed(tok, DECIMALS.get(c, 2), n, head, self.header.tool)) is not None:
                d[c] = v
            else:
                d[c] = None
                self.log.warn(n, f"{t.name}: {head} printed as {tok!r}, left out of the record")
        group = d.pop("group", None)
        x = d.pop("bytes", None)
        reps = d.pop("repetitions")
        if group is None:
            self.emit(n, x, reps, [d])
            return
        if t.pending and (t.pending[0][2]["x"] != x or group <= t.pending[-1][0]):
            self.close_rows()
        t.pending.append((group, n, {"x": x, "reps": reps, "d": d}))

    def status_row(self, n: int, line: str, toks: list[str]) -> None:
        t = self.table
        hit = re.search(r"(out-of-mem|int-overflow|time-out)\.?;?\s*(.*)$", line)
        heads = toks[: 2 if "group" in t.cols else 1]
        if hit is None or not all(h.isdigit() for h in heads):
            cut = " (the log seems cut here)" if len(toks) < len(t.cols) else ""
            raise LogError(
                n,
                f"a row of the {t.name} table should hold {len(t.cols)} numbers "
                f"({t.heads}), it holds {line.strip()!r}{cut}",
            )
        self.close_rows()
        self.emit(
            n,
            integer(heads[-1], n, "#bytes") if "bytes" in t.cols else None,
            0,
            [{}],
            status=STATUSES[hit.group(1)],
            message=hit.group(2).strip(),
        )

    def close_rows(self, strict: bool = True) -> None:
        """-multi 1: the groups' rows of one size become one record, when every group's row
        is there (else the log was cut between them: LogError, or, not strict, no record)."""
        t = self.table
        if t is None or not t.pending:
            return
        rows, t.pending = t.pending, []
        first = rows[0][2]
        if t.groups and len(rows) != len(t.groups):
            if not strict:
                return
            raise LogError(
                rows[0][1],
                f"the -multi 1 rows of size {first['x']} of {t.name} hold {len(rows)} of the "
                f"{len(t.groups)} groups' rows: the log was cut (or edited) between them, and "
                "the size is not imported (accepted: one row per group, as IMB prints them)",
            )
        self.emit(rows[0][1], first["x"], first["reps"], [r[2]["d"] for r in rows])

    def close(self, strict: bool = True) -> None:
        """The table is over: its turnover into each of its records, which are then final."""
        t = self.table
        if t is None:
            return
        self.close_rows(strict)
        rate = [
            (r.bytes, r.values.get("t", 0.0), r.values.get("bytes_per_sec", 0.0)) for r in t.recs
        ]
        turnover = turnover_of(rate)
        for r in t.recs:
            r.turnover = turnover
        self.table = None
        self.log.hold = False
        self.log.settle()

    def emit(
        self,
        n: int,
        x: int | None,
        reps: int,
        rows: list[dict],
        status: str = records.OK,
        message: str = "",
    ) -> None:
        t = self.table
        cols = set(t.cols)
        kind = kind_of(cols, t.np)
        per_group = [self.values(d) for d in rows]
        values = per_group[0] if len(per_group) == 1 else aggregate(per_group)
        defects = max((d["defects"] for d in rows if d.get("defects") is not None), default=None)
        extra = {
            k: v
            for k, v in (("threads", t.threads), ("window_size", t.window), ("grid", t.grid))
            if v
        }
        if defects is not None:
            extra["check"] = records.check_verdict(defects)
        groups = t.groups or [list(range(t.np))]
        rec = self.log.add(
            n,
            benchmark=t.name,
            family=FAMILIES.get(self.header.tool, "mpi1"),
            kind=kind,
            np=t.np,
            mode=t.mode,
            bytes=x,
            repetitions=reps,
            status=status,
            message=message,
            groups=groups,
            world_size=sum(len(g) for g in groups) + t.idle,
            components=COMPONENTS.get(kind, ["t"]),
            values=values if status == records.OK else {},
            defects=defects,
            extra=extra,
            group_values=per_group if len(per_group) > 1 and status == records.OK else [],
        )
        t.recs.append(rec)

    def values(self, d: dict) -> dict:
        out = {k: v for k, v in d.items() if v is not None and k != "defects"}
        if "bytes_per_sec" in out:
            out["bytes_per_sec"] *= self.header.unit
        if "t" in out:
            out["t_max"] = out["t"]
        elif "t_max" in out:
            out["t"] = out["t_max"]
        return out


COMPONENTS = {
    Kind.OVERLAP.value: ["t_ovrl", "t_pure", "t_cpu"],
    Kind.OVERLAP_SYNC.value: ["t_ovrl", "t_pure", "t_cpu"],
    Kind.PASSIVE.value: ["t_pure", "t_ovrl"],
}


def kind_of(cols: set[str], np_: int) -> str:
    """The record kind a table's columns say (docs/import.md)."""
    if "t_cpu" in cols:
        return Kind.OVERLAP.value if "bytes" in cols else Kind.OVERLAP_SYNC.value
    if "t_pure" in cols:
        return Kind.PASSIVE.value
    if "bytes" not in cols:
        return Kind.SYNC.value
    if "t_min" in cols:
        return Kind.PARALLEL.value if "bytes_per_sec" in cols else Kind.COLLECTIVE.value
    if "t" in cols:
        return Kind.SINGLE.value if np_ <= 2 else Kind.MULTIPLE.value
    return Kind.RATE.value


def aggregate(groups: list[dict]) -> dict:
    """-multi 1 prints one row per group; the record's values over all of them: the
    smallest t_min, the largest t_max (and t), the mean t_avg (groups of equal size),
    the smallest rates (those of the slowest group)."""
    out: dict = {}
    for k in dict.fromkeys(k for g in groups for k in g):  # the columns' order, not a set's
        vs = [g[k] for g in groups if k in g]
        if k in ("t_min",):
            out[k] = min(vs)
        elif k.startswith("t"):
            out[k] = sum(vs) / len(vs) if k == "t_avg" else max(vs)
        else:
            out[k] = min(vs)
    return out
