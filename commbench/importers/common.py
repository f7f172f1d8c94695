"""What every importer fills in, the error it raises at a malformed or cut line, and the
number formats of the tools.

A `Log` is one tool's output being read: the records taken from it so far,
what its header says (`source`, kept in the results file as
metadata.source.logs[i]), and, once reading stopped early, why (`error`).
An importer adds each record as soon as its row is read: with a `sink` (the
command's results file) the record leaves the Log at once, so memory does not
grow with the log; without one (tests) it stays in `records`. A log cut in the
middle keeps every row before the cut.

Each tool prints its numbers with a fixed printf format (IMB and OSU: "%.2f"
for times and rates, "%d" for sizes and counts; nccl-tests: by width, see
nccl.py). A token that is not what that format prints -- "7.9" or "7." where
OSU prints "7.95", a row without its newline at the end of the log -- is a row
cut while the tool wrote it (or edited): `fixed` (and the reading of the
lines, importers._lines) stop the log there with a LogError rather than store
a wrong number.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from commbench import records


class LogError(Exception):
    """A line the importer cannot read (malformed) or a log that ends too early (cut)."""

    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line
        self.message = message


class Unsupported(LogError):
    """A log in a version or layout the importer does not read: nothing of it is imported."""


WARNINGS_KEPT = 50  # per log: the first ones verbatim, then only how many more


@dataclass
class Log:
    path: str
    index: int  # which log of the command line (records say it in extra.source.log)
    fmt: str = ""  # imb | osu | nccl
    source: dict = field(default_factory=dict)  # metadata.source.logs[index]
    # the results file's "family" when this log is the first
    family: dict = field(default_factory=dict)
    config: dict = field(default_factory=dict)  # benchmarks, mb_unit, multi, argv
    # run metadata the log states: date, mpi_version, uname, hosts …
    meta: dict = field(default_factory=dict)
    # not yet settled, or all without a sink
    records: list[records.Measurement] = field(default_factory=list)
    world_size: int | None = None
    error: str | None = None  # "LOG:LINE: what is wrong" once reading stopped early
    # where settled records go (the results file)
    sink: Callable[[records.Measurement], None] | None = None
    # an importer that still changes its latest records (IMB's turnover) holds them
    hold: bool = False
    count: int = 0  # records settled
    benchmarks: dict = field(default_factory=dict)  # benchmark names in order of their first record
    largest_world: int = 0  # the largest world_size of a settled record
    _settled: int = 0

    def add(self, line: int, **kw) -> records.Measurement:
        """A record read at this line of the log (kw: Measurement's fields)."""
        extra = {"source": {"log": self.index, "line": line}, **kw.pop("extra", {})}
        rec = records.Measurement(extra=extra, **kw)
        self.records.append(rec)
        if not self.hold:
            self.settle()
        return rec

    def settle(self) -> None:
        """The records added so far are final: count them and hand them to the sink."""
        for rec in self.records[self._settled :]:
            self.count += 1
            self.benchmarks.setdefault(rec.benchmark, None)
            self.largest_world = max(self.largest_world, rec.world_size or 0)
            if self.sink is not None:
                self.sink(rec)
        if self.sink is not None:
            self.records.clear()
        self._settled = len(self.records)

    def imported(self, name: str, title: str, part: str, **config) -> None:
        """The results file's family and config of this log (config: what differs from
        every importer's own: benchmarks, mb_unit, multi, argv)."""
        self.family = {"name": name, "title": title, "part": part, "profile": "imported"}
        self.config = {
            "family": name,
            "benchmarks": list(self.benchmarks),
            "mb_unit": 10**6,
            "multi": None,
            "argv": [],
            **config,
        }

    def warn(self, line: int, message: str) -> None:
        """Something the document should name:
        a value the tool printed as nan, a result left out."""
        warnings = self.source.setdefault("warnings", [])
        if len(warnings) < WARNINGS_KEPT:
            warnings.append(f"line {line}: {message}")
        else:
            self.source["warnings_not_listed"] = self.source.get("warnings_not_listed", 0) + 1


_NONFINITE = re.compile(r"[-+]?(nan|inf|infinity)", re.I)
_INTEGER = re.compile(r"-?\d+", re.ASCII)


def numeric(token: str) -> bool:
    """Does the token read as a number (a table row's cell, not a header word)?"""
    try:
        float(token)
    except ValueError:
        return False
    return True


def number(token: str, line: int, what: str) -> float | None:
    """A number of the log; None for a value the tool printed as inf or nan (left out)."""
    try:
        v = float(token)
    except ValueError:
        raise LogError(line, f"{what} is not a number: {token!r}") from None
    return v if math.isfinite(v) else None


def integer(token: str, line: int, what: str) -> int:
    if _INTEGER.fullmatch(token) is None:
        raise LogError(
            line,
            f"{what} is not an integer: {token!r} (accepted: digits, as the tool prints a "
            "count or a size)",
        )
    return int(token)


def decimals_form(decimals: int) -> str:
    """How "%.<decimals>f" prints a number, in words."""
    return (
        "digits without a point"
        if decimals == 0
        else f"{decimals} decimal{'s' if decimals > 1 else ''}"
    )


def fixed(token: str, decimals: int, line: int, what: str, tool: str) -> float | None:
    """A number the tool printed with printf's "%.<decimals>f"; None for nan or inf (left
    out). Anything else -- fewer decimals, a trailing point, no digits -- is a value cut
    (or edited) after the tool wrote it: LogError, not a wrong number stored."""
    body = token[1:] if token[:1] == "-" else token
    if not body.isascii():
        good = False
    elif decimals:
        point = body.find(".")
        good = (
            point > 0
            and len(body) - point - 1 == decimals
            and body[:point].isdigit()
            and body[point + 1 :].isdigit()
        )
    else:
        good = body.isdigit()
    if good:
        return float(token)
    if _NONFINITE.fullmatch(token):
        return None
    raise LogError(
        line,
        f"{what} {token!r} is not a number as {tool} prints it: the row was cut (or edited) "
        f"and is not imported (accepted: {what} with {decimals_form(decimals)}, as {tool}'s "
        f"%.{decimals}f prints it)",
    )


def read_lines(reader, lines) -> None:
    """lines (the log's lines without their ends, from the first: a list, or the stream) fed
    to the reader one by one, numbered from 1, and its finish(the last line's number)."""
    n = 0
    for n, line in enumerate(lines, start=1):
        reader.feed(n, line)
    reader.finish(n)


def options_of(argv: list[str]) -> dict:
    """The options of a command line as given: {"-msglog": "0:3", "-check": True, …}."""
    out: dict = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("-") and not re.fullmatch(r"-\d+(\.\d+)?", a):
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            if nxt is not None and (not nxt.startswith("-") or re.fullmatch(r"-\d+(\.\d+)?", nxt)):
                out[a], i = nxt, i + 2
                continue
            out[a] = True
        i += 1
    return out


def turnover_of(rows: list[tuple[int, float, float]]) -> float:
    """The factor F in rate = F * bytes / t of a table, from its (bytes, t usec,
    bytes/s) rows: the row with the largest rate (most printed digits), snapped to a
    multiple of 1/2 within 3 %; 1.0 when no row has a rate."""
    usable = [(x, t, r) for x, t, r in rows if x and t and r]
    if not usable:
        return 1.0
    x, t, r = max(usable, key=lambda row: row[2])
    f = r * t * 1e-6 / x
    snapped = max(0.5, round(f * 2) / 2)
    return snapped if abs(f - snapped) <= 0.03 * snapped else round(f, 3)
