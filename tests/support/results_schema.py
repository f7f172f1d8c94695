"""Results files against the published schema (commbench/schema/results.schema.json).

tests/conftest.py validates, at the end of the session, every results file
the tests wrote; a test that writes a results file on purpose broken (to
check an error message) names it `*.invalid.json`, and a test that drives
a writer directly takes its header from `run_header()` (a real run's).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from commbench import schema
from commbench.views.results_file import FORMAT

SAMPLE = Path(__file__).parents[1] / "data" / "results" / "pingpong-np2.json"  # a real run's file
HEADER_KEYS = ("metadata", "config", "family", "notes", "comments", "preamble_extra")
DELIBERATELY_INVALID = ".invalid.json"
TOO_LARGE = (
    64 * 2**20
)  # bytes: a file this large is a --samples stress test, checked by its own test


@lru_cache(maxsize=1)
def validator():
    import jsonschema

    s = schema.load()
    jsonschema.Draft202012Validator.check_schema(s)
    return jsonschema.Draft202012Validator(s)


def problems(doc: object) -> list[str]:
    """'where: what' for every way doc breaks the schema (empty when it validates)."""
    errors = sorted(validator().iter_errors(doc), key=lambda e: list(e.absolute_path))
    return [
        f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message[:300]}" for e in errors
    ]


def run_header() -> dict:
    """The header of a real run's results file (metadata, config, family …)."""
    doc = json.loads(SAMPLE.read_text())
    return {k: doc[k] for k in HEADER_KEYS}


def _candidates(roots: Iterable[Path], since: float) -> list[Path]:
    """The JSON files under roots written at or after since, save *.invalid.json and files
    over TOO_LARGE."""
    found = []
    for root in roots:
        if not root.is_dir():
            continue
        for path in root.rglob("*.json"):
            try:
                st = path.stat()
            except OSError:
                continue
            if (
                path.name.endswith(DELIBERATELY_INVALID)
                or st.st_mtime < since
                or st.st_size > TOO_LARGE
            ):
                continue
            found.append(path)
    return sorted(found)


def _results_doc(path: Path) -> dict | None:
    """path's document when it is a results file, else None (also when it does not parse:
    a writer killed on purpose in the middle of a record, or replaced since it was found)."""
    try:
        with open(path, "rb") as f:
            if f.read(64).lstrip()[:1] != b"{":
                return None
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("format") == FORMAT else None


def results_files(roots: Iterable[Path], since: float = 0.0) -> list[Path]:
    """Every results file (JSON with "format": "commbench-results") under roots, written
    at or after since; not those named *.invalid.json, nor files that do not parse (the
    launcher's salvage of a killed writer is tested on its own)."""
    return [p for p in _candidates(roots, since) if _results_doc(p) is not None]


def _file_problems(path: Path) -> list[str]:
    doc = _results_doc(path)
    return [] if doc is None else [f"{path}: {p}" for p in problems(doc)]


def check(paths: Iterable[Path]) -> list[str]:
    """'file: where: what' for every results file among paths that breaks the schema."""
    return [line for path in paths for line in _file_problems(path)]


def check_written(roots: Iterable[Path], since: float) -> list[str]:
    """check() of every results file under roots written at or after since, each file read
    once, in a process per core (the suite's ~800 files took 9.4 s in one)."""
    import multiprocessing

    paths = _candidates(roots, since)
    workers = min(os.cpu_count() or 1, 8)
    if workers < 2 or len(paths) < 50:
        return check(paths)
    validator()  # made once, before the fork: every worker has it
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        found = pool.map(_file_problems, paths, chunksize=max(1, len(paths) // (4 * workers)))
    return [line for lines in found for line in lines]


def session_roots(basetemp: Path) -> list[Path]:
    """Where the tests write results files: pytest's temporary directories, and the
    checkout's results/ (a test that runs commbench with the default -o there)."""
    return [
        basetemp,
        Path(__file__).resolve().parents[2] / "results",
        Path(os.getcwd()) / "results",
    ]
