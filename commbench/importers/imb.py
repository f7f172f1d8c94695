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
"# All processes entering MPI_Finalize" was cut (IMB-MT prints none). The header's
lines are read in commbench.importers.imb_header, the tables' in imb_tables.
"""

from __future__ import annotations

from commbench.importers.common import Log, LogError, numeric, read_lines
from commbench.importers.imb_header import Header, describe
from commbench.importers.imb_tables import Tables

FINALIZE = "# All processes entering MPI_Finalize"


class ImbReader:
    """One log's lines, each to the header or to the tables (commbench.importers.imb_header,
    imb_tables)."""

    def __init__(self, log: Log):
        self.log = log
        self.header = Header(log.source)
        self.tables = Tables(log, self.header)
        self.finalized = False

    def feed(self, n: int, raw: str) -> None:
        line = raw.rstrip()
        t = self.tables.table
        if t is not None and t.cols is not None:
            if line and line[0] in " \t0123456789":  # a row of the table
                self.tables.row(n, line)
                return
            if line.startswith("#"):
                self.tables.close()
        if self.header.section and self.header.section_line(line):
            return
        if line.startswith(FINALIZE):
            self.tables.close()
            self.finalized = True
        elif line.startswith("#"):
            if not self.tables.table_line(n, line):
                self.header.line(line)
        elif (
            line.strip()
            and not self.tables.column_line(n, line)
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
        self.tables.close()
        self.log.world_size = self.log.largest_world or None
        if not self.header.banner:
            raise LogError(
                1, "no IMB banner ('#    Intel(R) MPI Benchmarks <version>, <part>') in the log"
            )
        if not self.finalized and self.header.tool != "IMB-MT":
            raise LogError(
                nlines,
                f"the log ends before IMB's closing line '{FINALIZE}': it was cut "
                f"(or the run ended early); the {self.log.count} rows before are kept",
            )


def read(log: Log, lines) -> None:
    """lines: the log's lines without their ends, from the first (a list, or the stream)."""
    r = ImbReader(log)
    try:
        read_lines(r, lines)
    finally:
        # what was read before an error: a size whose groups were cut short is left out
        r.tables.close(strict=False)
        describe(r.header, log)
