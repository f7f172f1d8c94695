"""IMB's text output as records: IMB-MPI1, -EXT, -RMA, -NBC, -IO, -MPI4, -P2P and -MT,
IMB 4.0 to 2021.x, with or without -multi 0|1.

The header gives the source (banner: version and part; Date, Machine, System,
Release, Version, MPI Version, MPI Thread Environment; the calling sequence
and its options; the list of benchmarks; message lengths and datatypes). Each
"# Benchmarking" block gives one table: #processes (or the groups of a
-multi run, and the processes waiting in MPI_Barrier), MODE, IMB-MT's
threads and window_size, then the column line and the rows. Each row becomes
a record whose values are the columns' numbers (docs/import.md has the
mapping); -multi 1's per-group rows of one size become one record with
group_values. A row that is neither numbers nor IMB's status text (out-of-mem,
int-overflow, time-out) is malformed; a log without IMB's closing line
"# All processes entering MPI_Finalize" was cut (IMB-MT prints none).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from commbench import records
from commbench.importers.common import (
    Log,
    LogError,
    fixed,
    integer,
    numeric,
    options_of,
    turnover_of,
)
from commbench.records import Kind

FAMILIES = {
    "IMB-MPI1": "mpi1",
    "IMB-EXT": "ext",
    "IMB-RMA": "rma",
    "IMB-NBC": "nbc",
    "IMB-IO": "io",
    "IMB-MPI4": "mpi4",
    "IMB-MT": "mt",
    "IMB-P2P": "p2p",
}
# The banner's part -> the executable, where the calling sequence does not name it.
PARTS = (
    ("MPI-1", "IMB-MPI1"),
    ("MPI-2", "IMB-EXT"),
    ("RMA", "IMB-RMA"),
    ("NBC", "IMB-NBC"),
    ("MPI-IO", "IMB-IO"),
    ("MPI-4", "IMB-MPI4"),
    ("MT part", "IMB-MT"),
    ("P2P", "IMB-P2P"),
)
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
FINALIZE = "# All processes entering MPI_Finalize"

BANNER = re.compile(
    r"^#\s+Intel\s*\(R\)\s+MPI\s+Benchmarks\s+(?P<version>.+?),\s*(?P<part>.+?)\s*$"
)
KEY_VALUE = re.compile(
    r"^#\s*(?P<k>Date|Machine|System|Release|Version|MPI Version|MPI Thread Environment)"
    r"\s*:\s*(?P<v>.*?)\s*$"
)
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
LENGTH = re.compile(
    r"^#\s+(?P<which>Minimum|Maximum)\s+(?:message length|io portion)\s+in bytes:\s+(?P<n>\d+)"
)
DATATYPE = re.compile(r"^#\s+(?P<k>MPI_Datatype(?: for reductions)?|MPI_Op)\s*:\s*(?P<v>\S+)")
LISTED = re.compile(r"^# (?:\(Multi-\))?(?P<name>[A-Za-z]\w*)\s*$")


def mb_unit(version: str) -> int:
    """IMB's Mbytes: 2^20 bytes up to IMB 2017, 10^6 from IMB 2018 on."""
    m = re.match(r"\s*(\d+)", version)
    return 2**20 if m and int(m.group(1)) < 2018 else 10**6


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
    pending: list[tuple[int, int, dict]] = field(
        default_factory=list
    )  # -multi 1: (group, line, row)
    recs: list = field(default_factory=list)


class ImbReader:
    def __init__(self, log: Log):
        self.log = log
        self.src = log.source
        self.src.update(format="imb", suite="Intel(R) MPI Benchmarks", tool="IMB", header={})
        self.tool, self.unit = "IMB", 10**6
        self.section: str | None = None
        self.table: Table | None = None
        self.listed: list[str] = []
        self.finalized = False
        self.banner = False

    # -- the header ------------------------------------------------------------
    def header_line(self, n: int, line: str) -> bool:
        m = BANNER.match(line)
        if m:
            self.banner = True
            version, part = m.group("version"), m.group("part")
            tool = next((t for key, t in PARTS if key in part), "IMB")
            self.src.update(version=version, part=part)
            self.tool = tool if self.tool == "IMB" else self.tool
            self.src["tool"], self.unit = self.tool, mb_unit(version)
            return True
        if (m := KEY_VALUE.match(line)) is not None:
            self.src["header"][m.group("k")] = m.group("v")
        elif (m := LENGTH.match(line)) is not None:
            self.src.setdefault("message_lengths", {})[m.group("which").lower()] = int(m.group("n"))
        elif "lengths were user defined" in line:
            self.src["message_lengths"] = "user defined"
        elif (m := DATATYPE.match(line)) is not None:
            self.src.setdefault("datatypes", {})[m.group("k")] = m.group("v")
        elif line.startswith("# Calling sequence was"):
            self.section = "calling"
        elif line.startswith("# List of Benchmarks to run"):
            self.section = "list"
        else:
            return False
        return True

    def section_line(self, line: str) -> bool:
        """The calling sequence (continued over lines) and the list of benchmarks."""
        body = line[1:] if line.startswith("#") else None
        if self.section == "calling":
            seq = self.src.get("calling_sequence")
            if body is not None and body.strip() and (seq is None or body.startswith("  ")):
                self.src["calling_sequence"] = (seq or []) + body.split()
                if seq is None:
                    exe = body.split()[0].rsplit("/", 1)[-1]
                    self.tool = exe if exe in FAMILIES else self.tool
                    self.src["tool"] = self.tool
                return True
            if seq is None and (not line.strip() or body is not None and not body.strip()):
                return True
        elif self.section == "list" and not line.startswith("# Benchmarking"):
            if (m := LISTED.match(line)) is not None:
                if m.group("name") not in self.listed:
                    self.listed.append(m.group("name"))
                return True
            if (
                not self.listed
                and (not line.strip() or line.strip() == "#")
                or line.startswith("#  ")
            ):
                return True
        self.section = None
        return False

    # -- tables ----------------------------------------------------------------
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
                family=FAMILIES.get(self.tool, "mpi1"),
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
            elif (v := fixed(tok, DECIMALS.get(c, 2), n, head, self.tool)) is not None:
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
            family=FAMILIES.get(self.tool, "mpi1"),
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
            out["bytes_per_sec"] *= self.unit
        if "t" in out:
            out["t_max"] = out["t"]
        elif "t_max" in out:
            out["t"] = out["t_max"]
        return out

    # -- the whole log ---------------------------------------------------------
    def feed(self, n: int, raw: str) -> None:
        line = raw.rstrip()
        t = self.table
        if (
            t is not None
            and t.cols is not None
            and line
            and not line.startswith("#")
            and line[0] in " \t0123456789"
        ):
            self.row(n, line)
            return
        if t is not None and t.cols is not None and line.startswith("#"):
            self.close()
        if self.section and self.section_line(line):
            return
        if line.startswith(FINALIZE):
            self.close()
            self.finalized = True
        elif line.startswith("#"):
            if not self.table_line(n, line):
                self.header_line(n, line)
        elif (
            line.strip()
            and not self.column_line(n, line)
            and line[0] in " \t"
            and numeric(line.split()[0])
        ):
            where = (
                f"the {t.name} table (line {t.line}) has no column line"
                if t
                else "no '# Benchmarking' line"
            )
            raise LogError(n, f"a table row where none can be: {where} before it")

    def finish(self, nlines: int) -> None:
        self.close()
        self.log.world_size = self.log.largest_world or None
        if not self.banner:
            raise LogError(
                1, "no IMB banner ('#    Intel(R) MPI Benchmarks <version>, <part>') in the log"
            )
        if not self.finalized and self.tool != "IMB-MT":
            raise LogError(
                nlines,
                f"the log ends before IMB's closing line '{FINALIZE}': it was cut "
                f"(or the run ended early); the {self.log.count} rows before are kept",
            )


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
    for k in set().union(*groups):
        vs = [g[k] for g in groups if k in g]
        if k in ("t_min",):
            out[k] = min(vs)
        elif k.startswith("t"):
            out[k] = sum(vs) / len(vs) if k == "t_avg" else max(vs)
        else:
            out[k] = min(vs)
    return out


def read(log: Log, lines) -> None:
    """lines: the log's lines without their ends, from the first (a list, or the stream)."""
    r = ImbReader(log)
    n = 0
    try:
        for n, line in enumerate(lines, start=1):
            r.feed(n, line)
        r.finish(n)
    finally:
        r.close(
            strict=False
        )  # what was read before an error: a size whose groups were cut short is left out
        _describe(r, log)


def _describe(r: ImbReader, log: Log) -> None:
    """What the header said, as the results file's metadata, config and family."""
    src, head = r.src, r.src["header"]
    seq = src.get("calling_sequence") or []
    src["options"] = options_of(seq[1:])
    src["benchmarks_listed"] = r.listed
    src["mb_unit"] = r.unit
    fam = FAMILIES.get(r.tool, "mpi1")
    seen = list(log.benchmarks)
    multi = src["options"].get("-multi")
    log.family = {"name": fam, "title": r.tool, "part": src.get("part", ""), "profile": "imported"}
    log.config = {
        "family": fam,
        "benchmarks": r.listed or seen,
        "mb_unit": r.unit,
        "multi": int(multi) if isinstance(multi, str) and multi.isdigit() else None,
        "argv": seq[1:],
    }
    meta = {
        "date_asctime": head.get("Date"),
        "mpi_version": head.get("MPI Version"),
        "thread_level": head.get("MPI Thread Environment"),
        "calling_sequence": seq,
    }
    if "Machine" in head:
        meta["uname"] = {
            "machine": head.get("Machine", ""),
            "system": head.get("System", ""),
            "release": head.get("Release", ""),
            "version": head.get("Version", ""),
        }
    try:
        meta["date"] = time.strftime(
            "%Y-%m-%dT%H:%M:%S", time.strptime(head.get("Date", ""), "%a %b %d %H:%M:%S %Y")
        )
    except ValueError:
        pass
    log.meta = {k: v for k, v in meta.items() if v not in (None, "", [])}
