"""nccl-tests' -J JSON (format versions 1 to 3, nccl-tests 2.17 on) as records.

The file is one object: "version", "start_time", "args", "env",
"nccl_version", "config" (with "devices"), "results" (one object per size:
size, count, type, redop, root, out_of_place and in_place with time (or
cpu_time), alg_bw, bus_bw, nwrong, -I's *_per_iter, actual_iterations), then
"out_of_bounds", "average_bus_bandwidth", "errors", "end_time". It is read as
a stream (jsonstream.py): a cut file keeps every whole result before the cut.

What nccl-tests writes decides what is refused: a "version" outside 1-3
(Unsupported: nothing of the file is imported), a result without
"out_of_place" or "in_place" (nccl-tests writes both, null for a placement not
measured), a time that is not a number. nccl-tests writes a double it could not
compute as the string "nan" (NaN and Infinity, which it never writes, are read
alike): such a bandwidth or #wrong is left out of its record and named in
metadata.source.logs[i].warnings; a null placement gives no record and a
warning. No NaN reaches the results file.
"""

from __future__ import annotations

import json
import math

from commbench.importers.common import Log, LogError, Unsupported
from commbench.importers.jsonstream import JsonStream, ValueTooLarge
from commbench.importers.nccl import add_pair, describe

VERSIONS = (1, 2, 3)
FOOTER_KEYS = ("out_of_bounds", "average_bus_bandwidth", "errors", "end_time")
_NAN = object()  # a double nccl-tests could not compute


def _num(v):
    """A number of the file: the value, _NAN for "nan" (or NaN, Infinity),
    None for anything else."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return v if math.isfinite(v) else _NAN
    if isinstance(v, str) and v.strip().lower().lstrip("-+") in ("nan", "inf"):
        return _NAN
    return None


def read_json(log: Log, f, np_hint: int | None, digest) -> None:
    """-J output from the binary file f (digest: updated with every byte read)."""
    src = log.source
    src.update(format="nccl", suite="nccl-tests", tool=None, settings={}, ranks=[])
    js, top = JsonStream(f, digest), {}
    try:
        for key, line in js.members():
            if key != "results":
                top[key] = js.value()
                if key == "version":
                    _check_version(top, line)
                continue
            _check_version(top, line)
            np_, reps = _header(log, top, np_hint)
            for item, n in js.items():
                _result(log, n, item, np_, reps)
            top["results"] = True
        js.end()
        if "results" not in top:
            raise js.error('no "results" list')
        src["footer"] = {k: top[k] for k in FOOTER_KEYS if k in top}
    except json.JSONDecodeError as e:
        raise LogError(
            e.lineno,
            f"not valid JSON ({e.msg}, column {e.colno}); the {log.count} records of the "
            "whole results before it are kept",
        ) from None
    except ValueTooLarge as e:
        raise LogError(
            js.where()[0],
            f"{e} in the JSON: not nccl-tests' -J output (accepted: its results, "
            "each a few kB, or MBs with -I)",
        ) from None
    finally:
        if "args" not in src:
            _header(log, top, np_hint)
        describe(log, src["ranks"])


def _check_version(top: dict, line: int) -> None:
    v = top.get("version")
    if isinstance(v, bool) or v not in VERSIONS:
        said = (
            'no "version" before the results'
            if "version" not in top
            else f'"version": {json.dumps(v)}'
        )
        raise Unsupported(
            line,
            f"{said}: not a nccl-tests -J format this importer reads, so nothing of it is "
            "imported (accepted: format versions 1 to 3, as nccl-tests 2.17 to 2.19 write)",
        )


def _header(log: Log, top: dict, np_hint: int | None) -> tuple[int, int]:
    """What the members before "results" say: the source, the processes, the repetitions."""
    src = log.source
    cfg = top.get("config") if isinstance(top.get("config"), dict) else {}
    args = top.get("args") if isinstance(top.get("args"), list) else []
    tool = args[0].rsplit("/", 1)[-1] if args and isinstance(args[0], str) else None
    src.update(
        tool=tool,
        json_version=top.get("version"),
        nccl_version=top.get("nccl_version"),
        start_time=top.get("start_time"),
        args=args,
        settings={k: v for k, v in cfg.items() if k != "devices"},
        ranks=cfg.get("devices") if isinstance(cfg.get("devices"), list) else [],
    )
    iters, agg = _num(cfg.get("iterations", 0)), _num(cfg.get("aggregated_iterations", 1))
    reps = (
        int(iters) * max(1, int(agg))
        if iters not in (None, _NAN) and agg not in (None, _NAN)
        else 0
    )
    return np_hint or len(src["ranks"]), reps


def _placement(log: Log, n: int, size: int, key: str, b) -> dict | None:
    """One placement's numbers: None when nccl-tests wrote null (not measured)."""
    if b is None:
        log.warn(n, f"result of size {size}: {key} is null (not measured), no record for it")
        return None
    if not isinstance(b, dict):
        raise LogError(
            n,
            f"result of size {size}: {key} is {json.dumps(b)[:40]}, not an object (accepted: "
            'nccl-tests\' {"time": …, "alg_bw": …, "bus_bw": …, "nwrong": …} or null)',
        )
    tkey = "time" if "time" in b else "cpu_time" if "cpu_time" in b else None
    if tkey is None:
        raise LogError(
            n,
            f'result of size {size}: {key} has no "time" (nccl-tests writes it, or cpu_time with '
            "-C): malformed or edited, not imported (accepted: a time in us)",
        )
    t = _num(b[tkey])
    if t is None or t is _NAN:
        raise LogError(
            n,
            f"result of size {size}: {key} {tkey} is {json.dumps(b.get(tkey))}: no time nccl-tests "
            "measured, the result is not imported (accepted: a time in us)",
        )
    out = {"time": float(t)}
    for field, name in (("alg_bw", "algbw"), ("bus_bw", "busbw"), ("nwrong", "wrong")):
        if field not in b:
            raise LogError(
                n,
                f'result of size {size}: {key} has no "{field}" (nccl-tests writes time, alg_bw, '
                "bus_bw and nwrong): malformed or edited, not imported (accepted: all four)",
            )
        v = _num(b[field])
        if v is _NAN:
            log.warn(
                n,
                f"result of size {size}: {key} {field} is "
                f"{json.dumps(b[field])}, left out of the record",
            )
        elif v is None and not (field == "nwrong" and b[field] is None):
            raise LogError(
                n,
                f"result of size {size}: {key} {field} is {json.dumps(b[field])[:40]} (accepted: "
                'a number, or "nan" as nccl-tests writes a value it could not compute)',
            )
        out[name] = None if v is _NAN else v
    return out


def _result(log: Log, n: int, item, np_: int, reps: int) -> None:
    size = item.get("size") if isinstance(item, dict) else None
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise LogError(n, f'a result without an integer "size": {json.dumps(item)[:80]}')
    blocks = []
    for key in ("out_of_place", "in_place"):
        if key not in item:
            raise LogError(
                n,
                f'result of size {size} has no "{key}": nccl-tests writes both placements in every '
                "result (null for one not measured), so it is malformed or edited and not imported "
                "(accepted: out_of_place and in_place, each an object or null)",
            )
        b = _placement(log, n, size, key, item[key])
        if b is not None:
            per = (
                item.get(f"{key}_per_iter") if isinstance(item.get(f"{key}_per_iter"), dict) else {}
            )
            b["per_iteration"] = {
                k: v for k, v in per.items() if k.endswith("_us") and _num(v) not in (None, _NAN)
            }
        blocks.append(b)
    root = str(item.get("root", "-1")).strip()
    iters = _num(item.get("actual_iterations"))
    head = {
        "name": log.source["tool"] or log.path.rsplit("/", 1)[-1].split(".")[0],
        "bytes": size,
        "count": item.get("count", 0),
        "type": str(item.get("type", "")),
        "redop": str(item.get("redop", "")),
        "root": int(root) if root.lstrip("-").isdigit() else -1,
        "repetitions": int(iters) if iters not in (None, _NAN) and iters else reps,
        "np": np_,
    }
    add_pair(log, n, head, blocks)
