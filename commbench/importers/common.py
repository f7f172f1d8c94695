"""What every importer fills in, and the error it raises at a malformed or cut line.

A `Log` is one tool's output being read: the records taken from it so far,
what its header says (`source`, kept in the results file as
metadata.source.logs[i]), and, once reading stopped early, why (`error`).
An importer appends each record as soon as its row is read, so a log cut in
the middle keeps every row before the cut.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from commbench import records


class LogError(Exception):
    """A line the importer cannot read (malformed) or a log that ends too early (cut)."""

    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line
        self.message = message


@dataclass
class Log:
    path: str
    index: int  # which log of the command line (records say it in extra.source.log)
    fmt: str = ""  # imb | osu | nccl
    source: dict = field(default_factory=dict)  # metadata.source.logs[index]
    family: dict = field(default_factory=dict)  # the results file's "family" when this log is the first
    config: dict = field(default_factory=dict)  # benchmarks, mb_unit, multi, argv
    meta: dict = field(default_factory=dict)  # run metadata the log states: date, mpi_version, uname, hosts …
    records: list[records.Measurement] = field(default_factory=list)
    world_size: int | None = None
    error: str | None = None  # "LOG:LINE: what is wrong" once reading stopped early

    def add(self, line: int, **kw) -> records.Measurement:
        """A record read at this line of the log (kw: Measurement's fields)."""
        extra = {"source": {"log": self.index, "line": line}, **kw.pop("extra", {})}
        rec = records.Measurement(extra=extra, **kw)
        self.records.append(rec)
        return rec


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
    try:
        return int(token)
    except ValueError:
        raise LogError(line, f"{what} is not an integer: {token!r}") from None


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
