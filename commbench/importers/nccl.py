"""nccl-tests output as records: the text of all_reduce_perf & co., and the JSON of -J.

Text: the '#' header ("# nccl-tests version …", "# Collective test starting:
NAME", "# nThread … iters: N …", one "#  Rank …" line per GPU), the column
lines (size count type redop root, then time algbw busbw #wrong for
out-of-place and for in-place, -I's per-iteration columns, -S's timestamp),
one row per size, and the footer ("# Out of bounds values", "# Avg bus
bandwidth"); a log without the footer was cut. Each row gives two records,
one per placement (the record's mode: "out-of-place float sum", "in-place …").
The JSON of -J: nccl_json.py.

nccl-tests prints sizes and counts with "%li", #wrong with "%6g", and each
time and bandwidth in a field of fixed width (time 7, algbw and busbw 6):
since 2.17.3 (the versions that print "# nccl-tests version") with as many
decimals as fit, 2, 1 or 0, then "%.1e"/"%.0e"; from 2019 to then, times
with 2 decimals below 100 us, 1 below 10000, 0 above, bandwidths "%6.2f". A
number not printed so ("7.9" for a time of 7.95, "7.") was cut or edited:
the row stops the log (LogError), as a row without its newline at the end.
The 2017-2018 layout (times in ms, a "res" column) is refused.
"""

from __future__ import annotations

import math
import re

from commbench import records
from commbench.importers.common import Log, LogError, Unsupported, integer, read_lines
from commbench.records import Kind

VERSION = re.compile(r"^#\s*nccl-tests version\s+(?P<v>\S+)(?P<rest>.*)$")
PROGRAM = re.compile(r"^#\s*Collective test (?:starting|concluded):\s*(?P<name>\S+)")
RANK = re.compile(
    r"^#\s+Rank\s+(?P<rank>\d+)\s+Group\s+(?P<group>\d+)\s+Pid\s+(?P<pid>\d+)\s+on\s+(?P<host>\S+)"
    r"\s+device\s+(?P<device>\d+)\s+\[(?P<bus>[^\]]*)\]\s*(?P<info>.*?)\s*$"
)
SETTING = re.compile(
    r"(nThread|nGpus|minBytes|maxBytes|step|warmup iters|agg iters|iters|validation|graph|"
    r"unalign):?\s+(\S+)"
)
FOOTER = re.compile(r"^#\s*(Out of bounds values|Avg bus bandwidth)\s*:\s*(?P<v>\S+)")
PLACEMENTS = ("out-of-place", "in-place")
WIDTHS = {"time": 7, "cputime": 7, "algbw": 6, "busbw": 6}  # i_min, i_max, i_p99, i_cv%: 7
WRONG = re.compile(r"\d+|\d(\.\d+)?e[-+]\d+|N/A", re.ASCII)  # "%6g" of a count ("%5.0le" in 2019)
NONFINITE = re.compile(r"[-+]?(nan|inf)", re.I)


def printed(v: float, width: int) -> str:
    """How nccl-tests since 2.17.3 prints v in a field of width characters (getFloatStr)."""
    for d in (2, 1, 0):
        s = f"{v:.{d}f}"
        if len(s) <= width:
            return s
    return f"{v:.1e}" if width >= 7 else f"{v:.0e}"


def printed_before(v: float, width: int) -> tuple[str, ...]:
    """How nccl-tests 2019 to 2.17.2 printed v: times "%7.2f" below 100 us, "%7.1f" below
    10000, "%7.0f" above; bandwidths "%6.2f" (a time printed as 100 or 10000 may carry
    either: 99.999 is "100.00", 100.04 "100.0")."""
    if width == 6:
        return (f"{v:.2f}",)
    return tuple(
        f"{v:.{d}f}"
        for d, low, high in ((2, 0, 100), (1, 100, 10000), (0, 10000, math.inf))
        if low <= v <= high
    )


def _float_forms(width: int, versioned: bool) -> str:
    new = (
        f"as many decimals as fit in {width} characters (2, 1, 0), then %.{1 if width >= 7 else 0}e"
    )
    if versioned:
        return new
    old = "%.2f" if width == 6 else "%.2f below 100, %.1f below 10000, %.0f above"
    return f"{new}; or, before 2.17.3, {old}"


def _mode(placement: str, dtype: str, redop: str, root: int) -> str:
    return f"{placement} {dtype} {redop}" + (f" root {root}" if root >= 0 else "")


def add_pair(log: Log, n: int, head: dict, blocks: list[dict | None]) -> None:
    """The two records of one size: head has bytes, count, type, redop, root, repetitions, np;
    blocks the out-of-place and in-place numbers (None: not measured)."""
    np_ = head["np"]
    for placement, b in zip(PLACEMENTS, blocks):
        if b is None:
            continue
        values = {"t": b["time"]}
        for src, key in (("algbw", "bytes_per_sec"), ("busbw", "bus_bytes_per_sec")):
            if b.get(src) is not None:
                values[key] = b[src] * 1e9
        extra = {k: head[k] for k in ("count", "type", "redop", "root")}
        extra.update(placement=placement, wrong=b.get("wrong"))
        if b.get("wrong") is not None:
            extra["check"] = records.SUCCESSFUL if b["wrong"] == 0 else records.FAILED
        if b.get("per_iteration"):
            extra["per_iteration"] = b["per_iteration"]
        log.add(
            n,
            benchmark=head["name"],
            family="nccl",
            kind=Kind.COLLECTIVE.value,
            np=np_,
            mode=_mode(placement, head["type"], head["redop"], head["root"]),
            bytes=head["bytes"],
            repetitions=head["repetitions"],
            groups=[list(range(np_))] if np_ else [],
            world_size=np_,
            values=values,
            extra=extra,
        )


class TextReader:
    def __init__(self, log: Log, np_hint: int | None):
        self.log, self.np_hint = log, np_hint
        self.src = log.source
        self.src.update(
            format="nccl", suite="nccl-tests", tool=None, version=None, settings={}, ranks=[]
        )
        self.cols: list[str] | None = None
        self.footer = False

    def feed(self, n: int, raw: str) -> None:
        line = raw.rstrip()
        if not line.strip():
            return
        if not line.startswith("#"):
            if self.cols is None:
                raise LogError(n, "a row before the column line ('#  size  count  type  redop …')")
            self.row(n, line.split())
            return
        if (m := VERSION.match(line)) is not None:
            self.src["version"] = m.group("v")
            self.src["settings"].update(re.findall(r"(nccl-\w+)=(\S+)", m.group("rest")))
        elif (m := PROGRAM.match(line)) is not None:
            self.src["tool"] = self.src["tool"] or m.group("name")
        elif (m := RANK.match(line)) is not None:
            self.src["ranks"].append(
                {k: int(v) if v.isdigit() else v for k, v in m.groupdict().items()}
            )
        elif line.lstrip("# ").startswith("nThread"):
            self.src["settings"].update(SETTING.findall(line))
        elif (m := FOOTER.match(line)) is not None:
            self.footer = True
            self.src.setdefault("footer", {})[m.group(1)] = m.group("v")
        else:
            toks = line[1:].split()
            if toks[:2] == ["size", "count"]:
                if "res" in toks or not any(t in ("time", "cputime") for t in toks):
                    raise Unsupported(
                        n,
                        f"the column line {' '.join(toks)!r} is nccl-tests' layout of 2017-2018 "
                        "(times in ms, a 'res' column), which this importer does not read "
                        "(accepted: the output of nccl-tests from 2019 on: time (us) algbw busbw "
                        "#wrong)",
                    )
                self.cols = toks

    def row(self, n: int, toks: list[str]) -> None:
        names = [c for c in self.cols if c != "timestamp"]
        times = [i for i, c in enumerate(names) if c in ("time", "cputime")]
        first = times[0]
        block = (times[1] if len(times) > 1 else len(names)) - first
        if (
            len(names) < len(self.cols)
            and len(toks) > 2
            and re.fullmatch(r"\d{4}-\d\d-\d\d", toks[-2])
        ):
            toks = toks[:-2]  # -S: the timestamp
        body, nblocks = toks[first:], (len(names) - first) // block
        if len(toks) <= first or len(body) != block * nblocks or not toks[0].isdigit():
            cut = " (the log seems cut here)" if len(toks) < len(names) else ""
            raise LogError(
                n,
                f"a row should hold {len(names)} values ({' '.join(names)}), it holds "
                f"{' '.join(toks)!r}{cut}",
            )
        head = {
            "name": self.src["tool"] or self.log.path.rsplit("/", 1)[-1].split(".")[0],
            "bytes": integer(toks[0], n, "size"),
            "count": integer(toks[1], n, "count"),
            "type": toks[first - 3],
            "redop": toks[first - 2],
            "root": integer(toks[first - 1], n, "root"),
            "repetitions": self.repetitions(),
            "np": self.np_hint or len(self.src["ranks"]),
        }
        blocks = [
            self.block(
                n, p, dict(zip(names[first : first + block], body[i * block : (i + 1) * block]))
            )
            for i, p in enumerate(PLACEMENTS[:nblocks])
        ]
        add_pair(self.log, n, head, (blocks + [None, None])[:2])

    def value(self, n: int, name: str, tok: str, placement: str) -> float | None:
        """A time or bandwidth as nccl-tests prints it (None: nan, named in a warning)."""
        what = f"{placement} {name}"
        width = WIDTHS.get(name, 7)
        versioned = self.src.get("version") is not None
        try:
            v = float(tok)
        except ValueError:
            v = math.nan
        if NONFINITE.fullmatch(tok):
            self.log.warn(n, f"{what} printed as {tok!r}, left out of the record")
            return None
        if math.isfinite(v) and (
            tok == printed(v, width) or not versioned and tok in printed_before(v, width)
        ):
            return v
        raise LogError(
            n,
            f"{what} {tok!r} is not a number as nccl-tests prints it: the row was cut (or edited) "
            f"and is not imported (accepted: {_float_forms(width, versioned)})",
        )

    def block(self, n: int, placement: str, cells: dict) -> dict:
        t = cells.get("time", cells.get("cputime"))
        wrong = cells.get("#wrong", cells.get("error"))
        if wrong is not None and not WRONG.fullmatch(wrong):
            raise LogError(
                n,
                f"{placement} #wrong {wrong!r} is not a count as nccl-tests prints it: the row "
                "was cut (or edited) and is not imported (accepted: %6g of a count, or N/A)",
            )
        out = {
            "time": self.value(n, "time", t, placement),
            "algbw": self.value(n, "algbw", cells["algbw"], placement),
            "busbw": self.value(n, "busbw", cells["busbw"], placement),
            "wrong": None if wrong in (None, "N/A") else float(wrong),
        }
        extras = {k: self.value(n, k, v, placement) for k, v in cells.items() if k.startswith("i_")}
        if extras:
            out["per_iteration"] = {k: v for k, v in extras.items() if v is not None}
        if out["time"] is None:
            raise LogError(
                n,
                f"the {placement} time is {t!r}: nccl-tests measured no time, the row is not "
                "imported (accepted: a time in us)",
            )
        return out

    def repetitions(self) -> int:
        s = dict(self.src["settings"])
        try:
            return int(s.get("iters", 0)) * max(1, int(s.get("agg iters", 1)))
        except ValueError:
            return 0

    def finish(self, nlines: int) -> None:
        if self.cols is None:
            raise LogError(
                nlines,
                "no column line ('#  size  count  type  redop …'): not nccl-tests output, or cut",
            )
        if not self.footer:
            raise LogError(
                nlines,
                "the log ends before nccl-tests' footer ('# Out of bounds values …'): it was "
                f"cut; the {self.log.count} records before are kept",
            )


def read_text(log: Log, lines, np_hint: int | None = None) -> None:
    """lines: the log's lines without their ends, from the first (a list, or the stream)."""
    r = TextReader(log, np_hint)
    try:
        read_lines(r, lines)
    finally:
        r.src["settings"] = dict(r.src["settings"])
        describe(log, r.src.get("ranks", []))


def describe(log: Log, ranks: list) -> None:
    src = log.source
    hosts = sorted(
        {r.get("hostname") or r.get("host") for r in ranks if isinstance(r, dict)} - {None}
    )
    log.imported("nccl", "nccl-tests", src.get("tool") or "", argv=src.get("args", [])[1:])
    log.world_size = log.largest_world or (len(ranks) or None)
    log.meta = {k: v for k, v in (("hosts", hosts), ("date", src.get("start_time"))) if v}
