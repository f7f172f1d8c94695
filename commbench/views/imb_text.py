"""IMB's text output (spec §14), as a view of the records.

It reads only the run header (metadata and resolved config as plain data) and
the records, so the same text can be printed live on rank 0 or rebuilt later
from a results file (`commbench report`).
"""

from __future__ import annotations

import sys
from typing import TextIO

from commbench import records
from commbench.records import Kind

W = 13
SINGLE_KINDS = (Kind.SINGLE.value, Kind.SINGLE_ONE.value)


def dash(ncols: int) -> str:
    return "#" + "-" * (W * ncols - 1)


def columns(rec: records.Measurement, multi: int | None, check: bool, parallel_io: bool = False) -> list[str]:
    """Column tokens of a table (spec §14.3)."""
    kind = rec.kind
    groups = len(rec.groups)
    tmm = ["t_min[usec]", "t_max[usec]", "t_avg[usec]"]
    if kind in SINGLE_KINDS and groups > 1 and multi == 0:
        cols = ["#bytes", "#repetitions", *tmm, "Mbytes/sec"]
    elif kind in SINGLE_KINDS or kind == Kind.MULTIPLE.value:
        cols = ["#bytes", "#repetitions", "t[usec]", "Mbytes/sec"]
    elif kind == Kind.PARALLEL.value:
        cols = ["#bytes", "#repetitions", *tmm, "Mbytes/sec"]
    elif kind == Kind.RATE.value:
        cols = ["#bytes", "#repetitions", "Mbytes/sec", "Msg/sec"]
    elif kind == Kind.COLLECTIVE.value:
        cols = ["#bytes", "#repetitions", *tmm]
    elif kind == Kind.SYNC.value:
        cols = ["#repetitions", *tmm]
    elif kind == Kind.OVERLAP.value:
        cols = ["#bytes", "#repetitions", "t_ovrl[usec]", "t_pure[usec]", "t_CPU[usec]", " overlap[%]"]
    elif kind == Kind.OVERLAP_SYNC.value:
        cols = ["#repetitions", "t_ovrl[usec]", "t_pure[usec]", "t_CPU[usec]", " overlap[%]"]
    elif kind == Kind.PASSIVE.value:
        cols = ["#bytes", "#repetitions", "t_pure[usec]", "t_ovrl[usec]"]
    else:
        cols = ["#bytes", "#repetitions", *tmm]
    if multi == 1 and groups > 1:
        cols = ["Group", *cols]
    if check and rec.defects is not None:
        cols.append("defects")
    return cols


_VALUE_OF = {
    "t[usec]": "t_max", "t_min[usec]": "t_min", "t_max[usec]": "t_max", "t_avg[usec]": "t_avg",
    "t_ovrl[usec]": "t_ovrl", "t_pure[usec]": "t_pure", "t_CPU[usec]": "t_cpu", " overlap[%]": "overlap",
}


def cell(c: str, rec: records.Measurement, values: dict, mb_unit: int, group: int | None = None) -> str:
    """One column's number of a row as IMB prints it, unpadded (the HTML report's cells too)."""
    if c == "Group":
        return f"{group:d}"
    if c == "#bytes":
        return f"{rec.bytes or 0:d}"
    if c == "#repetitions":
        return f"{rec.repetitions:d}"
    if c == "Mbytes/sec":
        return f"{values.get('bytes_per_sec', 0.0) / mb_unit:.2f}"
    if c == "Msg/sec":
        return f"{values.get('msgs_per_sec', 0.0):.0f}"
    if c == "defects":
        return f"{rec.defects or 0.0:.2f}"
    return f"{values.get(_VALUE_OF[c], 0.0):.2f}"


def row(cols: list[str], rec: records.Measurement, values: dict, mb_unit: int, group: int | None = None) -> str:
    return "".join(f"{cell(c, rec, values, mb_unit, group):>{W}}" for c in cols)


# Trailer verdicts of a run that ended early (never stored in records).
INTERRUPTED, NOT_RUN = "interrupted", "not run"


def methodology_line(cfg: dict) -> str:
    """How this run times and roots its collectives (commbench.methodology), in one line."""
    m = cfg.get("methodology") or {}
    if not m:
        return "imb4"
    timing = f"-sync on ({m['sync']} barrier(s) after each call)" if m["sync"] else "-sync off (loop timed)"
    return (f"{m['name']}: {timing}, -root_shift {'on' if m['root_shift'] else 'off'}, "
            f"PingPong source {'any' if m['any_source'] else 'partner'}, warm-up "
            f"{('every size' if m['warmup_each_size'] else 'first size') if m['warmup'] else 'off'}, "
            f"CPU exploit {m.get('cpu_matrix', 100)}x{m.get('cpu_matrix', 100)}")


class ImbText:
    """Prints IMB's preamble, tables and trailer as records arrive."""

    def __init__(self, out: TextIO = sys.stdout):
        self.out = out
        self.key: tuple | None = None
        self.cols: list[str] = []
        self.current: str | None = None
        self.verdicts: dict[str, str] = {}  # benchmark -> records.SUCCESSFUL | FAILED | NOT_CHECKED
        self.cfg: dict = {}

    def p(self, line: str = "") -> None:
        self.out.write(line + "\n")

    # -- preamble -------------------------------------------------------------
    def start(self, header: dict) -> None:
        cfg, meta, fam = header["config"], header["metadata"], header["family"]
        self.cfg = cfg
        for note in header.get("notes", []):
            self.p(note)
        line = "#" + "-" * 60
        self.p(line)
        self.p(f"#    commbench {meta['commbench_version']}, {fam['part']}    ")
        self.p(line)
        u = meta["uname"]
        self.p(f"# Date                  : {meta['date_asctime']}")
        self.p(f"# Machine               : {u['machine']}")
        self.p(f"# System                : {u['system']}")
        self.p(f"# Release               : {u['release']}")
        self.p(f"# Version               : {u['version']}")
        self.p(f"# MPI Version           : {meta['mpi_version']}")
        self.p(f"# MPI Thread Environment: {meta['thread_level']}")
        self.p("")
        self.p("")
        self.p("# The number of repetitions per message size is cut down at run time")
        self.p("# when one size is expected to run longer than SECS_PER_SAMPLE")
        self.p(f"# ({cfg['secs']:g} s, set with -time); see -iter and -iter_policy.")
        self.p("")
        self.p("")
        self.p("")
        self.p("# Calling sequence was: ")
        self.p("")
        self.p("#" + "".join(" " + a for a in meta["calling_sequence"]))
        self.p("")
        io = fam["profile"] == "io"
        if cfg["msglen"] is not None:
            self.p("# IO lengths were user defined" if io else "# Message lengths were user defined")
        else:
            what = "io portion" if io else "message length"
            self.p(f"# Minimum {what} in bytes:   0")
            self.p(f"# Maximum {what} in bytes:   {2 ** cfg['maxlog']}")
        if not io:
            self.p("#")
            params = cfg.get("params", {})
            self.p(f"# MPI_Datatype                   :   MPI_{params.get('mpi1_data_type', 'byte').upper()} ")
            self.p(f"# MPI_Datatype for reductions    :   MPI_{params.get('mpi1_red_data_type', 'float').upper()}")
            self.p("# MPI_Op                         :   MPI_SUM  ")
            self.p(f"# Methodology                    :   {methodology_line(cfg)}")
            self.p("#")
            self.p("#")
        for extra in header.get("preamble_extra", []):
            self.p(extra)
        self.p("")
        self.p("# List of Benchmarks to run:")
        self.p("")
        prefix = "(Multi-)" if cfg["multi"] is not None else ""
        comments = header.get("comments", {})
        for name in cfg["benchmarks"]:
            self.p(f"# {prefix}{name}")
            if comments.get(name):
                self.p("#     Comments on this Benchmark:")
                for c in comments[name]:
                    self.p(f"#     {c}")

    # -- tables ---------------------------------------------------------------
    def record(self, rec: records.Measurement) -> None:
        if self.current is not None and rec.benchmark != self.current:
            self._close_benchmark()
        self.current = rec.benchmark
        if rec.status == records.INVALID:
            self.p("")
            self.p(f"# !! Benchmark {rec.benchmark} invalid for {rec.np} processes !! ")
            self.p("")
            self.key = None
            return
        # With --engine both each engine's rows form a table of their own.
        key = (*rec.table_key, rec.extra.get("engine") if self.cfg.get("engine") == "both" else None)
        if key != self.key:
            self.key = key
            self.cols = columns(rec, self.cfg.get("multi"), self.cfg.get("check", False))
            self._table_header(rec)
        self._verdict(rec)
        mb = self.cfg.get("mb_unit", 10**6)
        if rec.status != records.OK:
            self.p(f"{rec.bytes or 0:{W}d} {rec.status}.; {rec.message}")
            return
        if self.cfg.get("multi") == 1 and len(rec.groups) > 1:
            self.p("")
            for g, vals in enumerate(rec.group_values):
                self.p(row(self.cols, rec, vals, mb, group=g))
        else:
            self.p(row(self.cols, rec, rec.values, mb))

    def _table_header(self, rec: records.Measurement) -> None:
        d = dash(len(self.cols))
        ngroups = len(rec.groups)
        self.p("")
        self.p(d)
        if ngroups > 1:
            self.p(f"# Benchmarking Multi-{rec.benchmark} ")
            self.p(f"# ( {ngroups} groups of {rec.np} processes each running simultaneous ) ")
            for g, members in enumerate(rec.groups):
                self._rank_lines(f"# Group {g:2d}: ", members)
                self.p("# ")
        else:
            self.p(f"# Benchmarking {rec.benchmark} ")
            m = self.cfg.get("map")
            if m and m[0] > 1 and m[1] > 1 and ngroups == 1:
                self.p(f"# #processes = {rec.np}; rank order (rowwise): ")
                members = rec.groups[0]
                for i in range(0, len(members), m[1]):
                    self.p("# " + "".join(f" {r:4d}" for r in members[i : i + m[1]]))
                    self.p("# ")
            else:
                self.p(f"# #processes = {rec.np} ")
        idle = rec.world_size - sum(len(g) for g in rec.groups)
        if idle > 0:
            self.p(f"# ( {idle} additional {'process' if idle == 1 else 'processes'} waiting in MPI_Barrier)")
        self.p(d)
        if rec.mode:
            self.p("#")
            self.p(f"#    MODE: {rec.mode} ")
            self.p("#")
        if self.cfg.get("engine") == "both":
            self.p(f"#    ENGINE: {rec.extra.get('engine', 'mpi4py')} ")
        self.p("".join(f"{c:>{W}}" for c in self.cols))

    def _rank_lines(self, head: str, members: list[int]) -> None:
        for i in range(0, max(len(members), 1), 16):
            chunk = "".join(f" {r:4d}" for r in members[i : i + 16])
            self.p((head if i == 0 else "# ") + chunk)

    def _verdict(self, rec: records.Measurement) -> None:
        """Fold a row's check verdict into its benchmark's: failed > successful > not checked."""
        if rec.status != records.OK:
            mine = records.NOT_CHECKED  # a row without numbers was not verified either
        else:  # files of older versions have no "check": the deviation says it
            mine = rec.extra.get("check") or records.check_verdict(rec.defects)
        rank = {records.NOT_CHECKED: 0, records.SUCCESSFUL: 1, records.FAILED: 2}
        old = self.verdicts.get(rec.benchmark, records.NOT_CHECKED)
        self.verdicts[rec.benchmark] = max(old, mine, key=rank.__getitem__)

    def _close_benchmark(self) -> None:
        if self.verdicts.get(self.current) == records.FAILED:
            self.p("")
            self.p("!!! Benchmark unsuccessful !!!")
            self.p("")

    # -- trailer --------------------------------------------------------------
    def finish(self, summary: dict) -> None:
        if self.current is not None:
            self._close_benchmark()
        if self.cfg.get("check"):
            self._check_trailer(summary)
        if summary.get("interrupted"):
            self.p("")
            self.p(f"# !! run ended early: {summary['interrupted']}")
        self.p("")
        self.p("")
        self.p("# All processes entering MPI_Finalize")
        self.p("")
        self.out.flush()

    def _check_trailer(self, summary: dict) -> None:
        """IMB's check summary, saying which benchmarks no verifier looked at and,
        when the run ended early, which one it stopped in and which never ran."""
        ended_early = bool(summary.get("interrupted"))
        verdicts = dict(self.verdicts)
        running = summary.get("running") if ended_early else None
        if ended_early:
            for name in self.cfg.get("benchmarks") or []:
                verdicts.setdefault(name, NOT_RUN)
            if running in verdicts and verdicts[running] != records.FAILED:
                verdicts[running] = INTERRUPTED
        vals = verdicts.values()
        nfail = sum(1 for v in vals if v == records.FAILED)
        unchecked = sum(1 for v in vals if v == records.NOT_CHECKED)
        self.p("")
        if nfail:
            self.p(f"!!!!  {nfail}  BENCHMARK{'S' if nfail > 1 else ''} FAILED     !!!! ")
        if ended_early:
            self.p("!!!!  RUN ENDED EARLY: NOT EVERY BENCHMARK WAS CHECKED !!!! ")
        elif nfail:
            pass  # the line above says it all
        elif unchecked:
            self.p(f"!!!!  ALL CHECKED BENCHMARKS SUCCESSFUL; {unchecked} NOT CHECKED !!!! ")
        else:
            self.p("!!!!  ALL BENCHMARKS SUCCESSFUL !!!! ")
        words = {records.SUCCESSFUL: "Successful", records.FAILED: "FAILED !! ",
                 records.NOT_CHECKED: "not checked (no verifier looked at its data)",
                 INTERRUPTED: "interrupted (the run ended in it)",
                 NOT_RUN: "not run (the run ended before it)"}
        for name, v in verdicts.items():
            self.p(f"{name}    : {words[v]}")
