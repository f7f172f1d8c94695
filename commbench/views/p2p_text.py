"""The text of a p2p run in IMB-P2P 2021.11's layout, so a parser of IMB-P2P's
output reads commbench's: its banner and preamble (calling sequence, list of
benchmarks, minimum and maximum message length), one block per benchmark
("# Benchmarking X", "Stencil2D (ly x lx)", "# #processes = P", the columns
#bytes #repetitions t[usec] Mbytes/sec Msg/sec in 13 characters), IMB-P2P's
"# !! Benchmark X is invalid for P processes !!" lines, and its closing line.
commbench's own settings are '#' lines of the preamble."""

from __future__ import annotations

import sys
from typing import TextIO

from commbench import records
from commbench.suites.p2p import P2pSettings
from commbench.views import TextView
from commbench.views.measuring_text import Notes

TITLE = "#" + "-" * 60
BLOCK = "#" + "-" * 64
COLUMNS = ("#bytes", "#repetitions", "t[usec]", "Mbytes/sec", "Msg/sec")


def _loops(engine: str | None) -> str:
    return {"mpi4py": "mpi4py", "both": "C (commbench/native/p2p.c), then mpi4py"}.get(
        engine or "native", "C (commbench/native/p2p.c)"
    )


class P2PText(TextView):
    def __init__(self, out: TextIO = sys.stdout):
        super().__init__(out)
        self.current: tuple | None = None
        self.mb_unit = 10**6
        self.both, self.engine = False, "native"
        self.notes = Notes()

    def start(self, header: dict) -> None:
        cfg, meta = header["config"], header["metadata"]
        s = P2pSettings.of(cfg["params"])
        self.mb_unit = cfg.get("mb_unit", 10**6)
        self.both = cfg.get("engine") == "both"
        self.engine = cfg.get("engine") or "native"
        u = meta["uname"]
        self.p(TITLE, f"#    commbench {meta['commbench_version']}, IMB-P2P part", TITLE)
        for label, v in (
            ("Date", meta["date_asctime"]),
            ("Machine", u["machine"]),
            ("System", u["system"]),
            ("Release", u["release"]),
            ("Version", u["version"]),
            ("MPI Version", meta["mpi_version"]),
            ("MPI Thread Environment", meta["thread_level"]),
        ):
            self.p(f"# {label:<22}: {v}")
        self.header_notes(header)
        self.p(
            "#",
            "# Calling sequence was:",
            "#",
            "#" + "".join(" " + a for a in meta["calling_sequence"]),
            "#",
            "# List of Benchmarks to run:",
            "#",
            *(f"# {name}" for name in cfg["benchmarks"]),
            "#",
        )
        sizes = s.sizes or [0]
        self.p(f"# Minimum message length in bytes:   {min(sizes)}")
        self.p(f"# Maximum message length in bytes:   {max(sizes)}")
        self.p("#")
        self.p(
            f"# commbench: -iter {cfg['msgspersample']},{cfg['overall_vol'] // 2**20} -pause "
            f"{s.pause} -msgwr {'on' if s.msgwr else 'off'} -msgrd {'on' if s.msgrd else 'off'}; "
            f"buffers: {meta['buffer_allocation']['kind']}; loops: {_loops(cfg.get('engine'))}; "
            f"Mbytes = {'2^20' if self.mb_unit == 2**20 else '10^6'} bytes"
        )
        self.p(*self.notes.start(cfg))  # --precision, --shuffle
        self.out.flush()

    def record(self, rec: records.Measurement) -> None:
        self.notes.record(rec)
        if rec.status == records.INVALID:
            self.p("", rec.message)
            self.current = None
        else:
            if (rec.benchmark, rec.extra.get("engine")) != self.current:
                self.current = (rec.benchmark, rec.extra.get("engine"))
                self._block(rec)
            if rec.status != records.OK:
                self.p(f" {rec.bytes or 0:12d} {rec.status}: {rec.message}")
            else:
                v = rec.values
                self.p(
                    f" {rec.bytes:12d} {rec.repetitions:12d} {v.get('t', 0.0):12.2f} "
                    f"{v.get('bytes_per_sec', 0.0) / self.mb_unit:12.2f} "
                    f"{v.get('msgs_per_sec', 0.0):12.0f}"
                )
        self.out.flush()

    def _block(self, rec: records.Measurement) -> None:
        grid = rec.extra.get("grid")
        self.p(
            "",
            BLOCK,
            f"# Benchmarking {rec.benchmark}"
            + (f" ({' x '.join(map(str, grid))})" if grid else ""),
            f"# #processes = {rec.np}",
        )
        engine = rec.extra.get("engine")
        if self.both or engine != self.engine:  # both engines, or the native one fell back
            self.p(
                f"#    ENGINE: {engine}"
                + ("" if self.both else " (the native p2p engine was unavailable)")
            )
        self.p(BLOCK, "".join(f" {c:>12}" for c in COLUMNS))

    def finish(self, summary: dict) -> None:
        self.p(*self.notes.finish())
        if summary.get("interrupted"):
            self.p("", f"# !! run ended early: {summary['interrupted']}")
        self.p("", "", "# All processes entering MPI_Finalize", "")
        self.out.flush()
