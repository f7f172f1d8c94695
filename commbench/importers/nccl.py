"""nccl-tests output as records: the text of all_reduce_perf & co., and the JSON of -J.

Text: the '#' header ("# nccl-tests version …", "# Collective test starting:
NAME", "# nThread … iters: N …", one "#  Rank …" line per GPU), the column
lines (size count type redop root, then time algbw busbw #wrong for
out-of-place and for in-place, -I's per-iteration columns, -S's timestamp),
one row per size, and the footer ("# Out of bounds values", "# Avg bus
bandwidth"); a log without the footer was cut. JSON (-J, format versions
1 to 3): "config" (with "devices"), "results" (size, count, type, redop,
root, out_of_place/in_place: time, alg_bw, bus_bw, nwrong), a cut file keeps
every whole result before the cut. Each row gives two records, one per
placement (the record's mode: "out-of-place float sum", "in-place …").
"""

from __future__ import annotations

import json
import re

from commbench import records
from commbench.importers.common import Log, LogError, integer, number
from commbench.records import Kind

VERSION = re.compile(r"^#\s*nccl-tests version\s+(?P<v>\S+)(?P<rest>.*)$")
PROGRAM = re.compile(r"^#\s*Collective test (?:starting|concluded):\s*(?P<name>\S+)")
RANK = re.compile(r"^#\s+Rank\s+(?P<rank>\d+)\s+Group\s+(?P<group>\d+)\s+Pid\s+(?P<pid>\d+)\s+on\s+(?P<host>\S+)"
                  r"\s+device\s+(?P<device>\d+)\s+\[(?P<bus>[^\]]*)\]\s*(?P<info>.*?)\s*$")
SETTING = re.compile(r"(nThread|nGpus|minBytes|maxBytes|step|warmup iters|agg iters|iters|validation|graph|"
                     r"unalign):?\s+(\S+)")
FOOTER = re.compile(r"^#\s*(Out of bounds values|Avg bus bandwidth)\s*:\s*(?P<v>\S+)")
PLACEMENTS = ("out-of-place", "in-place")


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
        extra = {"count": head["count"], "type": head["type"], "redop": head["redop"], "root": head["root"],
                 "placement": placement, "wrong": b.get("wrong")}
        if b.get("wrong") is not None:
            extra["check"] = records.SUCCESSFUL if b["wrong"] == 0 else records.FAILED
        if b.get("per_iteration"):
            extra["per_iteration"] = b["per_iteration"]
        log.add(n, benchmark=head["name"], family="nccl", kind=Kind.COLLECTIVE.value, np=np_,
                mode=_mode(placement, head["type"], head["redop"], head["root"]), bytes=head["bytes"],
                repetitions=head["repetitions"], groups=[list(range(np_))] if np_ else [], world_size=np_,
                values=values, extra=extra)


class TextReader:
    def __init__(self, log: Log, np_hint: int | None):
        self.log, self.np_hint = log, np_hint
        self.src = log.source
        self.src.update(format="nccl", suite="nccl-tests", tool=None, version=None, settings={}, ranks=[])
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
            self.src["ranks"].append({k: int(v) if v.isdigit() else v for k, v in m.groupdict().items()})
        elif line.lstrip("# ").startswith("nThread"):
            self.src["settings"].update(SETTING.findall(line))
        elif (m := FOOTER.match(line)) is not None:
            self.footer = True
            self.src.setdefault("footer", {})[m.group(1)] = m.group("v")
        else:
            toks = line[1:].split()
            if toks[:2] == ["size", "count"]:
                self.cols = toks

    def row(self, n: int, toks: list[str]) -> None:
        names = [c for c in self.cols if c != "timestamp"]
        first = next(i for i, c in enumerate(names) if c in ("time", "cputime"))
        block = next((i for i, c in enumerate(names) if i > first and c in ("time", "cputime")), len(names)) - first
        if len(names) < len(self.cols) and len(toks) > 2 and re.fullmatch(r"\d{4}-\d\d-\d\d", toks[-2]):
            toks = toks[:-2]  # -S: the timestamp
        body, nblocks = toks[first:], (len(names) - first) // block
        if len(toks) <= first or len(body) % block or len(body) // block > nblocks or not toks[0].isdigit():
            cut = " (the log seems cut here)" if len(toks) < len(names) else ""
            raise LogError(n, f"a row should hold {len(names)} values ({' '.join(names)}), it holds "
                              f"{' '.join(toks)!r}{cut}")
        head = {"name": self.src["tool"] or self.log.path.rsplit("/", 1)[-1].split(".")[0],
                "bytes": integer(toks[0], n, "size"), "count": integer(toks[1], n, "count"),
                "type": toks[first - 3], "redop": toks[first - 2], "root": integer(toks[first - 1], n, "root"),
                "repetitions": self.repetitions(), "np": self.np_hint or len(self.src["ranks"])}
        parts = [body[i:i + block] for i in range(0, len(body), block)]
        blocks = [None] * (nblocks - len(parts)) + [self.block(n, dict(zip(names[first:first + block], p)))
                                                    for p in parts]
        add_pair(self.log, n, head, (blocks + [None, None])[:2])

    def block(self, n: int, cells: dict) -> dict:
        t = cells.get("time", cells.get("cputime"))
        wrong = cells.get("#wrong", cells.get("error"))
        out = {"time": number(t, n, "time"), "algbw": number(cells["algbw"], n, "algbw"),
               "busbw": number(cells["busbw"], n, "busbw"),
               "wrong": None if wrong in (None, "N/A") else number(wrong, n, "#wrong")}
        extras = {k: number(v, n, k) for k, v in cells.items() if k.startswith("i_")}
        if extras:
            out["per_iteration"] = extras
        if out["time"] is None:
            raise LogError(n, f"the time is not a number: {t!r}")
        return out

    def repetitions(self) -> int:
        s = dict(self.src["settings"])
        try:
            return int(s.get("iters", 0)) * max(1, int(s.get("agg iters", 1)))
        except ValueError:
            return 0

    def finish(self, nlines: int) -> None:
        if self.cols is None:
            raise LogError(nlines, "no column line ('#  size  count  type  redop …'): not nccl-tests output, or cut")
        if not self.footer:
            raise LogError(nlines, "the log ends before nccl-tests' footer ('# Out of bounds values …'): it was "
                                   f"cut; the {len(self.log.records)} records before are kept")


def read_text(log: Log, lines: list[str], np_hint: int | None = None) -> None:
    r = TextReader(log, np_hint)
    try:
        for n, line in enumerate(lines, start=1):
            r.feed(n, line)
        r.finish(len(lines))
    finally:
        r.src["settings"] = dict(r.src["settings"])
        _describe(log, r.src.get("ranks", []))


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _object_at(text: str, key: str) -> tuple[object, int] | None:
    """The value of "key" at the top level of a (possibly cut) JSON text, and where it starts."""
    m = re.search(rf'"{re.escape(key)}"\s*:\s*', text)
    if m is None:
        return None
    try:
        return json.JSONDecoder().raw_decode(text, m.end())[0], m.end()
    except json.JSONDecodeError:
        return None


def read_json(log: Log, text: str, np_hint: int | None = None) -> None:
    """-J output; a cut file keeps every whole result before the cut."""
    src = log.source
    src.update(format="nccl", suite="nccl-tests", tool=None, settings={}, ranks=[])
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        doc = None
    top = doc if isinstance(doc, dict) else {k: (v[0] if v else None) for k in ("version", "args", "nccl_version",
                                                                                 "config", "start_time")
                                                for v in [_object_at(text, k)]}
    cfg = top.get("config") if isinstance(top.get("config"), dict) else {}
    args = top.get("args") if isinstance(top.get("args"), list) else []
    src.update(tool=args[0].rsplit("/", 1)[-1] if args else None, json_version=top.get("version"),
               nccl_version=top.get("nccl_version"), start_time=top.get("start_time"), args=args,
               settings={k: v for k, v in cfg.items() if k != "devices"}, ranks=cfg.get("devices") or [])
    np_ = np_hint or len(src["ranks"])
    reps = int(cfg.get("iterations", 0) or 0) * max(1, int(cfg.get("aggregated_iterations", 1) or 1))
    try:
        for pos, item in _results(text, doc):
            _json_result(log, _line_of(text, pos), item, src, np_, reps)
        if doc is None:
            raise json.JSONDecodeError("the JSON text ends early (cut)", text, len(text))
    except json.JSONDecodeError as e:
        raise LogError(e.lineno, f"not valid JSON ({e.msg}, column {e.colno}); the {len(log.records)} "
                                 "records of the whole results before it are kept") from None
    finally:
        _describe(log, src["ranks"])


def _results(text: str, doc: dict | None):
    """(position, result) for each entry of "results", whole or cut."""
    m = re.search(r'"results"\s*:\s*\[', text)
    if m is None:
        raise json.JSONDecodeError('no "results" list', text, 0)
    dec, pos = json.JSONDecoder(), m.end()
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos < len(text) and text[pos] == "]":
            return
        item, end = dec.raw_decode(text, pos)  # JSONDecodeError where the file was cut
        yield pos, item
        pos = end


def _json_result(log: Log, n: int, item: dict, src: dict, np_: int, reps: int) -> None:
    if not isinstance(item, dict) or not isinstance(item.get("size"), int):
        raise LogError(n, f"a result without an integer \"size\": {json.dumps(item)[:80]}")
    blocks = []
    for key in ("out_of_place", "in_place"):
        b = item.get(key)
        if b is None:
            blocks.append(None)
            continue
        t = b.get("time", b.get("cpu_time"))
        if not isinstance(t, int | float):
            raise LogError(n, f"result of size {item['size']}: {key} has no time")
        blocks.append({"time": float(t), "algbw": b.get("alg_bw"), "busbw": b.get("bus_bw"),
                       "wrong": b.get("nwrong"),
                       "per_iteration": {k: v for k, v in (item.get(f"{key}_per_iter") or {}).items()
                                         if k.endswith("_us") and isinstance(v, int | float)}})
    root = str(item.get("root", "-1")).strip()
    head = {"name": src["tool"] or log.path.rsplit("/", 1)[-1].split(".")[0], "bytes": item["size"],
            "count": item.get("count", 0), "type": item.get("type", ""), "redop": item.get("redop", ""),
            "root": int(root) if root.lstrip("-").isdigit() else -1,
            "repetitions": int(item.get("actual_iterations") or reps), "np": np_}
    add_pair(log, n, head, blocks)


def _describe(log: Log, ranks: list) -> None:
    src = log.source
    hosts = sorted({r.get("hostname") or r.get("host") for r in ranks if isinstance(r, dict)} - {None})
    log.family = {"name": "nccl", "title": "nccl-tests", "part": src.get("tool") or "", "profile": "imported"}
    log.config = {"family": "nccl", "benchmarks": list(dict.fromkeys(r.benchmark for r in log.records)),
                  "mb_unit": 10**6, "multi": None, "argv": src.get("args", [])[1:]}
    log.world_size = max((r.world_size for r in log.records), default=0) or (len(ranks) or None)
    log.meta = {k: v for k, v in (("hosts", hosts), ("date", src.get("start_time"))) if v}
