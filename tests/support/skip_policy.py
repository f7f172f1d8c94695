"""A skip is a result too (issue 47, item 6): on the CI machine (.ci/run sets
COMMBENCH_STRICT_SKIPS=1) a test that skips for a reason not declared below fails the run,
so a Slurm that did not come up, an apt or pip install that failed, or a missing `ip` can
no longer turn tests green by skipping them. Each declared reason is a part that truly
cannot run there, with why. Elsewhere (a developer's laptop) skips are only listed.
"""

from __future__ import annotations

import os

import pytest

# (the start of the skip's reason, why a CI machine may lack it)
ALLOWED = (
    (
        "peer binaries absent:",
        "IMB and OMB binaries live in ../shared/peers beside a developer's checkout; "
        "the repository does not carry them",
    ),
    (
        "memory: needs ~4.3 GiB",
        "the 2 GiB + 8 B message needs 8 GiB available; a CI machine with less cannot hold it",
    ),
    (
        "the hang is shown oversubscribed",
        "a machine with 4 or more cores cannot oversubscribe 4 processes",
    ),
)

STRICT = "COMMBENCH_STRICT_SKIPS"
_SKIPPED: list[tuple[str, str]] = []
_UNDECLARED: list[tuple[str, str]] = []


def reason_of(report) -> str:
    r = report.longrepr
    text = r[2] if isinstance(r, tuple) and len(r) == 3 else str(r)
    return text.removeprefix("Skipped: ")


def declared(reason: str) -> bool:
    return any(reason.startswith(start) for start, _ in ALLOWED)


def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        _SKIPPED.append((report.nodeid, reason_of(report)))


def pytest_sessionfinish(session):
    if os.environ.get(STRICT) != "1":
        return
    _UNDECLARED[:] = [(n, r) for n, r in _SKIPPED if not declared(r)]
    if _UNDECLARED and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter):
    if not _UNDECLARED:
        return
    terminalreporter.section("skips not declared in tests/support/skip_policy.py (the run fails)")
    for nodeid, reason in _UNDECLARED:
        terminalreporter.write_line(f"{nodeid}: {reason}")
