"""IMB's text output (spec §14), as a view of the records.

It reads only the run header (metadata and resolved config as plain data) and
the records, so the same text can be printed live on rank 0 or rebuilt later
from a results file (`commbench report`). The preamble's lines are
commbench.views.imb_preamble's.
"""

from __future__ import annotations

import sys
from typing import TextIO

from commbench import mpi_defects, records, row_measurement
from commbench.records import Kind
from commbench.views import TextView, limits_text
from commbench.views.imb_preamble import preamble
from commbench.views.measuring_text import precise, precision_note, row_named

W = 13
SINGLE_KINDS = (Kind.SINGLE.value, Kind.SINGLE_ONE.value)


def dash(ncols: int) -> str:
    return "#" + "-" * (W * ncols - 1)


TMM = ["t_min[usec]", "t_max[usec]", "t_avg[usec]"]
OVERLAP = ["t_ovrl[usec]", "t_pure[usec]", "t_CPU[usec]", " overlap[%]"]
# The columns of a kind after #bytes and #repetitions; TMM where the kind is not listed.
_KIND_COLUMNS = {
    Kind.SINGLE.value: ["t[usec]", "Mbytes/sec"],
    Kind.SINGLE_ONE.value: ["t[usec]", "Mbytes/sec"],
    Kind.MULTIPLE.value: ["t[usec]", "Mbytes/sec"],
    Kind.PARALLEL.value: [*TMM, "Mbytes/sec"],
    Kind.RATE.value: ["Mbytes/sec", "Msg/sec"],
    Kind.OVERLAP.value: OVERLAP,
    Kind.OVERLAP_SYNC.value: OVERLAP,
    Kind.PASSIVE.value: ["t_pure[usec]", "t_ovrl[usec]"],
}


def columns(rec: records.Measurement, multi: int | None, check: bool) -> list[str]:
    """Column tokens of a table (spec §14.3)."""
    kind = rec.kind
    groups = len(rec.groups)
    if kind in SINGLE_KINDS and groups > 1 and multi == 0:
        values = [*TMM, "Mbytes/sec"]
    else:
        values = _KIND_COLUMNS.get(kind, TMM)
    cols = ["#repetitions", *values]
    if kind not in (Kind.SYNC.value, Kind.OVERLAP_SYNC.value):  # rows without a size
        cols.insert(0, "#bytes")
    if multi == 1 and groups > 1:
        cols = ["Group", *cols]
    if check and rec.defects is not None:
        cols.append("defects")
    return cols


_VALUE_OF = {
    "t[usec]": "t_max",
    "t_min[usec]": "t_min",
    "t_max[usec]": "t_max",
    "t_avg[usec]": "t_avg",
    "t_ovrl[usec]": "t_ovrl",
    "t_pure[usec]": "t_pure",
    "t_CPU[usec]": "t_cpu",
    " overlap[%]": "overlap",
}


# --per-iteration: columns after IMB's, each a percentile of the per-repetition times (µs);
# --sync-start window: the repetitions left out because a rank started them late.
PER_ITERATION = {"P50[usec]": "p50", "P90[usec]": "p90", "P99[usec]": "p99", "max[usec]": "max"}
LATE = "late"


def per_iteration_columns(rec: records.Measurement, cfg: dict) -> list[str]:
    """The columns a table gets from --sync-start window and --per-iteration where they apply."""
    m = cfg.get("measuring") or {}
    cols = []
    if m.get("sync_start") == "window" and row_measurement.window_applies(
        rec.family, rec.benchmark, rec.kind, rec.mode
    ):
        cols.append(LATE)
    if (
        m.get("per_iteration")
        and row_measurement.per_iteration_skip(rec.family, rec.benchmark, rec.kind, rec.mode)
        is None
    ):
        cols += list(PER_ITERATION)
    return cols


def per_iteration_cell(c: str, rec: records.Measurement, group: int | None) -> str:
    """A percentile, or '-' where it was refused (below the timer floor) or none was measured;
    the late repetitions of a window row."""
    if c == LATE:
        late = (rec.extra.get("sync") or {}).get("invalid")
        return "-" if late is None else f"{late:d}"
    st = rec.extra.get("per_iteration") or {}
    if group is not None and st.get("groups"):
        st = st["groups"][group] or {}
    v = st.get(PER_ITERATION[c])
    return "-" if v is None else f"{v:.2f}"


# after a row whose estimate rests on too few valid repetitions (records' few_repetitions)
FEW = "!few"


def few_note(rows: list[records.Measurement]) -> list[str]:
    """The closing note naming every row marked FEW, and why."""
    out = [
        f"# {FEW}: {len(rows)} row{'s' if len(rows) > 1 else ''} rest on too few valid repetitions "
        "(their percentiles, and under --sync-start window their times, come from those alone): "
        "not estimates of the row's typical time; compare leaves them untested:"
    ]
    return out + [f"#   {row_named(r)}: {r.extra['few_repetitions'].get('why', '')}" for r in rows]


def cell(
    c: str, rec: records.Measurement, values: dict, mb_unit: int, group: int | None = None
) -> str:
    """One column's number of a row as IMB prints it, unpadded (the HTML report's cells too)."""
    if c in PER_ITERATION or c == LATE:
        return per_iteration_cell(c, rec, group)
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


def row(
    cols: list[str], rec: records.Measurement, values: dict, mb_unit: int, group: int | None = None
) -> str:
    return "".join(f"{cell(c, rec, values, mb_unit, group):>{W}}" for c in cols)


# Trailer verdicts of a run that ended early (never stored in records).
INTERRUPTED, NOT_RUN = "interrupted", "not run"


PREC = "prec[%]"  # --precision: the row's achieved +-% of its median, * where it missed the target


def precision_cell(rec: records.Measurement) -> str:
    p = rec.extra.get("precision") or {}
    achieved = p.get("achieved")
    return ("-" if achieved is None else f"{100 * achieved:.2f}") + (
        "" if p.get("reached") else "*"
    )


class ImbText(TextView):
    """Prints IMB's preamble, tables and trailer as records arrive."""

    def __init__(self, out: TextIO = sys.stdout):
        super().__init__(out)
        self.key: tuple | None = None
        self.cols: list[str] = []
        self.current: str | None = None
        self.verdicts: dict[str, str] = {}  # benchmark -> records.SUCCESSFUL | FAILED | NOT_CHECKED
        self.failed_bytes: dict[str, set[int]] = {}  # benchmark -> sizes of its FAILED rows
        self.cfg: dict = {}
        self.meta: dict = {}
        self.family = ""
        self.precision_rows: list[records.Measurement] = []  # every row measured to a target
        self.few_rows: list[records.Measurement] = []  # rows resting on too few valid repetitions
        self.limit_rows: list[records.Measurement] = []  # held against the limits at the end

    @property
    def precise(self) -> bool:
        """--precision: the prec[%] column and the closing note."""
        return precise(self.cfg)

    # -- preamble -------------------------------------------------------------
    def start(self, header: dict) -> None:
        cfg, meta, fam = header["config"], header["metadata"], header["family"]
        self.cfg, self.meta, self.family = cfg, meta, fam.get("name", "")
        self.p(*preamble(header, cfg, meta, fam))

    # -- tables ---------------------------------------------------------------
    def record(self, rec: records.Measurement) -> None:
        if self.current is not None and rec.benchmark != self.current:
            self._close_benchmark()
        self.current = rec.benchmark
        if rec.status == records.INVALID:
            self.p("", f"# !! Benchmark {rec.benchmark} invalid for {rec.np} processes !! ", "")
            self.key = None
            return
        # With --engine both each engine's rows form a table of their own.
        key = (
            *rec.table_key,
            rec.extra.get("engine") if self.cfg.get("engine") == "both" else None,
        )
        if key != self.key:
            self.key = key
            self.cols = columns(rec, self.cfg.get("multi"), self.cfg.get("check", False))
            self.cols += per_iteration_columns(rec, self.cfg)
            self._table_header(rec)
        self._verdict(rec)
        mb = self.cfg.get("mb_unit", 10**6)
        if rec.status != records.OK:
            self.p(f"{rec.bytes or 0:{W}d} {rec.status}.; {rec.message}")
            return
        mark = ""
        if self.precise:
            mark = f"{precision_cell(rec):>{W}}"
            self.precision_rows.append(rec)
        if rec.extra.get("few_repetitions"):
            mark += "  " + FEW
            self.few_rows.append(rec)
        self.limit_rows.append(rec)
        if self.cfg.get("multi") == 1 and len(rec.groups) > 1:
            self.p("")
            for g, vals in enumerate(rec.group_values):
                self.p(row(self.cols, rec, vals, mb, group=g) + mark)
        else:
            self.p(row(self.cols, rec, rec.values, mb) + mark)

    def _table_header(self, rec: records.Measurement) -> None:
        d = dash(len(self.cols) + self.precise)
        ngroups = len(rec.groups)
        self.p("", d)
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
                    self.p("# " + "".join(f" {r:4d}" for r in members[i : i + m[1]]), "# ")
            else:
                self.p(f"# #processes = {rec.np} ")
        idle = rec.world_size - sum(len(g) for g in rec.groups)
        if idle > 0:
            self.p(
                f"# ( {idle} additional {'process' if idle == 1 else 'processes'} waiting in "
                "MPI_Barrier)"
            )
        self.p(d)
        if rec.mode:
            self.p("#", f"#    MODE: {rec.mode} ", "#")
        if self.cfg.get("engine") == "both":
            self.p(f"#    ENGINE: {rec.extra.get('engine', 'mpi4py')} ")
        self.p("".join(f"{c:>{W}}" for c in self.cols) + (f"{PREC:>{W}}" if self.precise else ""))

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
        if mine == records.FAILED:  # which sizes failed: a known defect may touch only some
            self.failed_bytes.setdefault(rec.benchmark, set()).add(rec.bytes)

    def _close_benchmark(self) -> None:
        if self.verdicts.get(self.current) == records.FAILED:
            self.p("", "!!! Benchmark unsuccessful !!!", "")

    # -- trailer --------------------------------------------------------------
    def finish(self, summary: dict) -> None:
        if self.current is not None:
            self._close_benchmark()
        if self.cfg.get("check"):
            self._check_trailer(summary)
        if self.precise:  # how many rows reached the target, and each that did not, with why
            self.p(*precision_note(self.precision_rows, self.cfg))
        if self.few_rows:
            self.p("", *few_note(self.few_rows))
        self.p(*limits_text.trailer(self.limit_rows))
        if summary.get("interrupted"):
            self.p("", f"# !! run ended early: {summary['interrupted']}")
        self.p("", "", "# All processes entering MPI_Finalize", "")
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
        words = {
            records.SUCCESSFUL: "Successful",
            records.FAILED: "FAILED !! ",
            records.NOT_CHECKED: "not checked (no verifier looked at its data)",
            INTERRUPTED: "interrupted (the run ended in it)",
            NOT_RUN: "not run (the run ended before it)",
        }
        for name, v in verdicts.items():
            self.p(f"{name}    : {words[v]}")
        library = self.meta.get("mpi_library_version") or ""
        defects = [
            mpi_defects.known_defect(self.family, n, library, self.failed_bytes.get(n, ()))
            for n, v in verdicts.items()
            if v == records.FAILED
        ]
        for note in filter(None, defects):
            self.p(f"# {note}")
