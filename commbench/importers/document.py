"""The results file of an import: the logs' records with what the logs say about their runs.

The document has the shape of a run's (views/results_file.py, the schema in
commbench/schema): format, format_version, units, complete, metadata,
config, family, notes, summary, records. metadata.source says where the
numbers come from: tool, suite, version and format of the log(s), and under
"logs" each log's file, sha256, line count and header (docs/import.md).
family.view = "imported" makes `commbench report` print them with the
imported view. A log that could not be read to its end makes the file
complete: false, with the reason in summary.interrupted.

`Output` writes it without holding the records: each goes, as it is read,
into an anonymous temporary file beside OUT (gone whatever happens to the
process); at the end the document is written to OUT.tmp, its records copied
from there one line each (as a run's file holds them while it runs), and
renamed to OUT. Any failure (an OSError, SIGTERM, Ctrl-C) removes OUT.tmp and
leaves OUT as it was.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import tempfile
import time

import commbench
from commbench.importers.common import Log
from commbench.records import Measurement
from commbench.views.results_file import FORMAT, FORMAT_VERSION, UNITS

IMPORT_UNITS = {**UNITS, "values.bus_bytes_per_sec": "B/s"}


def _joined(values: list) -> str | None:
    vals = [v for v in dict.fromkeys(values) if v]
    return ", ".join(str(v) for v in vals) if vals else None


def metadata(logs: list[Log], argv: list[str]) -> dict:
    first = logs[0]
    source = {k: _joined([lg.source.get(k) for lg in logs]) for k in ("tool", "suite", "version")}
    source.update(format=_joined([lg.fmt for lg in logs]), logs=[lg.source for lg in logs])
    sizes = [lg.world_size for lg in logs if lg.world_size]
    meta = {
        "commbench_version": commbench.__version__,
        "source": source,
        "world_size": max(sizes) if sizes else None,
    }
    for lg in logs:  # the first log that says it
        for k, v in lg.meta.items():
            meta.setdefault(k, v)
    meta["imported"] = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command_line": ["commbench", "import", *argv],
        "from": first.path,
    }
    return meta


def build(logs: list[Log], argv: list[str], errors: list[str] | None = None) -> dict:
    """The results document of these logs (at least one read, possibly in part) without
    its records (Output.write adds them); errors: why the import is incomplete (a log cut
    or malformed, another unreadable)."""
    first = logs[0]
    errors = errors if errors is not None else [lg.error for lg in logs if lg.error]
    benchmarks = list(dict.fromkeys(b for lg in logs for b in lg.config.get("benchmarks", [])))
    config = dict(first.config, benchmarks=benchmarks)
    family = dict(first.family, view="imported")
    notes = [
        f"# imported by commbench {commbench.__version__} from {lg.path} "
        f"({lg.source.get('tool') or lg.fmt} {lg.source.get('version') or ''}".rstrip()
        + ")"
        for lg in logs
    ]
    summary = {"records": sum(lg.count for lg in logs), "logs": len(logs)}
    warnings = sum(
        len(lg.source.get("warnings", [])) + lg.source.get("warnings_not_listed", 0) for lg in logs
    )
    if warnings:
        summary["warnings"] = warnings  # each named in metadata.source.logs[i].warnings
    if errors:
        summary["interrupted"] = "; ".join(errors)
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "units": IMPORT_UNITS,
        "complete": not errors,
        "metadata": metadata(logs, argv),
        "config": config,
        "family": family,
        "notes": notes,
        "comments": {},
        "preamble_extra": [],
        "summary": summary,
    }


@contextlib.contextmanager
def _terminate_as_exit():
    """SIGTERM or SIGHUP while OUT.tmp is written: SystemExit, so that it is removed (only
    SIGKILL can leave it)."""

    def stop(signum, _frame):
        raise SystemExit(128 + signum)

    try:
        saved = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    except ValueError:  # not the main thread: the signals stay as they are
        saved = {}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


class Output:
    """The results file being written (path None: -o - or /dev/null, records only counted).
    OSError when it cannot be written, ValueError for a number JSON cannot hold."""

    def __init__(self, path: str | None):
        self.path = path
        self.count = 0
        self.spool = None
        if path is not None:
            self.spool = tempfile.TemporaryFile(
                "w+", encoding="utf-8", dir=os.path.dirname(os.path.abspath(path))
            )

    def record(self, rec: Measurement) -> None:
        self.count += 1
        if self.spool is not None:
            self.spool.write(json.dumps(rec.to_dict(), allow_nan=False) + "\n")

    def write(self, doc: dict) -> None:
        """The document (build's) with the records, atomically: OUT.tmp, then renamed."""
        if self.spool is None:
            return
        head = json.dumps(doc, indent=1, allow_nan=False)[:-2]  # without the closing "\n}"
        tmp = f"{self.path}.tmp"
        try:
            with _terminate_as_exit():
                with open(tmp, "w", encoding="utf-8") as f:
                    f.write(head + ',\n "records": [')
                    self.spool.seek(0)
                    sep = "\n  "
                    for line in self.spool:
                        f.write(sep + line.rstrip("\n"))
                        sep = ",\n  "
                    f.write("\n ]\n}\n")
                os.replace(tmp, self.path)
        except BaseException:  # a full disk, a signal: no OUT.tmp left behind
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        finally:
            self.close()

    def close(self) -> None:
        if self.spool is not None:
            self.spool.close()
            self.spool = None
