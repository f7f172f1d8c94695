"""The bad-input matrix's cases without running them: enough of them, and the PGAS and IO
families' among them. Each case as a real MPI job is tests/mpi/test_bad_input.py."""

from __future__ import annotations

import pytest

from commbench import suites
from tests.support.bad_input_cases import CASES
from tests.support.bad_input_cases import IO_DIR_OPTION as _IO


def test_case_count():
    assert len(CASES) >= 30


def test_family_cases_present_or_skipped():
    """The PGAS and IO cases join the matrix as soon as those families exist."""
    missing = [f for f in ("pgas", "io") if suites.canonical_family(f) is None]
    if _IO is None and "io" not in missing:
        missing.append("io (no directory option)")
    if missing:
        pytest.skip(
            f"family {', '.join(missing)} not in this build: those matrix cases are skipped"
        )
