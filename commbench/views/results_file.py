"""The results file: one JSON document, valid after every record.

Records are appended as they are measured: the file is rewritten in place
from the start of the record list, so an interrupted run keeps every record
measured before it and still parses. `finish` rewrites it whole (atomically)
with the summary and "complete": true.
"""

from __future__ import annotations

import json
import os
from typing import Any

from commbench import records

FORMAT = "commbench-results"
FORMAT_VERSION = 1


class JsonResults:
    def __init__(self, path: str):
        self.path = path
        self.doc: dict[str, Any] = {}
        self.records: list[dict] = []
        self._f = None
        self._records_at = 0
        self.sections: dict[str, Any] = {}  # other views' parts of the document, e.g. "fits"

    def add_section(self, key: str, value: Any) -> None:
        """Another view's part of the document (e.g. "fits"), written by finish."""
        self.sections[key] = value

    def start(self, header: dict) -> None:
        d = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(d, exist_ok=True)
        self.doc = {"format": FORMAT, "format_version": FORMAT_VERSION, "complete": False, **header}
        head = json.dumps(self.doc, indent=1)[:-2]  # drop the closing "\n}"
        self._f = open(self.path, "w", encoding="utf-8")
        self._f.write(head + ',\n "records": [')
        self._records_at = self._f.tell()
        self._f.write("\n ]\n}\n")
        self._f.flush()

    def record(self, rec: records.Measurement) -> None:
        d = rec.to_dict()
        self.records.append(d)
        f = self._f
        f.seek(self._records_at)
        f.write(("," if len(self.records) > 1 else "") + "\n  " + json.dumps(d, allow_nan=False))
        self._records_at = f.tell()
        f.write("\n ]\n}\n")
        f.truncate()
        f.flush()

    def finish(self, summary: dict) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None
        doc = dict(self.doc, **self.sections, complete=not summary.get("interrupted"), summary=summary,
                   records=self.records)
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, allow_nan=False)
            f.write("\n")
        os.replace(tmp, self.path)


def load(path: str) -> dict:
    """Read a results file; raises ValueError with a clear message if it is not one."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise ValueError(f"{path}: cannot read ({e.strerror})") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a JSON results file ({e.msg} at line {e.lineno})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"{path}: not a commbench results file (no \"format\": \"{FORMAT}\")")
    return doc


def measurements(doc: dict) -> list[records.Measurement]:
    return [records.Measurement.from_dict(r) for r in doc.get("records", [])]
