"""The binding overhead: what the Python layer adds, as a view of `--engine both` records.

With `--engine both` every size of a benchmark that has a native pattern is
measured twice in the same run, with the same buffers and repetitions: once by
the native engine (C loop) and once by the mpi4py engine (Python loop). The
difference of the two times is the cost the Python layer (interpreter loop and
mpi4py argument handling) adds per repetition; for PingPong, whose t is half a
round trip, that is per message.

Time compared: t (= t_max) for two-process benchmarks, t_avg for the others.
"""

from __future__ import annotations

import sys
from typing import TextIO

from commbench import records
from commbench.records import Kind
from commbench.views import Collector

W = 13
ENGINES = ("native", "mpi4py")


def _time(rec: records.Measurement) -> float | None:
    if not rec.ok or not rec.values:
        return None
    key = "t_max" if rec.kind in (Kind.SINGLE.value, Kind.SINGLE_ONE.value) else "t_avg"
    return rec.values.get(key)


def overhead_rows(recs: list[records.Measurement]) -> list[dict]:
    """One row per (benchmark, NP, mode, size) measured by both engines, in measuring order."""
    pairs: dict[tuple, dict[str, records.Measurement]] = {}
    for r in recs:
        engine = r.extra.get("engine")
        if engine in ENGINES:
            pairs.setdefault((r.benchmark, r.np, r.mode, r.bytes), {})[engine] = r
    rows = []
    for (bench, np_, mode, x), got in pairs.items():
        if len(got) < 2:
            continue
        tn, tp = _time(got["native"]), _time(got["mpi4py"])
        if tn is None or tp is None:
            continue
        rows.append(
            {
                "benchmark": bench,
                "np": np_,
                "mode": mode,
                "bytes": x,
                "repetitions": got["native"].repetitions,
                "t_native_us": tn,
                "t_mpi4py_us": tp,
                "overhead_us": tp - tn,
                "ratio": tp / tn if tn > 0 else None,
            }
        )
    return rows


def table_lines(rows: list[dict]) -> list[str]:
    cols = ["#bytes", "#repetitions", "native[usec]", "mpi4py[usec]", "added[usec]", "ratio"]
    out = [
        "",
        "#" + "-" * (W * len(cols) - 1),
        "# Binding overhead: time per repetition added by the Python layer",
        "# (mpi4py engine minus native engine, same run, buffers and repetitions;",
        "#  t for two-process benchmarks, t_avg for the others)",
        "#" + "-" * (W * len(cols) - 1),
    ]
    current = None
    for r in rows:
        key = (r["benchmark"], r["np"], r["mode"])
        if key != current:
            current = key
            mode = f", {r['mode']}" if r["mode"] else ""
            out += [
                "",
                f"# {r['benchmark']}, #processes = {r['np']}{mode}",
                "".join(f"{c:>{W}}" for c in cols),
            ]
        ratio = f"{r['ratio']:{W}.3f}" if r["ratio"] is not None else f"{'-':>{W}}"
        out.append(
            f"{r['bytes'] or 0:{W}d}{r['repetitions']:{W}d}{r['t_native_us']:{W}.2f}"
            f"{r['t_mpi4py_us']:{W}.2f}{r['overhead_us']:{W}.2f}{ratio}"
        )
    return out


class BindingOverhead(Collector):
    """Sink: collects the records and prints the derived table at the end.

    Placed before the results file among the sinks, it also puts the rows into
    the run summary ("binding_overhead"), so the results file carries them.
    """

    def __init__(self, out: TextIO = sys.stdout):
        super().__init__()
        self.out = out

    def finish(self, summary: dict) -> None:
        rows = overhead_rows(self.records)
        if not rows:
            return
        summary["binding_overhead"] = rows
        self.out.write("".join(line + "\n" for line in table_lines(rows)))
        self.out.flush()
