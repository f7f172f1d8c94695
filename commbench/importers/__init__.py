"""`commbench import`: other tools' output as commbench results files (docs/import.md).

IMB's text (imb), OSU Micro-Benchmarks' text (osu), nccl-tests' text and -J
JSON (nccl). Each log becomes records (records.Measurement, the same as a
run's) and a description of its source, kept in the results file's metadata
(metadata.source). A log is read as a stream, line by line (JSON: value by
value), so memory does not grow with its size. Nothing here measures or needs
MPI; only the cli imports this package (its layer in pyproject.toml).
"""

from __future__ import annotations

import codecs
import hashlib
import re

from commbench.importers import imb, nccl, nccl_json, osu
from commbench.importers.common import Log, LogError, Unsupported

FORMATS = ("imb", "osu", "nccl")
HEAD_BYTES = 1 << 20  # what detection reads of a log
MAX_LINE = 1 << 20  # a text log's longest line: the tools print lines of a few hundred characters


def detect(text: str, whole: bool = True) -> str | None:
    """The format of a log by its content (whole: the text is the whole log, not its
    head), None when it is none of them."""
    head = text.lstrip()[:1]
    if head in ("{", "["):
        nccl_keys = '"nccl_version"' in text or '"ngpus"' in text
        return "nccl" if nccl_keys and ('"results"' in text or not whole) else None
    if re.search(r"^#\s+Intel\s*\(R\)\s+MPI\s+Benchmarks", text, re.M) or re.search(
        r"^#\s+Benchmarking\s", text, re.M
    ):
        return "imb"
    if re.search(r"^#\s*OSU\s+.+\s+Test\s+v\S+", text, re.M):
        return "osu"
    if re.search(
        r"^#\s*(nccl-tests version|nThread\s+\d+\s+nGpus|Collective test starting)", text, re.M
    ):
        return "nccl"
    return None


def sniff(path: str, index: int, fmt: str = "auto") -> Log:
    """A log's format from its first MiB: Log.fmt, or Log.error when it is none of them.
    OSError propagates (the file cannot be read at all)."""
    with open(path, "rb") as f:
        data = f.read(HEAD_BYTES)
    # the numbers are ASCII; a stray byte of noise is not fatal
    text = data.decode("utf-8", errors="replace")
    log = Log(path=path, index=index)
    found = detect(text, whole=len(data) < HEAD_BYTES)
    if fmt == "auto":
        if found is None:
            log.error = (
                f"{path}:1: neither IMB, OSU nor nccl-tests output (no IMB banner, OSU title or "
                "nccl-tests header; accepted: --format imb|osu|nccl to read it as one of them)"
            )
            return log
        fmt = found
    log.fmt = fmt
    log.source["json"] = fmt == "nccl" and text.lstrip()[:1] == "{"
    if found is not None and found != fmt:
        log.source["note"] = f"read as {fmt} (--format), although it looks like {found} output"
    return log


class Digest:
    """sha256 of the bytes read, and how many newlines they held."""

    def __init__(self):
        self.sha = hashlib.sha256()
        self.newlines = 0

    def update(self, data: bytes) -> None:
        self.sha.update(data)
        self.newlines += data.count(b"\n")


def _lines(f, digest: Digest):
    """The lines of a text log without their ends. The tools end every line with a newline:
    a last line without one was being written when the log was copied (or the run killed),
    so the log stops there (LogError) and nothing of that line is read."""
    decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
    n = 0
    while True:
        raw = f.readline(MAX_LINE)
        if not raw:
            return
        digest.update(raw)
        n += 1
        if not raw.endswith(b"\n"):
            if len(raw) == MAX_LINE:
                raise LogError(
                    n,
                    f"line {n} is longer than {MAX_LINE} bytes: not the text of IMB, OSU or "
                    "nccl-tests (accepted: their text output, lines of a few hundred characters)",
                )
            raise LogError(
                n,
                f"the log ends inside this line ({decode(raw).strip()[:60]!r}, no newline after "
                "it): it was cut while the tool wrote it, and the line is not read (accepted: a "
                "log whose lines all end with their newline, as the tools write them; copy it "
                "again once the run is over)",
            )
        yield decode(raw).rstrip("\r\n")


def read(path: str, index: int, fmt: str = "auto", np_hint: int | None = None, sink=None) -> Log:
    """One log as records, read as a stream; sink (optional) takes each record as it is
    final. The Log says in .error why reading stopped early ("PATH:LINE: …"); its records
    are those read before. OSError propagates (the file cannot be read at all)."""
    log = sniff(path, index, fmt)
    if not log.fmt:
        return log
    log.sink, fmt, is_json = sink, log.fmt, log.source.pop("json")
    digest = Digest()
    with open(path, "rb") as f:
        try:
            if is_json:
                nccl_json.read_json(log, f, np_hint, digest)
            elif fmt == "imb":
                imb.read(log, _lines(f, digest))
            elif fmt == "osu":
                osu.read(log, _lines(f, digest), np_hint)
            else:
                nccl.read_text(log, _lines(f, digest), np_hint)
        except Unsupported as e:
            # nothing of it goes into the file
            log.error, log.fmt = f"{path}:{e.line}: {e.message}", ""
            return log
        except LogError as e:
            log.error = f"{path}:{e.line}: {e.message}"
        for chunk in iter(lambda: f.read(1 << 20), b""):  # the rest of a log that stopped early
            digest.update(chunk)
    log.source.update(file=path, sha256=digest.sha.hexdigest(), lines=digest.newlines, format=fmt)
    return log


__all__ = ["FORMATS", "Log", "LogError", "detect", "read", "sniff"]
