"""The results file: one JSON document, valid after every record.

Records are appended as they are measured: the file is rewritten in place
from the start of the record list, so an interrupted run keeps every record
measured before it and still parses. Until `finish` the summary says why it
may be incomplete (provisional), so even a file whose writer was killed with
SIGKILL tells its reader so. `finish` rewrites it whole (atomically) with the
summary and "complete": true (false with an "interrupted" reason when the run
ended early). `mark_interrupted` lets the launcher, which outlives the job,
record why a job died; `salvage` recovers the records of a file cut mid-write.
The document's shape is published as a JSON Schema (commbench/schema,
docs/schema.md); `load` refuses a format_version newer than FORMAT_VERSION.
"""

from __future__ import annotations

import errno
import json
import math
import os
from typing import Any

from commbench import records
from commbench.option_types import RunError

FORMAT = "commbench-results"
FORMAT_VERSION = 1
RECORDS_MARK = ',\n "records": ['
TAIL = b"\n ]\n}\n"
# The units of a record's numbers, stated in every file (rank_times are raw
# seconds per repetition as measured; values are the row as IMB prints it).
UNITS = {
    "rank_times": "s",
    "rank_summary": "s",
    "values.t*": "us",
    "values.bytes_per_sec": "B/s",
    "bytes": "B",
    "extra.samples.t_max*": "us",
    "defects": "relative deviation",
}
PROVISIONAL = {
    "interrupted": "the run did not finish: still running, or ended (killed, crashed, "
    "interrupted) before rank 0 could write a summary",
    "provisional": True,
}


class JsonResults:
    def __init__(self, path: str):
        self.path = path
        self.doc: dict[str, Any] = {}
        self.records: list[dict] = []
        self._f: int | None = None  # the file descriptor while records are appended
        self._records_at = 0
        self.sections: dict[str, Any] = {}  # other views' parts of the document, e.g. "fits"
        self.saved = True  # False once a write failed (the run must not say it was written)

    def add_section(self, key: str, value: Any) -> None:
        """Another view's part of the document (e.g. "fits"), written by finish."""
        self.sections[key] = value

    def claim(self) -> str | None:
        """Open and lock the file before anything is written; a message if another run
        holds it (two runs on one -o would both say they wrote it, one run's records gone)."""
        import fcntl

        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return (
                f"-o {self.path!r}: another commbench run is writing it now; refusing to "
                "overwrite its records (accepted: another -o, or wait until that run ends)"
            )
        self._f = fd
        return None

    def start(self, header: dict) -> None:
        if self._f is None and self.claim() is not None:
            raise RunError(f"results file {self.path}: another commbench run is writing it")
        self.doc = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "units": UNITS,
            "complete": False,
            **header,
        }
        head = json.dumps(dict(self.doc, summary=PROVISIONAL), indent=1)[
            :-2
        ]  # drop the closing "\n}"
        # Plain file-descriptor writes at known offsets: no buffer that a failed write
        # (a full disk) could leave half-flushed, so the last good document can be restored.
        os.ftruncate(self._f, 0)
        self._records_at = self._put((head + RECORDS_MARK).encode(), 0)
        self._put(TAIL, self._records_at)

    def _put(self, data: bytes, at: int) -> int:
        """Write data at offset at (every byte, or OSError); the offset after it."""
        view = memoryview(data)
        while view:
            n = os.pwrite(self._f, view, at)
            if n == 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            view, at = view[n:], at + n
        return at

    def record(self, rec: records.Measurement) -> None:
        if self._f is None:  # a write failed before: the file keeps what it had
            return
        d = rec.to_dict()
        text = ("," if self.records else "") + "\n  " + json.dumps(d, allow_nan=False)
        try:
            at = self._put(text.encode(), self._records_at)
            os.ftruncate(self._f, self._put(TAIL, at))
        except OSError as e:  # a full disk, a quota: back to the last good document
            self._restore()
            raise RunError(
                f"results file {self.path}: {e.strerror} after {len(self.records)} records; "
                "it keeps those, valid, with complete: false"
            ) from None
        self.records.append(d)
        self._records_at = at

    def _restore(self) -> None:
        """Cut the partial record off and close the list again (space it had before)."""
        fd, self._f = self._f, None
        try:
            os.ftruncate(fd, self._records_at)
            os.pwrite(fd, TAIL, self._records_at)
        except OSError:
            pass
        finally:
            os.close(fd)
        self.saved = False

    def finish(self, summary: dict) -> None:
        """The whole document with the summary, atomically; if that cannot be written
        (a full disk) the file stays as it was, valid, and OSError says why."""
        if not self.doc:  # never started: nothing to finish
            return
        if self._f is not None:
            os.close(self._f)
            self._f = None
        doc = dict(
            self.doc,
            **self.sections,
            complete=not summary.get("interrupted"),
            summary=summary,
            records=self.records,
        )
        tmp = self.path + ".tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=1, allow_nan=False)
                f.write("\n")
            os.replace(tmp, self.path)
        except OSError as e:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            self.saved = False
            raise OSError(
                e.errno,
                f"{e.strerror}: the summary was not written; {self.path} keeps "
                f"{len(self.records)} records with complete: false",
            ) from None


class _NotANumber(str):
    """What json reads for NaN, Infinity and -Infinity: found again by _where_not_a_number."""


def _finite(text: str, seen: list[str]) -> float | _NotANumber:
    """A JSON number; one beyond the range of a float (1e400 reads as inf) is not a number a
    results file may hold, found again as NaN is."""
    v = float(text)
    if math.isfinite(v):
        return v
    seen.append(text)
    return _NotANumber(text)


def _where_not_a_number(doc: object, path: tuple = ()) -> tuple | None:
    if isinstance(doc, _NotANumber):
        return path
    items = (
        doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    )
    for k, v in items:
        found = _where_not_a_number(v, (*path, k))
        if found is not None:
            return found
    return None


def load(path: str) -> dict:
    """Read a results file; raises ValueError with a clear message if it is not one: not
    UTF-8, not JSON, NaN or Infinity where JSON has numbers, another format, a newer version."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ValueError(f"{path}: cannot read ({e.strerror})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(
            f"{path}: not a results file: byte 0x{data[e.start]:02x} at offset {e.start} is not "
            "UTF-8 text (a results file is JSON in UTF-8)"
        ) from None
    seen: list[str] = []
    try:
        doc = json.loads(
            text,
            parse_constant=lambda name: seen.append(name) or _NotANumber(name),
            parse_float=lambda s: _finite(s, seen),
        )
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a JSON results file ({e.msg} at line {e.lineno})") from None
    where = _where_not_a_number(doc) if seen else None  # walked only when there is one
    if where is not None:
        raise ValueError(
            f"{path}: {_place(doc, list(where))}: {_get(doc, where)} is not a number a results "
            "file may hold (not a finite number; commbench never writes one) (not a valid "
            "commbench results file: was it edited?)"
        )
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f'{path}: not a commbench results file (no "format": "{FORMAT}")')
    version = doc.get("format_version", FORMAT_VERSION)
    if isinstance(version, int) and version > FORMAT_VERSION:  # the reader rule (docs/schema.md)
        raise ValueError(
            f"{path}: results format version {version} is newer than this commbench reads "
            f"(format_version {FORMAT_VERSION} and older); a newer commbench reads it"
        )
    return doc


def read(path: str) -> tuple[dict, list[records.Measurement]]:
    """What every reader (compare, report, report --html, fit, plot) reads: the document,
    checked against the published schema, and its records, no two of which are one row.
    ValueError naming the file, the record and the field that is wrong. A file read again
    unchanged (plot asks what kind of run it is, then for its series) is not parsed again."""
    try:
        st = os.stat(path)
        stamp = (os.path.realpath(path), st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = None
    if stamp is not None and stamp in _READ:
        return _READ[stamp]
    doc = load(path)
    problem = schema_problem(doc)
    if problem:
        raise ValueError(
            f"{path}: {problem} (not a valid commbench results file: was it edited? "
            "`commbench schema` prints the format)"
        )
    recs = measurements(doc, path)
    twice = records.repeated_rows(recs)
    if twice:
        first = twice[0]
        raise ValueError(
            f"{path}: {len(twice)} rows repeat another row of the file ({first}): which one holds "
            "the measurement is ambiguous, as when two logs of one run are imported into one "
            "file (accepted: files with one row per benchmark, size, process count and engine; "
            "import each run into a file of its own)"
        )
    if stamp is not None:
        _READ.clear()  # one file at a time: a reader of many files holds each itself
        _READ[stamp] = (doc, recs)
    return doc, recs


_READ: dict[tuple, tuple[dict, list[records.Measurement]]] = {}


def schema_problem(doc: dict) -> str | None:
    """Where and how doc breaks the published schema (commbench/schema), None when it does not."""
    from commbench import schema

    error = schema.first_error(doc)
    if error is None:
        return None
    where, message = error
    return f"{_place(doc, where)}: {message}"


def _place(doc: dict, where: list) -> str:
    """'record 3 (PingPong np=2 bytes=4), field values.t_max' or 'field metadata'."""
    if len(where) >= 2 and where[0] == "records" and isinstance(where[1], int):
        field = ".".join(str(p) for p in where[2:])
        return (
            f"record {where[1]} "
            f"({_label(doc['records'][where[1]])}){f', field {field}' if field else ''}"
        )
    return f"field {'.'.join(str(p) for p in where) or '(the document)'}"


def _get(doc: object, where: tuple) -> object:
    for k in where:
        doc = doc[k]
    return doc


def _label(rec: object) -> str:
    if not isinstance(rec, dict):
        return "not an object"
    parts = [str(rec.get(k)) for k in ("benchmark",) if isinstance(rec.get(k), str)]
    parts += [
        f"{k}={rec[k]}" for k in ("np", "bytes") if isinstance(rec.get(k), int | None) and k in rec
    ]
    return " ".join(parts) or "no benchmark"


def measurements(doc: dict, path: str = "") -> list[records.Measurement]:
    """The records of a results document; ValueError naming the record and field that is wrong."""
    out = []
    recs = doc.get("records", [])
    if not isinstance(recs, list):
        raise ValueError(f'{path or "results file"}: "records" is not a list')
    for i, r in enumerate(recs):
        try:
            out.append(records.Measurement.from_dict(r))
        except (ValueError, TypeError) as e:
            raise ValueError(
                f"{path or 'results file'}: record {i}: {e} (not a commbench record; "
                "was the file edited?)"
            ) from None
    return out


def salvage(path: str) -> dict:
    """The header and every whole record of a results file cut off mid-write."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    at = text.find(RECORDS_MARK)
    if at < 0:
        raise ValueError(f"{path}: no results header to recover")
    doc = json.loads(text[:at] + "\n}")
    recs = []
    for line in text[at + len(RECORDS_MARK) :].splitlines():
        line = line.strip().rstrip(",")
        if line.startswith("{"):
            try:
                recs.append(json.loads(line))
            except json.JSONDecodeError:
                break  # the record being written when the writer died
    doc["records"] = recs
    return doc


def mark_interrupted(path: str, reason: str) -> bool:
    """Record why a run ended early unless the file already says (or is complete).

    Returns True when the file was rewritten. The file stays valid JSON with
    every record it held.
    """
    try:
        doc = load(path)
    except ValueError:
        try:
            doc = salvage(path)
        except (OSError, ValueError):
            return False
        doc.setdefault("summary", dict(PROVISIONAL))
    if doc.get("complete") is True:
        return False
    summary = doc.get("summary") or {}
    if summary.get("interrupted") and not summary.get("provisional"):
        return False
    doc["complete"] = False
    doc["summary"] = {k: v for k, v in summary.items() if k not in ("interrupted", "provisional")}
    doc["summary"]["interrupted"] = reason
    doc["records"] = doc.pop("records", [])  # keep records last
    tmp = path + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, allow_nan=False)
            f.write("\n")
        os.replace(tmp, path)
    except OSError:  # a full disk: the file stays as the job left it
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    return True
