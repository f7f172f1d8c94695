"""The text of an osu run in OSU Micro-Benchmarks 7.4's layout, so that a parser of
OSU's output reads commbench's (tests/mpi/test_osu.py reads both with
commbench/importers/osu.py): per benchmark a blank line, "# OSU <title> Test v7.4",
the settings lines ("# Datatype: MPI_CHAR."), the column line ("# Size" in 10
characters, then every column right-aligned in 18: OSU's FIELD_WIDTH), and rows
of the size (left-aligned in 10) and the numbers with 2 decimals. -c adds OSU's
"Validation" column (Pass/Fail), -z the "P50 Tail Lat(us)" … columns after it;
-T all repeats the datatype and column lines per type, as OSU does. What each program
prints beyond that (settings lines, prefaces, named columns, no size column…) is its
layout, derived from the record's facts by osu_layout.py.

commbench's own facts (engine, buffers) go in one '#' line after the last table;
--engine both (or a native engine that was unavailable) adds a '#' line naming
the engine before a block.
"""

from __future__ import annotations

import sys
from typing import TextIO

from commbench import records
from commbench.views import TextView, osu_layout
from commbench.views.measuring_text import Notes

VERSION = "7.4"
SIZE_W, FIELD_W = 10, 18
# metric -> (main column, its value key, scale to the printed unit, tail heading, tail value prefix)
COLUMNS = {
    "latency": ("Avg Latency(us)", "t", 1.0, "Tail Lat(us)", "t_p"),
    "bandwidth": ("Bandwidth (MB/s)", "bytes_per_sec", 1e-6, "Tail BW(MB/s)", "bw_p"),
    "rma_latency": ("Latency (us)", "t", 1.0, "Tail Lat(us)", "t_p"),
    "overlap": ("Overall(us)", "t", 1.0, "Tail Lat(us)", "t_p"),
    # programs with named columns (osu_layout: nonblocking.py, neighbor.py)
    "nbc": ("Overall(us)", "t_ovrl", 1.0, "Tail Lat(us)", "t_p"),
    "neighbor": ("Avg Latency(us)", "t", 1.0, "Tail Lat(us)", "t_p"),
    "collective": ("Avg Latency(us)", "t", 1.0, "Tail Lat(us)", "t_p"),  # collectives.py
    "sync": (
        "Avg Latency(us)",
        "t",
        1.0,
        "Tail Lat(us)",
        "t_p",
    ),  # osu_barrier(_persistent): no size column
    "mbw_mr": ("MB/s", "bytes_per_sec", 1e-6, "Tail BW(MB/s)", "bw_p"),  # pt2pt_variants.py
    # OSU 7.4's bw_fan_in/out print their MB/s under this heading (pt2pt_variants.py; docs/osu.md)
    "fan": ("Avg Latency(us)", "bytes_per_sec", 1e-6, "Tail BW(MB/s)", "bw_p"),
}
# metric -> more columns after the main one: (heading, value key) (the nonblocking collectives)
MORE = {
    "overlap": (
        ("Compute(us)", "t_compute"),
        ("Pure Comm.(us)", "t_pure"),
        ("Overlap(%)", "overlap"),
    ),
    "mbw_mr": (("Messages/s", "msgs_per_sec"),),
}


FULL = (
    "Min Latency(us)",
    "Max Latency(us)",
    "Iterations",
)  # -f (extra "full"): the blocking collectives


def tail_head(p: int, tail: str) -> str:
    """OSU's -z heading: right-aligned in the field as osu_util prints it (P100 one wider)."""
    return " " * (FIELD_W - len(f"Px {tail}") - (p > 9)) + f"P{p} {tail}"


def column_line(
    metric: str, validation: bool, percentiles: list[int], full: bool = False, sized: bool = True
) -> str:
    main, _, _, tail, _ = COLUMNS[metric]
    heads = (
        [main]
        + [h for h, _ in MORE.get(metric, ())]
        + (["Validation"] if validation else [])
        + [tail_head(p, tail) for p in percentiles]
    )
    heads[1:1] = FULL if full else ()
    line = "".join(f"{h:>{12 if h == 'Iterations' else FIELD_W}}" for h in heads)
    return f"{'# Size':<{SIZE_W}}" + line if sized else "#" + line[2:]  # unsized: osu_barrier


def row_line(rec: records.Measurement, sized: bool = True) -> str:
    main, key, scale, _, prefix = COLUMNS[rec.extra.get("metric", "latency")]
    v = rec.values
    cells = [f"{v.get(key, 0.0) * scale:>{FIELD_W}.2f}"]
    if rec.extra.get("full"):
        cells += [f"{v.get(k, 0.0):>{FIELD_W}.2f}" for k in ("t_min", "t_max")] + [
            f"{rec.repetitions:>12d}"
        ]
    cells += [
        f"{v.get(k, 0.0):>{FIELD_W}.2f}"
        for _, k in MORE.get(rec.extra.get("metric", "latency"), ())
    ]
    if "validation" in rec.extra:
        cells.append(f"{rec.extra['validation']:>{FIELD_W}}")
    cells += [
        f"{v.get(f'{prefix}{p}', 0.0) * scale:>{FIELD_W}.2f}"
        for p in rec.extra.get("percentiles", [])
    ]
    return f"{rec.bytes:<{SIZE_W}d}" + "".join(cells) if sized else "".join(cells)[1:]


def named_cells(rec: records.Measurement | None, ex: dict, lay: osu_layout.OsuLayout) -> list[str]:
    """Named columns: the headings (rec None) or the row's cells, Validation and -z's after
    them; without a size column (osu_ibarrier) the first is as wide as "# " and its heading."""
    _, _, scale, tail, prefix = COLUMNS[ex.get("metric", "nbc")]
    cols = [(h, k, 12 if k == "repetitions" else FIELD_W) for h, k in lay.columns or []]
    cols += [("Validation", "", FIELD_W)] if "validation" in ex else []
    cols += [(tail_head(p, tail), f"{prefix}{p}", FIELD_W) for p in ex.get("percentiles", [])]
    if not lay.sized:
        cols[0] = ("# " + cols[0][0], cols[0][1], len(cols[0][0]) + 2)
    if rec is None:
        return [f"{'# Size':<{SIZE_W}}"] * lay.sized + [f"{h:>{w}}" for h, _, w in cols]
    v, cells = rec.values, [f"{rec.bytes:<{SIZE_W}d}"] * lay.sized
    for h, k, w in cols:
        cells.append(
            f"{ex['validation']:>{w}}"
            if h == "Validation"
            else f"{rec.repetitions:>{w}d}"
            if k == "repetitions"
            else f"{v.get(k, 0.0) * scale:>{w}.2f}"
        )
    return cells


class OsuText(TextView):
    def __init__(self, out: TextIO = sys.stdout):
        super().__init__(out)
        self.current: tuple | None = None
        self.engine = "native"
        self.both = False
        self.alloc = ""
        self.mode: str | None = None
        self.notes = Notes()

    def start(self, header: dict) -> None:
        cfg = header["config"]
        self.engine = cfg.get("engine") or "native"
        self.both = self.engine == "both"
        self.alloc = (
            header.get("metadata", {})
            .get("buffer_allocation", {})
            .get("kind", cfg.get("alloc", ""))
        )
        if given := cfg.get("params", {}).get(
            "osu_buffers"
        ):  # OMB's buffer operands, taken as its CPU build
            self.alloc += (
                f", host memory for the operands {given} (OMB 7.4's CPU build also runs them on "
                "host memory)"
            )
        self.header_notes(header)
        self.p(*self.notes.start(cfg))  # --precision, --shuffle

    def record(self, rec: records.Measurement) -> None:
        ex = rec.extra
        self.notes.record(rec)
        title = f"# OSU {ex.get('title', rec.benchmark)} Test v{VERSION}"
        if rec.status == records.INVALID:  # a program OSU would not run at this process count
            self.p("", f"{title}: not run: {rec.message}")
            self.current = None
            return
        lay = osu_layout.of(rec)
        if lay.text is not None:  # osu_init: its own lines under the title, no table
            self.p(title, *lay.text)
            self.current = None
            return
        key = (rec.benchmark, ex.get("engine"))
        if key != self.current or (lay.settings and rec.mode != self.mode):
            self._title(rec, lay, title, key)
        if key != self.current or rec.mode != self.mode:
            self._columns(rec, lay)
        self.current, self.mode = key, rec.mode
        if rec.status != records.OK:
            self.p(f"# {rec.bytes or 0} {rec.status}: {rec.message}")
        elif lay.columns is not None:
            self.p("".join(named_cells(rec, ex, lay)))
        else:
            self.p(row_line(rec, lay.sized))
        self.out.flush()

    def _title(self, rec: records.Measurement, lay: osu_layout.OsuLayout, title: str, key) -> None:
        """A program's (or, for the programs with settings lines, a type's) heading: its
        preface, a blank line, the engine where it varies, the title, the settings."""
        ex = rec.extra
        self.p(*(lay.preface if key != self.current else []))
        if not lay.settings:
            self.p("")
        if self.both or ex.get("engine", self.engine) != self.engine:
            self.p(
                f"# commbench engine: {ex.get('engine')}"
                + ("" if self.both else " (the native osu engine was unavailable)")
            )
        self.p(title, *(f"# {line}" for line in lay.settings))
        for line in lay.subtitle:  # the nonblocking collectives' "# Overall = …", a blank line
            self.p(f"# {line}", "")

    def _columns(self, rec: records.Measurement, lay: osu_layout.OsuLayout) -> None:
        """A type's datatype line, the operands line, the column line."""
        ex = rec.extra
        if lay.datatype_line:
            self.p(f"# Datatype: {ex.get('datatype', rec.mode)}.")
        if lay.buffer_line:  # OMB's buffer operands (D D): where the buffers are, in OMB's words
            self.p(f"# {lay.buffer_line}")
        self.p(
            "".join(named_cells(None, ex, lay))
            if lay.columns is not None
            else column_line(
                ex.get("metric", "latency"),
                "validation" in ex,
                ex.get("percentiles", []),
                bool(ex.get("full")),
                lay.sized,
            )
        )

    def finish(self, summary: dict) -> None:
        self.p(*self.notes.finish())
        if summary.get("interrupted"):
            self.p(f"# !! run ended early: {summary['interrupted']}")
        loops = {"mpi4py": "mpi4py", "both": "C (commbench/native/osu_*.c), then mpi4py"}.get(
            self.engine, "C (commbench/native/osu_*.c)"
        )
        self.p(f"# commbench: loops {loops}; buffers {self.alloc}")
        self.out.flush()
