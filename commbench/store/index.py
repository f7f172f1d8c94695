"""What a stored run is found and compared by (no MPI, no database): its system, dates,
library, the settings that change the numbers (its fingerprint), and one value per row.

A row's value is what `commbench compare` compares: the median of its --samples when it has
usable ones, else its reported time (µs, commbench.records.compared_time).
"""

from __future__ import annotations

import hashlib
import json
import statistics
import zlib
from datetime import UTC, datetime

from commbench import records
from commbench.store import selector
from commbench.views import compare_runs


def digest(doc: dict) -> str:
    """The document's digest: the same document added twice is one run."""
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def content(doc: dict) -> str | None:
    """The run's identity by what it measured: the digest of its records alone, so the same
    log imported twice (another date, another command line) or a run exported and added
    again is one run, and never its own baseline; None for a document without records."""
    recs = doc.get("records")
    if not isinstance(recs, list) or not recs:
        return None
    text = json.dumps(recs, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def pack(doc: dict) -> bytes:
    return zlib.compress(json.dumps(doc, separators=(",", ":")).encode(), 6)


def unpack(blob: bytes) -> dict:
    return json.loads(zlib.decompress(blob).decode())


def system(doc: dict, given: str | None = None) -> str:
    """The name runs are grouped by: the user's (given now, or `run --system` recorded in the
    file), else the sorted host list."""
    recorded = (
        (doc.get("config") or {}).get("system")
        if "source" not in (doc.get("metadata") or {})
        else None
    )
    return (
        given
        or (recorded if isinstance(recorded, str) and recorded else None)
        or (",".join(records.run_hosts(doc)) or "unknown")
    )


def started(doc: dict) -> str:
    """When the run was made (ISO UTC): its date, an import's log date or import date."""
    meta = doc.get("metadata") or {}
    for text in (meta.get("date"), (meta.get("imported") or {}).get("date")):
        if isinstance(text, str):
            try:
                return selector.iso(_parsed(text))
            except ValueError:
                continue
    return selector.iso(datetime.now(UTC))


def _parsed(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def library(doc: dict) -> str:
    meta = doc.get("metadata") or {}
    lib = meta.get("mpi_library")
    if isinstance(lib, dict) and lib.get("name"):
        return str(lib["name"])
    text = meta.get("mpi_library_version")
    if isinstance(text, str) and text.strip():
        return " ".join(text.strip().splitlines()[0].split())[:120]
    source = meta.get("source") or {}
    return f"not recorded ({source.get('tool') or 'unknown'} log)" if source else "not recorded"


def fingerprint(doc: dict) -> dict:
    """The settings that change the numbers (commbench.views.compare_runs.DIFFERENCES, the
    incomparable ones) that the document records, JSON-normal."""
    out = {}
    for label, get, hard in compare_runs.DIFFERENCES:
        v = get(doc)
        if hard and v is not compare_runs.ABSENT:
            out[label] = json.loads(json.dumps(v, default=str))
    return out


def differences(base: dict, new: dict, width: int = 80) -> list[str]:
    """Why a stored run with fingerprint base is not comparable with new (empty: it is); a
    setting one of them does not record is not held against it (as compare does); each value
    cut to width characters."""
    base = {k: _known_knobs(k, v) for k, v in base.items()}  # stored before a knob existed
    return [
        f"{label} differs: stored {_short(base[label], width)}, new {_short(new[label], width)}"
        for label in new
        if label in base and base[label] != new[label]
    ]


def _known_knobs(label: str, value: object) -> object:
    """A stored run's methodology with the knobs added since it was stored, at the value
    it ran with (compare_runs._methodology's rule); any other setting as stored."""
    if not label.startswith("methodology") or not isinstance(value, dict):
        return value
    return compare_runs.methodology_knobs(value)


def _short(v: object, width: int) -> str:
    s = str(v)
    return s if len(s) <= width else s[: width - 3] + "..."


def label(r: records.Measurement) -> str:
    parts = [r.benchmark if len(r.groups) <= 1 else f"Multi-{r.benchmark}", f"np={r.np}"]
    parts += [f"mode={r.mode}"] if r.mode else []
    parts += [] if r.bytes is None else [f"bytes={r.bytes}"]
    parts += [f"{k}={r.extra[k]}" for k in records.ROW_EXTRAS if k in r.extra and k != "engine"]
    return " ".join(parts)


def key(r: records.Measurement) -> str:
    return json.dumps(list(records.identity(r)), separators=(",", ":"))


def value(r: records.Measurement) -> tuple[float | None, int]:
    """(µs, samples behind it): the median of usable --samples, else the compared time."""
    if not r.ok:
        return None, 0
    from commbench.views import compare  # numpy and scipy: only where rows are read

    samples, _ = compare.sample_values(r)
    if samples is not None:
        return float(statistics.median(samples)), len(samples)
    return records.compared_time(r), 0


def rows(recs: list[records.Measurement]) -> list[dict]:
    out = []
    for r in recs:
        v, k = value(r)
        out.append(
            {
                "key": key(r),
                "family": r.family,
                "benchmark": r.benchmark,
                "np": int(r.np),
                "bytes": r.bytes,
                "label": label(r),
                "value": v,
                "k": k,
                "status": r.status,
            }
        )
    return out


def entry(doc: dict, recs: list[records.Measurement], origin: str, sys_name: str | None) -> dict:
    """The run's columns (commbench.store.tables.runs) but its id and the date it is added."""
    meta = doc.get("metadata") or {}
    families = sorted({r.family for r in recs if r.family}) or [
        str((doc.get("family") or {}).get("name") or "unknown")
    ]
    source = meta.get("source")
    if isinstance(source, dict):
        origin = f"{origin} (imported {source.get('tool') or source.get('format') or ''} log)"
    return {
        "digest": digest(doc),
        "content": content(doc),
        "system": system(doc, sys_name),
        "hosts": json.dumps(records.run_hosts(doc)),
        "started": started(doc),
        "family": ",".join(families),
        "world_size": meta.get("world_size") if isinstance(meta.get("world_size"), int) else None,
        "mpi": library(doc),
        "commbench_version": str(meta.get("commbench_version") or "unknown"),
        "complete": doc.get("complete") is True,
        "origin": origin,
        "fingerprint": json.dumps(fingerprint(doc), sort_keys=True),
        "n_rows": len(recs),
        "document": pack(doc),
    }
