"""The text of an imported results file (`commbench import`): where its numbers come from,
then each table in IMB's layout.

The preamble names every source log (tool, version, file, what its header
said); each table has IMB's "# Benchmarking" block (#processes, groups, MODE)
and 13-character columns holding the values the log gave: t[usec] or
t_min/t_max/t_avg, the overlap columns, Mbytes/sec (the file's mb_unit),
Msg/sec, bus Mbytes/sec (nccl-tests' busbw) and any other time the tool
printed (OSU's percentiles). #repetitions is left out where the log does not
state it (OSU without -f).
"""

from __future__ import annotations

import sys
from typing import TextIO

from commbench import records
from commbench.views import TextView

W = 13
TIMES = [("t_min", "t_min[usec]"), ("t_max", "t_max[usec]"), ("t_avg", "t_avg[usec]")]
OTHERS = [
    ("t_ovrl", "t_ovrl[usec]"),
    ("t_pure", "t_pure[usec]"),
    ("t_cpu", "t_CPU[usec]"),
    ("overlap", "overlap[%]"),
    ("bytes_per_sec", "Mbytes/sec"),
    ("bus_bytes_per_sec", "busMbytes/s"),
    ("msgs_per_sec", "Msg/sec"),
]
SHOWN = {k for k, _ in TIMES + OTHERS} | {"t"}


def columns(recs: list[records.Measurement]) -> list[tuple[str, str]]:
    """(value key, heading) of a table's value columns, from the values its records hold."""
    keys = set().union(*(r.values for r in recs))
    if "t_min" in keys:
        cols = [c for c in TIMES if c[0] in keys]
    elif "t" in keys:
        cols = [("t", "t[usec]")]
    else:
        cols = [c for c in TIMES if c[0] in keys]
    cols += [c for c in OTHERS if c[0] in keys]
    cols += [(k, f"{k}[usec]") for k in sorted(keys - SHOWN) if k.startswith("t_")]
    return cols


def import_warnings(log: dict) -> list[str]:
    """What `commbench import` left out of a log's records, as it said then (each kept one,
    and how many more it did not list): the text report and the HTML page show them."""
    out = [str(w) for w in log.get("warnings") or []]
    more = log.get("warnings_not_listed") or 0
    return out + ([f"and {more} more not listed"] if more else [])


class ImportedText(TextView):
    def __init__(self, out: TextIO = sys.stdout):
        super().__init__(out)
        self.tables: dict[tuple, list[records.Measurement]] = {}
        self.mb_unit = 10**6

    def start(self, header: dict) -> None:
        meta, cfg = header.get("metadata", {}), header.get("config", {})
        self.mb_unit = cfg.get("mb_unit") or 10**6
        src = meta.get("source", {})
        line = "#" + "-" * 60
        self.p(
            line,
            (
                f"#    commbench {meta.get('commbench_version', '')}: imported from "
                f"{src.get('tool') or '?'} {src.get('version') or ''}"
            ).rstrip(),
            line,
        )
        for log in src.get("logs", []):
            self.p(
                f"# Source                : {log.get('file')} ({log.get('suite')}, "
                f"{log.get('format')} format, {log.get('lines')} lines)"
            )
            for k, v in (log.get("header") or {}).items():
                self.p(f"# {k:<22}: {v}")
            if log.get("calling_sequence"):
                self.p(f"# Calling sequence      : {' '.join(log['calling_sequence'])}")
            for k, v in (log.get("settings") or {}).items():
                self.p(f"# {k:<22}: {v}")
            self.p(*(f"# Import warning        : {w}" for w in import_warnings(log)))
        imported = meta.get("imported", {})
        if imported:
            self.p(
                f"# Imported              : {imported.get('date')} by "
                f"{' '.join(imported.get('command_line', []))}"
            )
        if self.mb_unit != 10**6:
            self.p("# Mbytes                : 2^20 bytes (IMB before 2018)")
        self.out.flush()

    def record(self, rec: records.Measurement) -> None:
        """Kept until finish: a table's rows may be spread over the log (nccl-tests prints
        out-of-place and in-place on one line)."""
        self.tables.setdefault(self._key(rec), []).append(rec)

    @staticmethod
    def _key(rec: records.Measurement) -> tuple:
        return (
            rec.family,
            *rec.table_key,
            rec.status == records.INVALID,
            rec.extra.get("source", {}).get("log"),
        )

    def _table(self, recs: list[records.Measurement]) -> None:
        first = recs[0]
        if first.status == records.INVALID:
            self.p("", f"# !! Benchmark {first.benchmark} invalid for {first.np} processes !! ")
            return
        ok = [r for r in recs if r.ok]
        cols = columns(ok)
        heads = ["Group"] if any(r.group_values for r in ok) else []
        heads += ["#bytes"] if first.bytes is not None else []
        heads += ["#repetitions"] if any(r.repetitions for r in recs) else []
        self._banner(first, len(heads) + len(cols))
        self.p("".join(f"{h:>{W}}" for h in heads + [c[1] for c in cols]))
        for r in recs:
            if not r.ok:
                self.p(f"{r.bytes or 0:{W}d} {r.status}; {r.message}")
                continue
            rows = list(enumerate(r.group_values)) if "Group" in heads else [(None, r.values)]
            for g, vals in rows:
                cells = [f"{g:{W}d}"] if g is not None else []
                cells += [f"{r.bytes:{W}d}"] if "#bytes" in heads else []
                cells += [f"{r.repetitions:{W}d}"] if "#repetitions" in heads else []
                cells += [self._cell(k, vals) for k, _ in cols]
                self.p("".join(cells))

    def _cell(self, key: str, vals: dict) -> str:
        v = vals.get(key)
        if v is None:
            return f"{'-':>{W}}"
        if key in ("bytes_per_sec", "bus_bytes_per_sec"):
            v = v / self.mb_unit
        return f"{v:{W}.0f}" if key == "msgs_per_sec" else f"{v:{W}.2f}"

    def _banner(self, rec: records.Measurement, ncols: int) -> None:
        dash = "#" + "-" * (W * ncols - 1)
        self.p("", dash)
        multi = "Multi-" if len(rec.groups) > 1 else ""
        grid = rec.extra.get("grid")
        self.p(
            f"# Benchmarking {multi}{rec.benchmark} "
            + (f"({' x '.join(map(str, grid))})" if grid else "")
        )
        if len(rec.groups) > 1:
            self.p(
                f"# ( {len(rec.groups)} groups of {rec.np} processes each running simultaneous ) "
            )
            for g, members in enumerate(rec.groups):
                self.p(f"# Group {g:2d}: " + "".join(f" {m:4d}" for m in members))
        else:
            self.p(f"# #processes = {rec.np or 'not stated in the log'} ")
        if rec.extra.get("threads"):
            self.p(f"# threads per process = {rec.extra['threads']}")
        self.p(dash)
        if rec.mode:
            self.p("#", f"#    MODE: {rec.mode} ", "#")

    def finish(self, summary: dict) -> None:
        for recs in self.tables.values():
            self._table(recs)
        if summary.get("interrupted"):
            self.p("", f"# !! import ended early: {summary['interrupted']}")
        self.p("")
        self.out.flush()
