"""A -msglen file (one message size a line) in the test's directory, returned as the path to
pass: tests/unit/test_large.py (what the parser and the plan make of sizes past 2^31) and
tests/mpi/test_large.py (real jobs) write theirs with it."""

from __future__ import annotations


def write(tmp_path, text: str) -> str:
    f = tmp_path / "lens"
    f.write_text(text)
    return str(f)
