"""OSU Micro-Benchmarks' text output (OMB 5.x to 7.x) as records.

The title line ("# OSU MPI Allreduce Latency Test v7.4") names the program and
the version; '#' lines before the table say the datatype (7.x), the window
creation and synchronization (one-sided), pairs and window size (osu_mbw_mr);
the column line ("# Size  Avg Latency(us)  Min Latency(us) …", with -f's
min/max/iterations, -z's percentiles, -c's Validation) names each row's
numbers. OSU logs do not say how many processes ran a collective: the
importer's --np gives it (0 when unknown). OMB prints sizes and iterations
with "%d", every other number with "%.2f" (FLOAT_PRECISION, fixed when OMB is
built; no option changes it), the validation as Pass/Fail (one-sided:
passed/failed/skipped): a row that does not hold one such value per column, or
the last line without its newline, is malformed or cut; OSU prints no closing
line, so a cut between two rows cannot be seen.
"""

from __future__ import annotations

import re

from commbench import records
from commbench.importers.common import Log, LogError, fixed, integer, numeric, read_lines
from commbench.records import Kind

TITLE = re.compile(r"^#\s*OSU\s+(?P<title>.+?)\s+Test\s+v(?P<version>\S+)\s*$")
SETTING = re.compile(r"^#\s*(?P<k>Datatype|Window creation|Synchronization):\s*(?P<v>.+?)\.?\s*$")
PAIRS = re.compile(r"^#\s*\[\s*pairs:\s*(?P<pairs>\d+)\s*\]\s*\[\s*window size:\s*(?P<w>\d+)\s*\]")
# A column's heading -> the record's value (us and bytes/s as in every results file).
HEADINGS = [
    (r"size", "bytes"),
    (r"(avg )?latency ?\(us\)", "t"),
    (r"min latency ?\(us\)", "t_min"),
    (r"max latency ?\(us\)", "t_max"),
    (r"iterations", "repetitions"),
    (r"p(\d+) tail lat ?\(us\)", r"t_p\1"),
    (r"bandwidth ?\(mb/s\)|mb/s", "bytes_per_sec"),
    (r"p(\d+) tail bw ?\(mb/s\)", r"bw_p\1"),
    (r"messages/s", "msgs_per_sec"),
    (r"overall ?\(us\)", "t_ovrl"),
    (r"compute ?\(us\)", "t_cpu"),
    (r"pure comm\.? ?\(us\)", "t_pure"),
    (r"overlap ?\(%\)", "overlap"),
    (r"coll\. init ?\(us\)", "t_init"),
    (r"mpi_test ?\(us\)", "t_test"),
    (r"mpi_wait ?\(us\)", "t_wait"),
    (r"min comm\.? ?\(us\)", "t_pure_min"),
    (r"max comm\.? ?\(us\)", "t_pure_max"),
    (r"validation", "check"),
]
# Titles (lower case, without "MPI "/"MPI-CUDA ", "Non-blocking ", "Neighborhood ", " Persistent")
# -> the program's name after "osu_" (OMB 7.4's programs and their titles).
PROGRAMS = {
    "latency": "latency",
    "multi-process latency": "latency_mp",
    "multi-threaded latency": "latency_mt",
    "multi latency": "multi_lat",
    "bandwidth": "bw",
    "bi-directional bandwidth": "bibw",
    "multiple bandwidth / message rate": "mbw_mr",
    "mpi_put latency": "put_latency",
    "mpi_get latency": "get_latency",
    "mpi_put bandwidth": "put_bw",
    "mpi_get bandwidth": "get_bw",
    "mpi_put bi-directional bandwidth": "put_bibw",
    "mpi_accumulate latency": "acc_latency",
    "mpi_get_accumulate latency": "get_acc_latency",
    "mpi_fetch_and_op latency": "fop_latency",
    "mpi_compare_and_swap latency": "cas_latency",
    "allgather latency": "allgather",
    "allgatherv latency": "allgatherv",
    "allreduce latency": "allreduce",
    "all-to-all latency": "alltoall",
    "all-to-all personalized exchange latency": "alltoall",
    "alltoall latency": "alltoall",
    "all-to-allv personalized exchange latency": "alltoallv",
    "all-to-allv latency": "alltoallv",
    "alltoallv latency": "alltoallv",
    "all-to-allw personalized exchange latency": "alltoallw",
    "alltoallw latency": "alltoallw",
    "barrier latency": "barrier",
    "broadcast latency": "bcast",
    "gather latency": "gather",
    "gatherv latency": "gatherv",
    "reduce latency": "reduce",
    "reduce_scatter latency": "reduce_scatter",
    "reduce_scatter_block latency": "reduce_scatter_block",
    "scatter latency": "scatter",
    "scatterv latency": "scatterv",
    "init": "init",
}
POINT_TO_POINT = {
    "latency",
    "latency_mp",
    "latency_mt",
    "multi_lat",
    "bw",
    "bibw",
    "mbw_mr",
    "put_latency",
    "get_latency",
    "put_bw",
    "get_bw",
    "put_bibw",
    "acc_latency",
    "get_acc_latency",
    "fop_latency",
    "cas_latency",
}
CHECK = {
    "Pass": records.SUCCESSFUL,
    "Fail": records.FAILED,
    "passed": records.SUCCESSFUL,
    "failed": records.FAILED,
    "skipped": records.NOT_CHECKED,
}  # the one-sided programs: passed/failed/skipped
# What OMB 7.4's one-sided programs print after their table under -c (each rank's "Atomic Data
# Validation results"), not rows; a rank's "FAILED:" can land glued before a row
# ("FAILED:1   0.15  passed").
REPORT = re.compile(
    r"^\s*(-{3,}\s*$|Atomic Data Validation results|(PASSED|FAILED|SKIPPED):|First failure|"
    r"Dimensions size =|Time took to create topology graph|"  # the neighborhood programs' topology
    r"Initial Values:|Observed Final Value:|Expected Final Value:|\S+ failed validation of|"
    r"DATA VALIDATION ERROR:)"
)  # a collective's last line after a Fail row (it then exits 1)
HEADER_LINES = 100  # other '#' lines kept in metadata.source, each once
GLUED = re.compile(r"^(PASSED|FAILED|SKIPPED):(?=\d)")
# osu_init's one line under its title (no table): per-process MPI_Init time, whole ms ("%ld")
INIT = re.compile(
    r"^nprocs:\s*(?P<np>\d+),\s*min:\s*(?P<min>\d+)\s*ms,\s*max:\s*(?P<max>\d+)\s*ms,"
    r"\s*avg:\s*(?P<avg>\d+)\s*ms\s*$",
    re.ASCII,
)


def program(title: str) -> tuple[str, str | None]:
    """(benchmark name, short name) of a title: osu_<program> where OMB's titles say it,
    else the title itself."""
    key = re.sub(r"\s+", " ", title.strip().lower())
    key = re.sub(r"^mpi(-\w+)? ", "", key)
    persistent = " persistent" in key
    key = key.replace(" persistent", "")
    nonblocking = key.startswith("non-blocking ")
    key = key.removeprefix("non-blocking ")
    neighbor = key.startswith("neighborhood ")
    key = key.removeprefix("neighborhood ")
    short = PROGRAMS.get(key)
    if short is None:
        return title.strip(), None
    name = (
        f"osu_{'i' if nonblocking else ''}{'neighbor_' if neighbor else ''}{short}"
        f"{'_persistent' if persistent else ''}"
    )
    return name, short


def heading_key(h: str) -> str | None:
    low = h.strip().lower()
    for pattern, key in HEADINGS:
        m = re.fullmatch(pattern, low)
        if m:
            return m.expand(key)
    return None


class OsuReader:
    def __init__(self, log: Log, np_hint: int | None):
        self.log, self.np_hint = log, np_hint
        self.src = log.source
        self.src.update(
            format="osu", suite="OSU Micro-Benchmarks", tool="OSU", settings={}, header_lines=[]
        )
        self.name: str | None = None
        self.short: str | None = None
        self.cols: list[tuple[str, str | None]] | None = None  # (heading, value key)
        self.col_line = 0
        self.rows = 0
        self.pairs: int | None = None

    def feed(self, n: int, raw: str) -> None:
        line = raw.rstrip()
        if not line.strip():
            return
        if line.startswith("#"):
            self.comment(n, line)
        elif self.cols is not None and GLUED.match(line):
            self.row(n, GLUED.sub("", line))
        elif self.cols is not None and REPORT.match(line):
            return
        elif self.cols is not None:
            self.row(n, line)
        elif self.short == "init" and line.startswith("nprocs:"):
            if (m := INIT.match(line)) is None:
                raise LogError(
                    n,
                    f"osu_init's line is {line.strip()!r}: cut or edited, not imported (accepted: "
                    "'nprocs: N, min: N ms, max: N ms, avg: N ms', as OMB prints it)",
                )
            self.np_hint = self.np_hint or int(m.group("np"))
            us = {k: float(m.group(k)) * 1e3 for k in ("min", "max", "avg")}
            self.emit(
                n, None, 1, {"t": us["avg"], "t_min": us["min"], "t_max": us["max"]}, {}, False
            )
        elif self.name is not None and numeric(line.split()[0]):
            raise LogError(n, "a row before the column line ('# Size  …')")

    def comment(self, n: int, line: str) -> None:
        if (m := TITLE.match(line)) is not None:
            self.end_table(n)
            self.name, self.short = program(m.group("title"))
            self.src["settings"] = {}  # a program's settings lines follow its title
            self.pairs = None  # mbw_mr's pairs line belongs to its own table
            self.src.update(tool=self.name, title=m.group("title"), version=m.group("version"))
            return
        if (m := SETTING.match(line)) is not None:
            self.end_table(n)
            self.src["settings"][m.group("k")] = m.group("v")
            return
        if (m := PAIRS.match(line)) is not None:
            self.pairs = int(m.group("pairs"))
            self.src["settings"].update(pairs=self.pairs, window_size=int(m.group("w")))
            return
        # Headings are apart by 2+ spaces, but OSU's 18-character fields leave one before
        # "P50 Tail BW(MB/s)".
        heads = [h for h in re.split(r"\s{2,}|\s(?=P\d+ Tail )", line[1:].strip()) if h]
        keys = [heading_key(h) for h in heads]
        if heads and (keys[0] == "bytes" or all(keys)) and any(k and k != "bytes" for k in keys):
            if self.name is None:
                raise LogError(n, "a column line before OSU's title line ('# OSU MPI … Test v…')")
            self.end_table(n)
            self.cols, self.col_line, self.rows = list(zip(heads, keys)), n, 0
            return
        kept = self.src["header_lines"]
        if len(kept) < HEADER_LINES and line not in kept:  # a log of many runs repeats them
            kept.append(line)

    def end_table(self, n: int) -> None:
        if self.cols is not None and self.rows == 0:
            raise LogError(n, f"the table under the column line {self.col_line} has no rows")
        self.cols = None

    def row(self, n: int, line: str) -> None:
        toks = line.split()
        if len(toks) != len(self.cols) or not numeric(toks[0]):
            cut = " (the log seems cut here)" if len(toks) < len(self.cols) else ""
            heads = ", ".join(h for h, _ in self.cols)
            raise LogError(
                n,
                f"a row of {self.name} should hold {len(self.cols)} values ({heads}), "
                f"it holds {line.strip()!r}{cut}",
            )
        values, extra, x, reps = {}, {}, None, 0
        for (head, key), tok in zip(self.cols, toks):
            if key == "bytes":
                x = integer(tok, n, head)
            elif key == "repetitions":
                reps = integer(tok, n, head)
            elif key == "check":
                if tok not in CHECK:
                    raise LogError(
                        n,
                        f"{head} {tok!r} is not a verdict OMB prints: the row was cut (or edited) "
                        "and is not imported (accepted: Pass, Fail; one-sided: passed, failed, "
                        "skipped)",
                    )
                extra["check"] = CHECK[tok]
            elif key is None:
                extra.setdefault("columns", {})[head] = tok
            elif (v := fixed(tok, 2, n, head, "OSU")) is not None:
                values[key] = v * 1e6 if key == "bytes_per_sec" or key.startswith("bw_p") else v
            else:
                self.log.warn(n, f"{self.name}: {head} printed as {tok!r}, left out of the record")
        self.emit(n, x, reps, values, extra, bool(any(k == "bytes" for _, k in self.cols)))
        self.rows += 1

    def emit(
        self, n: int, x: int | None, reps: int, values: dict, extra: dict, sized: bool
    ) -> None:
        keys = set(values)
        kind = kind_of(keys, sized, self.short, self.src.get("title", ""))
        if kind in (Kind.COLLECTIVE.value, Kind.SYNC.value) and "t" in values:
            values["t_avg"] = values["t"]
        np_ = self.np_hint or (
            2 * (self.pairs or 1) if self.short in POINT_TO_POINT - {"multi_lat"} else 0
        )
        settings = self.src["settings"]
        mode = ", ".join(
            str(settings[k])
            for k in ("Datatype", "Window creation", "Synchronization")
            if k in settings
        )
        if self.pairs:
            extra.update(pairs=self.pairs, window_size=settings["window_size"])
        comps = ["t_ovrl", "t_pure", "t_cpu"] if kind.startswith("overlap") else ["t"]
        # Rows are named as commbench's osu family names them (the program without "osu_"),
        # so that compare pairs an imported OSU log with a commbench OSU run; the source keeps the
        # program.
        self.log.add(
            n,
            benchmark=self.name.removeprefix("osu_"),
            family="osu",
            kind=kind,
            np=np_,
            mode=mode,
            bytes=x,
            repetitions=reps,
            groups=[list(range(np_))] if np_ else [],
            world_size=np_,
            components=comps,
            values=values,
            extra=extra,
        )

    def finish(self, nlines: int) -> None:
        if self.name is None:
            raise LogError(1, "no OSU title line ('# OSU MPI … Test v<version>') in the log")
        if self.cols is None and not self.log.count:
            raise LogError(nlines, "the log ends before its column line ('# Size  …'): it was cut")
        self.end_table(nlines)


def kind_of(keys: set[str], sized: bool, short: str | None, title: str) -> str:
    if "t_ovrl" in keys:
        return Kind.OVERLAP.value if sized else Kind.OVERLAP_SYNC.value
    if not sized:
        return Kind.SYNC.value
    if "bytes_per_sec" in keys:
        return Kind.RATE.value
    if short in POINT_TO_POINT or title.lower().startswith("mpi_"):
        return Kind.SINGLE.value
    return Kind.COLLECTIVE.value


def read(log: Log, lines, np_hint: int | None = None) -> None:
    """lines: the log's lines without their ends, from the first (a list, or the stream)."""
    try:
        read_lines(OsuReader(log, np_hint), lines)
    finally:
        log.imported("osu", "OSU Micro-Benchmarks", log.source.get("title", ""))
        log.world_size = log.largest_world or None
