"""`commbench import` of a real log in the test's process, and the log's own rows read
independently (a plain column split), for the import tests of tests/unit and tests/mpi."""

from __future__ import annotations

import json
import re
from pathlib import Path

from commbench.commands import importing as command
from tests.support.results_schema import problems


def _num(tok: str) -> bool:
    return re.fullmatch(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", tok) is not None


def imported(tmp_path: Path, *logs: Path | str, extra: tuple = ()) -> dict:
    out = tmp_path / (Path(str(logs[0])).stem + ".json")
    assert command.main([*map(str, logs), "-o", str(out), *extra]) == 0
    doc = json.loads(out.read_text())
    assert problems(doc) == [], "the imported file breaks the schema"
    return doc


def imb_rows(path: Path) -> dict[int, dict[str, str]]:
    """line number -> {column heading: token} for each table row of an IMB log."""
    heads, rows = None, {}
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        toks = line.split()
        if not line.startswith("#") and "#repetitions" in toks:
            heads = toks
        elif (
            heads
            and toks
            and not line.startswith("#")
            and len(toks) == len(heads)
            and all(map(_num, toks))
        ):
            rows[n] = dict(zip(heads, toks))
    return rows


def cut_log(tmp_path: Path, src: Path, keep: int, tail: str = "") -> Path:
    """The first `keep` lines of `src`, then `tail`: a log copied while its job ran."""
    lines = src.read_text().splitlines(keepends=True)
    out = tmp_path / f"cut-{src.name}"
    out.write_text("".join(lines[:keep]) + tail)
    return out
