"""`commbench import`: other tools' output as commbench results files (docs/import.md).

IMB's text (imb), OSU Micro-Benchmarks' text (osu), nccl-tests' text and -J
JSON (nccl). Each log becomes records (records.Measurement, the same as a
run's) and a description of its source, kept in the results file's metadata
(metadata.source). Nothing here measures or needs MPI; only the cli imports
this package (its layer in pyproject.toml).
"""

from __future__ import annotations

import hashlib
import re

from commbench.importers import imb, nccl, osu
from commbench.importers.common import Log, LogError

FORMATS = ("imb", "osu", "nccl")


def detect(text: str) -> str | None:
    """The format of a log by its content, None when it is none of them."""
    head = text.lstrip()[:1]
    if head in ("{", "["):
        return "nccl" if '"results"' in text and ('"nccl_version"' in text or '"ngpus"' in text) else None
    if re.search(r"^#\s+Intel\s*\(R\)\s+MPI\s+Benchmarks", text, re.M) or re.search(r"^#\s+Benchmarking\s", text, re.M):
        return "imb"
    if re.search(r"^#\s*OSU\s+.+\s+Test\s+v\S+", text, re.M):
        return "osu"
    if re.search(r"^#\s*(nccl-tests version|nThread\s+\d+\s+nGpus|Collective test starting)", text, re.M):
        return "nccl"
    return None


def read(path: str, index: int, fmt: str = "auto", np_hint: int | None = None) -> Log:
    """One log as records. The Log says in .error why reading stopped early ("PATH:LINE:
    …"); its records are those read before. OSError propagates
    (the file cannot be read at all)."""
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8", errors="replace")  # the numbers are ASCII; a stray byte of noise is not fatal
    log = Log(path=path, index=index)
    found = detect(text)
    if fmt == "auto":
        if found is None:
            log.error = (f"{path}:1: neither IMB, OSU nor nccl-tests output (no IMB banner, OSU title or "
                         "nccl-tests header; accepted: --format imb|osu|nccl to read it as one of them)")
            return log
        fmt = found
    log.fmt = fmt
    log.source.update(file=path, sha256=hashlib.sha256(data).hexdigest(), lines=text.count("\n"))
    if found is not None and found != fmt:
        log.source["note"] = f"read as {fmt} (--format), although it looks like {found} output"
    lines = text.splitlines()
    try:
        if fmt == "imb":
            imb.read(log, lines)
        elif fmt == "osu":
            osu.read(log, lines, np_hint)
        elif text.lstrip()[:1] == "{":
            nccl.read_json(log, text, np_hint)
        else:
            nccl.read_text(log, lines, np_hint)
    except LogError as e:
        log.error = f"{path}:{e.line}: {e.message}"
    log.source["format"] = fmt
    return log


__all__ = ["FORMATS", "Log", "LogError", "detect", "read"]
