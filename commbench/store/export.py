"""`commbench store export`: stored runs as CSV (their rows), as the results file each was
added as, or in Bencher's metric format (BMF: https://bencher.dev/docs/reference/bencher-metric-format/).

BMF: one entry per measured row, named `<family>/<row label>`, with the measure "latency" in
nanoseconds (Bencher's built-in latency measure is in ns): value the row's value (the median of
its --samples, else its reported time), lower_value and upper_value its samples' smallest and
largest when it has samples; rows with a bandwidth also get the measure "bandwidth" in MB/s.
"""

from __future__ import annotations

import csv
import json
import sys

from commbench import outputs, records
from commbench.store import index, runs, selector
from commbench.store.db import Store
from commbench.views import results_file

CSV_COLUMNS = (
    "run_id", "started", "system", "mpi", "tags", "family", "benchmark", "np", "bytes",
    "label", "value_us", "samples", "status",
)  # fmt: skip


def run(sel: selector.Selector, opts: dict) -> int:
    outs = [k for k in ("csv", "o", "bmf") if opts.get(k)]
    if len(outs) != 1:
        raise ValueError(
            "store export writes one of --csv OUT, -o OUT.json, --bmf OUT.json (accepted: "
            "commbench store export SELECTOR --csv OUT)"
        )
    with Store.open(opts.get("store")) as store:
        found = runs.find(store, sel)
        if not found:
            raise ValueError(f"store {store.loc.shown()}: no run matches {sel.text or 'it'}")
        if outs[0] != "csv" and len(found) != 1:
            flag, what = "-o" if outs[0] == "o" else "--bmf", sel.text or "the selector"
            raise ValueError(
                f"{flag} writes one run and {what} matches {len(found)} (accepted: id=N, or "
                "last=1 with other keys)"
            )
        if outs[0] == "csv":
            values = runs.row_values(store, [r["id"] for r in found])
            return _write(opts["csv"], lambda f: _csv(f, found, values), f"{len(values)} rows")
        doc = runs.document(store, found[0]["id"])
    if outs[0] == "o":  # the file as added, and what the store knew of it: its tags travel
        doc["stored"] = {k: found[0][k] for k in ("id", "system", "tags")}
        payload, what = doc, f"run {found[0]['id']}"
    else:
        payload = bmf(doc)
        what = f"{len(payload)} BMF entries"
    text = json.dumps(payload, indent=1, allow_nan=False) + "\n"
    return _write(opts[outs[0]], lambda f: f.write(text), what)


def _write(path: str, fill, what: str) -> int:
    if path == "-":
        fill(sys.stdout)
        return 0
    try:
        outputs.ensure_parent(path)
        with open(path, "w", encoding="utf-8", newline="") as f:
            fill(f)
    except OSError as e:
        raise ValueError(f"{path!r}: cannot write ({e.strerror})") from None
    print(f"commbench: {what} written to {path}", file=sys.stderr)
    return 0


def _csv(f, found: list[dict], values: list[dict]) -> None:
    by_id = {r["id"]: r for r in found}
    w = csv.writer(f)
    w.writerow(CSV_COLUMNS)
    for v in sorted(values, key=lambda v: (by_id[v["run_id"]]["started"], v["run_id"])):
        r = by_id[v["run_id"]]
        w.writerow(
            [
                r["id"], r["started"], r["system"], r["mpi"], ",".join(r["tags"]), v["family"],
                v["benchmark"], v["np"], "" if v["bytes"] is None else v["bytes"], v["label"],
                "" if v["value"] is None else f"{v['value']:.6g}", v["k"], v["status"],
            ]
        )  # fmt: skip


def bmf(doc: dict) -> dict:
    """The run in Bencher's metric format (module docstring)."""
    out: dict = {}
    for r in results_file.measurements(doc):
        v, _ = index.value(r)
        if v is None:
            continue
        entry = {"latency": {"value": v * 1e3}}
        samples = records.samples_of(r).get("t_max_samples")
        if isinstance(samples, list) and samples:
            entry["latency"]["lower_value"] = min(samples) * 1e3
            entry["latency"]["upper_value"] = max(samples) * 1e3
        rate = r.values.get("bytes_per_sec")
        if isinstance(rate, int | float) and rate > 0:
            entry["bandwidth"] = {"value": rate / 1e6}
        out[f"{r.family}/{index.label(r)}"] = entry
    return out
