"""The results file of an import: the logs' records with what the logs say about their runs.

The document has the shape of a run's (views/results_file.py, the schema in
commbench/schema): format, format_version, units, complete, metadata,
config, family, notes, summary, records. metadata.source says where the
numbers come from: tool, suite, version and format of the log(s), and under
"logs" each log's file, sha256, line count and header (docs/import.md).
family.view = "imported" makes `commbench report` print them with the
imported view. A log that could not be read to its end makes the file
complete: false, with the reason in summary.interrupted.
"""

from __future__ import annotations

import json
import os
import time

import commbench
from commbench.importers.common import Log
from commbench.views.results_file import FORMAT, FORMAT_VERSION, UNITS

IMPORT_UNITS = {**UNITS, "values.bus_bytes_per_sec": "B/s"}


def _joined(values: list) -> str | None:
    vals = [v for v in dict.fromkeys(values) if v]
    return ", ".join(str(v) for v in vals) if vals else None


def metadata(logs: list[Log], argv: list[str]) -> dict:
    first = logs[0]
    source = {"tool": _joined([lg.source.get("tool") for lg in logs]),
              "suite": _joined([lg.source.get("suite") for lg in logs]),
              "version": _joined([lg.source.get("version") for lg in logs]),
              "format": _joined([lg.fmt for lg in logs]),
              "logs": [lg.source for lg in logs]}
    sizes = [lg.world_size for lg in logs if lg.world_size]
    meta = {"commbench_version": commbench.__version__, "source": source,
            "world_size": max(sizes) if sizes else None}
    for lg in logs:  # the first log that says it
        for k, v in lg.meta.items():
            meta.setdefault(k, v)
    meta["imported"] = {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command_line": ["commbench", "import", *argv],
                        "from": first.path}
    return meta


def build(logs: list[Log], argv: list[str], errors: list[str] | None = None) -> dict:
    """The results document of these logs (at least one read, possibly in part); errors:
    why the import is incomplete (a log cut or malformed, another unreadable)."""
    first = logs[0]
    errors = errors if errors is not None else [lg.error for lg in logs if lg.error]
    recs = [r.to_dict() for lg in logs for r in lg.records]
    benchmarks = list(dict.fromkeys(b for lg in logs for b in lg.config.get("benchmarks", [])))
    config = dict(first.config, benchmarks=benchmarks)
    family = dict(first.family, view="imported")
    notes = [f"# imported by commbench {commbench.__version__} from {lg.path} "
             f"({lg.source.get('tool') or lg.fmt} {lg.source.get('version') or ''}".rstrip() + ")" for lg in logs]
    summary = {"records": len(recs), "logs": len(logs)}
    if errors:
        summary["interrupted"] = "; ".join(errors)
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "units": IMPORT_UNITS, "complete": not errors,
            "metadata": metadata(logs, argv), "config": config, "family": family, "notes": notes,
            "comments": {}, "preamble_extra": [], "summary": summary, "records": recs}


def write(doc: dict, path: str) -> None:
    """Atomically (a temporary file beside it, then renamed): OSError when it cannot be written."""
    tmp = f"{path}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, allow_nan=False)
            f.write("\n")
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
