"""Expectations a site writes down (docs/expect.md): a TOML file of rules, each a bound on one
metric of the rows it selects, and the verdict of every selected row of a run (no MPI).

    [[expect]]
    benchmark = "PingPong"        # a name or a glob, or a list of them (case as `commbench list`)
    bytes = "0"                   # optional: 4096, "4KiB", "1KiB..64KiB", ">= 1MiB", "<= 64KiB"
    np = 2                        # optional: a process count or a list of them
    family = "mpi1"               # optional (and mode: "aggregate", "non-aggregate" ...)
    hosts = "hb120-*"             # optional: globs every host of the run must match
    t = "<= 2 us"                 # the reported time (t_max; t_ovrl for overlap rows)
    bandwidth = ">= 23 GB/s"      # bytes per second; GB/s is 10^9, GiB/s 2^30, Gb/s bits
    rate = ">= 1 Mmsg/s"          # messages per second

A bound is `<= V UNIT`, `>= V UNIT`, `A..B UNIT`, or ReFrame's reference tuple
`[value, lower, upper, UNIT]` (lower and upper fractions of value, -inf or inf for none:
`[2.0, -inf, 0.1, "us"]` is `<= 2.2 us`). `>= 0.8 of limit` bounds a row by the fraction of
its physical limit (the row's record must carry one: extra["limit"]).

Values are held in base units: µs for t, bytes/s for bandwidth, messages/s for rate.
"""

from __future__ import annotations

import fnmatch
import math
import re
import tomllib
from dataclasses import dataclass

from commbench import records

PASS, FAIL, NO_DATA = "pass", "fail", "no data"

UNITS = {
    "t": {"ns": 1e-3, "us": 1.0, "µs": 1.0, "usec": 1.0, "ms": 1e3, "s": 1e6},
    "bandwidth": {
        "B/s": 1.0,
        **{f"{p}B/s": 10.0**e for p, e in (("k", 3), ("K", 3), ("M", 6), ("G", 9), ("T", 12))},
        **{f"{p}iB/s": 2.0**e for p, e in (("K", 10), ("M", 20), ("G", 30), ("T", 40))},
        **{f"{p}b/s": 10.0**e / 8 for p, e in (("k", 3), ("M", 6), ("G", 9), ("T", 12))},
        **{f"{p}bit/s": 10.0**e / 8 for p, e in (("k", 3), ("M", 6), ("G", 9), ("T", 12))},
    },
    "rate": {"msg/s": 1.0, "kmsg/s": 1e3, "Mmsg/s": 1e6},
}
# What a metric is, for the message that names a bound of the wrong kind.
KIND_OF = {"t": "a time", "bandwidth": "a rate of bytes", "rate": "a rate of messages"}
# The unit a value is shown and proposed in (--write), per metric and magnitude.
SHOWN = {
    "t": ((1e3, "ms"), (0.0, "us")),
    "bandwidth": ((1e9, "GB/s"), (1e6, "MB/s"), (0.0, "B/s")),
    "rate": ((1e6, "Mmsg/s"), (1e3, "kmsg/s"), (0.0, "msg/s")),
}
# `>= 0.8 of link`: what the fraction is of (docs/limits.md): the row's bandwidth limit (one
# copy in memory, or the link's line rate), the link's only, or t's latency floor
LIMITS = ("limit", "link", "floor")
SIZE_UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "kB": 10**3, "MB": 10**6}
SELECTORS = ("benchmark", "family", "np", "mode", "bytes", "hosts", "name")
BASE = {"t": "us", "bandwidth": "B/s", "rate": "msg/s"}  # the unit values are held in
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


class ExpectationError(ValueError):
    """Bad input: the message names the file, the line and the rule."""


@dataclass(frozen=True)
class Bound:
    low: float | None  # base units, or a fraction of the limit when of_limit
    high: float | None
    text: str  # as the file wrote it
    of_limit: str | None = None

    def holds(self, v: float) -> bool:
        return (self.low is None or v >= self.low) and (self.high is None or v <= self.high)


@dataclass(frozen=True)
class Rule:
    where: str  # FILE:LINE of its [[expect]]
    metric: str
    bound: Bound
    benchmarks: tuple[str, ...]
    family: str | None = None
    mode: str | None = None
    nps: tuple[int, ...] | None = None
    sizes: tuple[int | None, int | None] | None = None  # inclusive bytes
    hosts: tuple[str, ...] | None = None
    name: str = ""

    def selects(self, r: records.Measurement) -> bool:
        if not any(fnmatch.fnmatchcase(r.benchmark.lower(), b.lower()) for b in self.benchmarks):
            return False
        pairs = ((self.family, r.family), (self.mode, r.mode))
        if any(want is not None and want != got for want, got in pairs):
            return False
        if self.nps is not None and r.np not in self.nps:
            return False
        if self.sizes is None:
            return True
        lo, hi = self.sizes
        return (
            r.bytes is not None and (lo is None or r.bytes >= lo) and (hi is None or r.bytes <= hi)
        )

    def applies_to(self, hosts: list[str]) -> bool:
        return self.hosts is None or all(
            any(fnmatch.fnmatchcase(h, p) for p in self.hosts) for h in hosts
        )

    def describe(self) -> str:
        return self.name or f"{'|'.join(self.benchmarks)} {self.metric} {self.bound.text}"


@dataclass
class Verdict:
    rule: Rule
    source: str  # the results file (or store run) the row is of
    row: str  # the row's label, "" when the rule found none
    value: float | None  # base units (or the fraction of the limit)
    verdict: str  # PASS | FAIL | NO_DATA
    why: str = ""


def parse(text: str, path: str, known: set[str] | None = None) -> list[Rule]:
    """The rules of an expectations file; ExpectationError naming file, line and rule.
    `known`: every benchmark name commbench has (lower case), to refuse a name that is none."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ExpectationError(f"{path}: not TOML: {e}") from None
    extra = sorted(set(doc) - {"expect"})
    if extra:
        raise ExpectationError(
            f"{path}: unknown table or key {extra[0]!r} (accepted: [[expect]] tables only)"
        )
    tables = doc.get("expect", [])
    if not isinstance(tables, list) or not tables:
        raise ExpectationError(f"{path}: no [[expect]] table: there is nothing to check")
    lines = _table_lines(text, len(tables))
    rules: list[Rule] = []
    for table, line in zip(tables, lines):
        rules += _rules(table, f"{path}:{line}", known)
    return rules


def _table_lines(text: str, n: int) -> list[int]:
    """The line of each [[expect]] header, in order (tomllib keeps no positions)."""
    found = [
        i for i, s in enumerate(text.splitlines(), 1) if re.match(r"\s*\[\[\s*expect\s*\]\]", s)
    ]
    return found if len(found) == n else [0] * n


def _rules(table: dict, where: str, known: set[str] | None) -> list[Rule]:
    unknown = [k for k in table if k not in SELECTORS and k not in UNITS]
    if unknown:
        accepted = ", ".join((*SELECTORS, *UNITS))
        raise ExpectationError(f"{where}: unknown key {unknown[0]!r} (accepted: {accepted})")
    metrics = [m for m in UNITS if m in table]
    if "benchmark" not in table or not metrics:
        raise ExpectationError(
            f"{where}: a rule needs a benchmark and at least one of {', '.join(UNITS)}"
        )
    common = {
        "benchmarks": _names(table["benchmark"], where, known),
        "family": _text(table, "family", where),
        "mode": _text(table, "mode", where),
        "nps": _nps(table.get("np"), where),
        "sizes": None if "bytes" not in table else _sizes(table["bytes"], where),
        "hosts": None if "hosts" not in table else _globs(table["hosts"], "hosts", where),
        "name": _text(table, "name", where) or "",
    }
    return [Rule(where, m, bound(table[m], m, where), **common) for m in metrics]


def _text(table: dict, key: str, where: str) -> str | None:
    v = table.get(key)
    if v is not None and not isinstance(v, str):
        raise ExpectationError(f"{where}: {key} should be a string, is {v!r}")
    return v


def _globs(v: object, key: str, where: str) -> tuple[str, ...]:
    items = [v] if isinstance(v, str) else v
    if not isinstance(items, list) or not items or not all(isinstance(s, str) for s in items):
        raise ExpectationError(f"{where}: {key} should be a string or a list of strings")
    return tuple(items)


def _names(v: object, where: str, known: set[str] | None) -> tuple[str, ...]:
    names = _globs(v, "benchmark", where)
    for n in names:
        if known is not None and not fnmatch.filter(known, n.lower()):
            raise ExpectationError(
                f"{where}: benchmark {n!r} is none of commbench's (`commbench list` names them)"
            )
    return names


def _nps(v: object, where: str) -> tuple[int, ...] | None:
    if v is None:
        return None
    items = v if isinstance(v, list) else [v]
    if not items or not all(
        isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in items
    ):
        raise ExpectationError(f"{where}: np should be a process count or a list of them")
    return tuple(items)


def size(text: str, where: str) -> int:
    """Bytes of `4096`, `4KiB`, `1 MB`."""
    m = re.fullmatch(rf"\s*(\d+)\s*({'|'.join(SIZE_UNITS)})?\s*", text)
    if not m:
        raise ExpectationError(
            f"{where}: bytes {text!r} is not a size (accepted: 4096, 4KiB, 1MiB, 1MB, "
            "1KiB..64KiB, >= 1MiB, <= 64KiB)"
        )
    return int(m.group(1)) * SIZE_UNITS[m.group(2) or "B"]


def _sizes(v: object, where: str) -> tuple[int | None, int | None]:
    if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
        return (v, v)
    if not isinstance(v, str):
        raise ExpectationError(f"{where}: bytes should be a size or a range of sizes, is {v!r}")
    s = v.strip()
    if ".." in s:
        lo, hi = (size(p, where) for p in s.split("..", 1))
        if lo > hi:
            raise ExpectationError(f"{where}: bytes {v!r}: the range is empty")
        return (lo, hi)
    if s.startswith(">="):
        return (size(s[2:], where), None)
    if s.startswith("<="):
        return (None, size(s[2:], where))
    n = size(s, where)
    return (n, n)


def bound(v: object, metric: str, where: str) -> Bound:
    """A metric's bound as the file writes it (module docstring)."""
    if isinstance(v, list):
        return _reference(v, metric, where)
    if not isinstance(v, str):
        raise ExpectationError(f"{where}: {metric} = {v!r}: a bound is a string or a list")
    s = " ".join(v.split())
    m = re.fullmatch(rf"(<=|>=)\s*({_NUMBER}) of ({'|'.join(LIMITS)})", s)
    if m:
        fraction = float(m.group(2))
        if fraction <= 0:
            raise ExpectationError(f"{where}: {metric} = {v!r}: a fraction must be above 0")
        kind = m.group(3)
        if not (metric == "t" and kind == "floor" or metric == "bandwidth" and kind != "floor"):
            raise ExpectationError(
                f"{where}: {metric} = {v!r}: the floor bounds t, a limit or link bounds "
                "bandwidth (docs/limits.md)"
            )
        low, high = (fraction, None) if m.group(1) == ">=" else (None, fraction)
        return Bound(low, high, s, of_limit=m.group(3))
    m = re.fullmatch(rf"(<=|>=)\s*({_NUMBER})\s*(\S+)", s) or re.fullmatch(
        rf"({_NUMBER})\s*\.\.\s*({_NUMBER})\s*(\S+)", s
    )
    if not m:
        raise ExpectationError(
            f"{where}: {metric} = {v!r} is not a bound (accepted: '<= 2 us', '>= 23 GB/s', "
            "'1..3 us', '>= 0.8 of limit', [2.0, -0.1, 0.1, \"us\"])"
        )
    scale = unit(m.group(3), metric, where, v)
    if m.group(1) in ("<=", ">="):
        value = float(m.group(2)) * scale
        low, high = (value, None) if m.group(1) == ">=" else (None, value)
    else:
        low, high = float(m.group(1)) * scale, float(m.group(2)) * scale
        if low > high:
            raise ExpectationError(f"{where}: {metric} = {v!r}: the range is empty")
    return Bound(low, high, s)


def unit(name: str, metric: str, where: str, written: object) -> float:
    """The factor of a unit to the metric's base unit; the wrong kind named."""
    if name in UNITS[metric]:
        return UNITS[metric][name]
    other = next((m for m in UNITS if name in UNITS[m]), None)
    what = f"{name!r} is {KIND_OF[other]}" if other else f"{name!r} is not a unit"
    raise ExpectationError(
        f"{where}: {metric} = {written!r}: {metric} is {KIND_OF[metric]}, {what} "
        f"(accepted: {', '.join(UNITS[metric])})"
    )


def _reference(v: list, metric: str, where: str) -> Bound:
    """ReFrame's reference tuple: [value, lower, upper, unit], lower in [-1, 0] and upper
    >= 0 as fractions of value, -inf or inf for no bound on that side."""
    ok = len(v) == 4 and all(isinstance(x, int | float) and not isinstance(x, bool) for x in v[:3])
    if not ok or not isinstance(v[3], str):
        raise ExpectationError(
            f"{where}: {metric} = {v!r}: a reference is [value, lower, upper, unit], "
            'e.g. [2.0, -0.1, 0.1, "us"]'
        )
    ref, lower, upper = (float(x) for x in v[:3])
    if not (-1 <= lower <= 0 or lower == -math.inf) or upper < 0 or ref <= 0:
        raise ExpectationError(
            f"{where}: {metric} = {v!r}: value above 0, lower in -1..0 (or -inf), upper >= 0 "
            "(or inf)"
        )
    scale = unit(v[3], metric, where, v)
    low = None if lower == -math.inf else ref * (1 + lower) * scale
    high = None if upper == math.inf else ref * (1 + upper) * scale
    return Bound(low, high, f"{v[0]:g} {v[3]} ({lower:+g}/{upper:+g})")


def value(r: records.Measurement, metric: str) -> float | None:
    """A row's measured metric in base units, None when it has none."""
    if metric == "t":
        return records.compared_time(r)
    v = r.values.get("bytes_per_sec" if metric == "bandwidth" else "msgs_per_sec")
    return v if isinstance(v, int | float) and v > 0 else None


def label(r: records.Measurement) -> str:
    parts = [r.benchmark if len(r.groups) <= 1 else f"Multi-{r.benchmark}", f"np={r.np}"]
    parts += [f"mode={r.mode}"] if r.mode else []
    parts += [] if r.bytes is None else [f"bytes={r.bytes}"]
    parts += [f"{k}={r.extra[k]}" for k in records.ROW_EXTRAS if k in r.extra]
    return " ".join(parts)


def check_hosts(rules: list[Rule], hosts_of_runs: list[list[str]]) -> None:
    """A rule's host pattern that matches no host of any run given is a mistake said."""
    every = {h for hs in hosts_of_runs for h in hs}
    for rule in rules:
        if (
            rule.hosts is not None
            and every
            and not any(fnmatch.fnmatchcase(h, p) for h in every for p in rule.hosts)
        ):
            raise ExpectationError(
                f"{rule.where}: hosts {list(rule.hosts)} match no host of the runs "
                f"({', '.join(sorted(every)[:8])})"
            )


def judge(rules: list[Rule], source: str, hosts: list[str], recs) -> list[Verdict]:
    """Every rule against every row it selects of one run: a verdict per (rule, row), and
    one "no data" verdict for a rule that applies to the run and selects no measured row.
    ExpectationError when two rules bound one metric of one row differently."""
    out: list[Verdict] = []
    for rule in rules:
        if not rule.applies_to(hosts):
            continue
        rows = [r for r in recs if rule.selects(r)]
        if not rows:
            out.append(Verdict(rule, source, "", None, NO_DATA, "no row of the run is selected"))
        out += [_verdict(rule, source, r) for r in rows]
    _disagreeing(out)
    return out


def _verdict(rule: Rule, source: str, r: records.Measurement) -> Verdict:
    row = label(r)
    if not r.ok:
        return Verdict(rule, source, row, None, NO_DATA, f"the row was not measured ({r.status})")
    v = value(r, rule.metric)
    if v is None:
        return Verdict(rule, source, row, None, NO_DATA, f"the row has no {rule.metric}")
    if rule.bound.of_limit:
        lim = r.extra.get("limit") if isinstance(r.extra.get("limit"), dict) else {}
        limit = lim.get(rule.metric)
        if lim and rule.bound.of_limit == "link" and lim.get("of") != "link":
            return Verdict(rule, source, row, None, NO_DATA, "the row's ranks share a host")
        if not isinstance(limit, int | float) or limit <= 0:
            what = "floor" if rule.metric == "t" else "limit"
            return Verdict(rule, source, row, None, NO_DATA, f"the run records no {what} for it")
        v = v / limit
    return Verdict(rule, source, row, v, PASS if rule.bound.holds(v) else FAIL)


def _disagreeing(verdicts: list[Verdict]) -> None:
    seen: dict[tuple, Rule] = {}
    for v in verdicts:
        if not v.row:
            continue
        key = (v.source, v.row, v.rule.metric)
        first = seen.setdefault(key, v.rule)
        if (first.bound.low, first.bound.high, first.bound.of_limit) != (
            v.rule.bound.low,
            v.rule.bound.high,
            v.rule.bound.of_limit,
        ):
            raise ExpectationError(
                f"{first.where} and {v.rule.where}: both bound {v.rule.metric} of {v.row} "
                f"({first.bound.text}; {v.rule.bound.text}): keep one, or narrow one's "
                "benchmark, bytes, np or hosts"
            )


def exit_status(verdicts: list[Verdict], allow_no_data: bool = False) -> int:
    """1 when a row fails its bound; else 2 when a rule found no data (unless allowed): the
    run cannot be said to be as expected; else 0."""
    if any(v.verdict == FAIL for v in verdicts):
        return 1
    if not allow_no_data and any(v.verdict == NO_DATA for v in verdicts):
        return 2
    return 0


def shown(v: float, metric: str, of_limit: str | None = None, rounded: str = "") -> str:
    """A value in the unit it reads best in, 3 significant digits: 0.70 us, 23.1 GB/s, 0.81 of
    limit; rounded "up" or "down" to them instead of to the nearest (a proposed bound that
    its own run must meet)."""
    if of_limit:
        return f"{v:.3g} of {of_limit}"
    scale, name = next((s, n) for s, n in SHOWN[metric] if v >= s)
    x = v / UNITS[metric][name]
    if rounded and x > 0:
        step = 10.0 ** (math.floor(math.log10(x)) - 2)
        x = (math.ceil(x / step - 1e-9) if rounded == "up" else math.floor(x / step + 1e-9)) * step
    return f"{x:.3g} {name}"
