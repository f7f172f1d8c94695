"""The text of an mt run in IMB-MT 2021.11's layout: its banner, one block per
benchmark ("# Benchmarking X", "# #processes = P (threads: T)", "# window_size
= W" for UniBandMT/BiBandMT) and 13-character columns, so a parser of IMB-MT's
output reads commbench's. commbench's own lines (engine, threads, GIL note,
calling sequence) are '#' comments under the banner."""

from __future__ import annotations

import sys
from typing import TextIO

from commbench import records
from commbench.suites.mt import MtSettings, gil_note
from commbench.views import TextView
from commbench.views.measuring_text import Notes

DASHES = "#" + "-" * 77
COLUMNS = {
    "p2p": ("#bytes", "#repetitions", "t_min[usec]", "t_max[usec]", "t_avg[usec]", "Mbytes/sec"),
    "rate": ("#bytes", "#repetitions", "t_avg[usec]", "Mbytes/sec", "Msg/sec"),
    "coll": ("#bytes", "#repetitions", "t_min[usec]", "t_max[usec]", "t_avg[usec]"),
    "barrier": ("#repetitions", "t_min[usec]", "t_max[usec]", "t_avg[usec]"),
}


def field(v) -> str:
    """IMB-MT's out_field: 13 characters, right-aligned, 2 decimals for times and rates."""
    return (f"{v:13.2f}" if isinstance(v, float) else f"{v:>13}")[:13]


class MtText(TextView):
    def __init__(self, out: TextIO = sys.stdout):
        super().__init__(out)
        self.key: tuple | None = None
        self.both = False
        self.failed_rows = 0
        self.unchecked: list[str] = []  # benchmarks -check had nothing to verify in
        self.check = False
        self.notes = Notes()
        self.gil_said = False  # the preamble's GIL note (mpi4py engine)

    def start(self, header: dict) -> None:
        cfg, meta = header["config"], header["metadata"]
        s = MtSettings.of(cfg["params"])
        self.both, self.check = cfg.get("engine") == "both", bool(cfg.get("check"))
        if not s.noheader:
            line = "#" + "-" * 66
            self.p(line, f"#    commbench {meta['commbench_version']}, MT part    ", line)
        self.p(
            f"# Date                  : {meta['date_asctime']}",
            f"# MPI Version           : {meta['mpi_version']}",
            f"# MPI Thread Environment: {meta['thread_level']}",
        )
        for extra in header.get("preamble_extra", []):
            self.p(extra)
            self.gil_said |= "GIL" in extra
        self.p(
            f"# Options               : -count {','.join(map(str, s.count))} -datatype "
            f"{s.datatype} -repeat {s.repeat} -warmup {s.warmup} -barrier {s.barrier} -stride "
            f"{s.stride} -window_size {s.window_size} -malloc_align {s.malloc_align} -malloc_algo "
            f"{s.malloc_algo}"
        )
        self.p("# Calling sequence was:", "#" + "".join(" " + a for a in meta["calling_sequence"]))
        self.p(*self.notes.start(cfg))  # --precision, --shuffle
        if not s.noheader:
            self.p("#")
        self.out.flush()

    def _head(self, rec: records.Measurement) -> None:
        x = rec.extra
        if x.get("engine") == "mpi4py" and not self.gil_said:  # the native engine fell back
            self.gil_said = True
            self.p(
                "",
                "# Engine                : mpi4py (the native mt engine was unavailable)",
                *gil_note(),
            )
        self.p("", DASHES, f"# Benchmarking {rec.benchmark}")
        if not rec.ok:
            self.p(f"# {rec.message or rec.status.upper()}", DASHES, "")
            return
        self.p(f"# #processes = {x['processes']} (threads: {x['threads']})")
        if "window_size" in x:
            self.p(f"# window_size = {x['window_size']}")
        if self.both:
            self.p(f"#    ENGINE: {x['engine']}")
        self.p(DASHES, "".join(field(c) for c in COLUMNS[x["columns"]]))

    def record(self, rec: records.Measurement) -> None:
        self.notes.record(rec)
        key = (rec.benchmark, rec.extra.get("engine"))
        if key != self.key:
            self.key = key
            self._head(rec)
        if rec.ok:
            v, x = rec.values, rec.extra
            cells = {
                "#bytes": rec.bytes,
                "#repetitions": rec.repetitions,
                "t_min[usec]": v["t_min"],
                "t_max[usec]": v["t_max"],
                "t_avg[usec]": v["t_avg"],
                "Mbytes/sec": v.get("bytes_per_sec", 0.0) / 1e6,
                "Msg/sec": int(v.get("msgs_per_sec", 0)),
            }
            self.p("".join(field(cells[c]) for c in COLUMNS[x["columns"]]))
        for r, fails in enumerate(rec.extra.get("check_failures") or []):
            for f in fails:
                if f:
                    self.p(f"CHECK FAILURES: rank {r}: {f}")
        if rec.defects:
            self.failed_rows += 1
        if rec.extra.get("check") == records.NOT_CHECKED and rec.benchmark not in self.unchecked:
            self.unchecked.append(rec.benchmark)  # no data to verify (BarrierMT): never "verified"
        self.out.flush()

    def finish(self, summary: dict) -> None:
        self.p("")
        if self.check:
            self.p(
                f"# Check (-check): {self.failed_rows} row(s) with failures"
                if self.failed_rows
                else "# Check (-check): every row verified, no failures"
                if not self.unchecked
                else "# Check (-check): no failures in the rows verified"
            )
            if self.unchecked:
                self.p(
                    f"# not checked (no data it receives to verify): {', '.join(self.unchecked)}"
                )
        self.p(*self.notes.finish())
        if summary.get("interrupted"):
            self.p(f"# commbench: the run ended early: {summary['interrupted']}")
        self.out.flush()
