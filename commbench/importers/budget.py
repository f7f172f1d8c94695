"""How large the results file of an import will be, known before any log is read.

A record is a few hundred bytes where its row in the log is some fifty, so a
log of 200 MB makes a results file of GBs. The same cap as a run's results
file applies (commbench.resources.SAMPLES_FILE_LIMIT, what `commbench run
--samples` may write without --force): before reading, each log is scanned
once (bytes only, a MiB at a time) for the rows it can hold, and an import
whose file would pass the cap is refused unless --force.
"""

from __future__ import annotations

from commbench.resources import SAMPLES_FILE_LIMIT

# Bytes of one record in the results file (one line, as Output writes it): the mean over the
# real logs of tests/data (IMB 2021.11's seven executables, -multi; OMB 7.4's 93 outputs of
# tests/data/osu/ref; the nccl-tests sample), rounded up; and of the document around them.
RECORD_BYTES = {"imb": 430, "osu": 430, "nccl": 580}
DOCUMENT_BYTES = 16_000
CHUNK = 1 << 20


def rows(path: str, fmt: str, json_log: bool) -> int:
    """At most how many records the log can give: its lines that are not '#' comments,
    empty or IMB's column lines (nccl-tests: two records a row); in -J JSON, its placements."""
    count, tail = 0, b"\n"
    keys = (b'"out_of_place"', b'"in_place"')
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            data = tail + chunk
            if json_log:
                count += sum(data.count(k) for k in keys)
                tail = data[-16:]
                count -= sum(tail.count(k) for k in keys)  # counted again with the next chunk
                continue
            count += (
                data.count(b"\n")
                - tail.count(b"\n")
                - data.count(b"\n#")
                - data.count(b"\n\n")
                - data.count(b"\n\r\n")
                - (data.count(b" #repetitions") if fmt == "imb" else 0)
            )
            tail = data[-1:]
    if not json_log and tail != b"\n":
        count += 1  # the last line has no newline
    return count * (2 if fmt == "nccl" and not json_log else 1)


def estimate(logs: list[tuple[str, str, bool]]) -> tuple[int, int]:
    """(records at most, bytes of the results file about) for (path, format, json) logs."""
    counts = [(rows(path, fmt, js), fmt) for path, fmt, js in logs]
    return sum(n for n, _ in counts), DOCUMENT_BYTES + sum(
        n * RECORD_BYTES[fmt] for n, fmt in counts
    )


def refusal(records: int, size: int, force: bool) -> str | None:
    """Why the import is refused (the file would pass the cap), or None."""
    if size <= SAMPLES_FILE_LIMIT or force:
        return None
    return (
        f"the logs hold up to {records:,} rows: the results file would be about {size / 1e6:,.0f} "
        f"MB, past the cap of {SAMPLES_FILE_LIMIT / 1e6:.0f} MB on a results file (the cap of "
        "commbench run --samples); nothing was read or written (accepted: logs that fit, e.g. "
        "split into several imports, or --force to write it all the same)"
    )
