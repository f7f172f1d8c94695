"""The physical limit beside every row (docs/limits.md): what a run's metadata says the
hardware cannot beat, and each row's fraction of it (no MPI; measured by
commbench.harness.limits).

metadata["limits"] = {
  "memory": {HOST: {"copy": [[bytes, bytes/s], ...],   # one memcpy, the run's buffers
                    "floor_us": one-way cache-line time between two ranks, or None,
                    "why": why there is no floor, "ranks": [a, b], "alloc": kind}},
  "link": {"rate": bytes/s or None, "source": where it was read, "why": why not,
           "per_host": {HOST: {"interface": IF, "rate": bytes/s, "source": ...}}},
}

A row whose ranks share one host is held against that host's memory: its bandwidth
against turnover x the one-copy bandwidth at its size (each message is at least one copy,
two through a shared segment), its time against the cache-line floor (a message cannot
arrive sooner than a line moves between the two cores). A row whose ranks span hosts is held
against the link: turnover x the line rate of the interface MPI's traffic takes (the
slowest host's); there is no latency floor across hosts.
"""

from __future__ import annotations

import bisect
import math
import re

from commbench import records


def link_rate(text: str) -> float | None:
    """bytes/s of a line rate as sysfs or a user writes it: "10000" (Mb/s, /sys/class/net/
    IF/speed), "100 Gb/sec (4X EDR)" (/sys/class/infiniband/*/ports/*/rate), "200Gb/s",
    "25 Gbit/s", "12.5 GB/s"; None when it is not one (a link down reads -1)."""
    s = text.strip()
    if re.fullmatch(r"\d+", s):
        return int(s) * 1e6 / 8 if int(s) > 0 else None
    m = re.match(r"([\d.]+)\s*([kMGT])(b|bit|B)(?:/s|/sec|ps)\b", s)
    if not m:
        return None
    scale = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}[m.group(2)]
    v = float(m.group(1)) * scale
    return (v if m.group(3) == "B" else v / 8) or None


def copy_rate(table: list, nbytes: int) -> float | None:
    """bytes/s of one copy of nbytes, interpolated in log-log between the measured sizes;
    the largest measured size's beyond it, the smallest's below."""
    pts = [(int(x), float(r)) for x, r in table if x > 0 and r > 0]
    if not pts or nbytes <= 0:
        return None
    xs = [x for x, _ in pts]
    i = bisect.bisect_left(xs, nbytes)
    if i == 0:
        return pts[0][1]
    if i == len(pts):
        return pts[-1][1]
    (x0, r0), (x1, r1) = pts[i - 1], pts[i]
    if x1 == nbytes:
        return r1
    w = (math.log(nbytes) - math.log(x0)) / (math.log(x1) - math.log(x0))
    return math.exp(math.log(r0) + w * (math.log(r1) - math.log(r0)))


def row_hosts(rec: records.Measurement, rank_hosts: list[str]) -> set[str]:
    ranks = [r for g in rec.groups for r in g]
    return {rank_hosts[r] for r in ranks if 0 <= r < len(rank_hosts)}


# A row's figures against its limit, each with the limit it is of (of_row's keys).
FIGURES = {"multiple": "t", "fraction": "bandwidth"}
KINDS = ("memory", "link")


def _number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def recorded(extra: object) -> dict:
    """A row's recorded limit (extra["limit"], of_row's) as a reader may use it: "of" one of
    KINDS, each figure with its limit where both are numbers, "host" where it is text; {}
    where no figure is left. extra is the results format's open part: a file may hold
    anything there, and a reader takes only what has this shape (tests/mpi/test_readers.py)."""
    lim = extra.get("limit") if isinstance(extra, dict) else None
    if not isinstance(lim, dict) or lim.get("of") not in KINDS:
        return {}
    out = {k: lim[k] for k in ("of", "host") if isinstance(lim.get(k), str)}
    for figure, of in FIGURES.items():
        if _number(lim.get(figure)) and _number(lim.get(of)):
            out[figure], out[of] = lim[figure], lim[of]
    return out if len(out) > 1 + ("host" in out) else {}


def of_row(rec: records.Measurement, limits: dict, rank_hosts: list[str]) -> dict | None:
    """The row's limit and its fraction of it (record extra["limit"]); None when the run
    knows none for it."""
    hosts = row_hosts(rec, rank_hosts)
    if not hosts or not rec.ok:
        return None
    bw, t = rec.values.get("bytes_per_sec"), records.compared_time(rec)
    if len(hosts) == 1:
        mem = (limits.get("memory") or {}).get(next(iter(hosts)))
        if not mem:
            return None
        rate = copy_rate(mem.get("copy") or [], rec.bytes or 0)
        out: dict = {"of": "memory", "host": next(iter(hosts))}
        floor = mem.get("floor_us")
        if floor and t:
            out.update(t=floor, multiple=t / floor)
    else:
        rate = (limits.get("link") or {}).get("rate")
        out = {"of": "link"}
    if rate and bw:
        out.update(bandwidth=rec.turnover * rate, fraction=bw / (rec.turnover * rate))
    return out if "fraction" in out or "multiple" in out else None
