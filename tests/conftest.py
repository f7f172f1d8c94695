"""Session-wide checks of the test suite, and its tiers.

tests/unit (no MPI process, no subprocess; `make test-unit`), tests/mpi (real MPI
processes, the CLI, other programs) and tests/system (root and system parts: emulated
hosts, Slurm, PostgreSQL, Chromium, other MPIs) mark their tests `unit`, `mpi` and
`system` (`pytest -m unit`); the helpers they share are tests/support.

Every results file the tests wrote validates against the published schema
(commbench/schema/results.schema.json): at the end of the session each one
found under pytest's temporary directories (and results/, when written
during the session) is validated, and the session fails naming each file
and what in it breaks the schema. Files broken on purpose are named
*.invalid.json (tests/support/results_schema.py).
"""

from __future__ import annotations

import time

import pytest

from tests.support import results_schema

pytest_plugins = ["tests.support.skip_policy", "tests.support.ahead"]

TIERS = ("unit", "mpi", "system")


def pytest_collection_modifyitems(items):
    for item in items:
        tier = item.path.parent.name
        if tier in TIERS:
            item.add_marker(getattr(pytest.mark, tier))
    # The unit tier first: the system tier's installs run beside it (tests/support/ahead.py)
    items.sort(key=lambda item: item.get_closest_marker("unit") is None)


@pytest.fixture(scope="session", autouse=True)
def every_results_file_validates(tmp_path_factory):
    started = time.time() - 1  # mtime granularity
    yield
    roots = results_schema.session_roots(tmp_path_factory.getbasetemp())
    bad = results_schema.check_written(roots, started)
    if bad:
        pytest.fail(
            f"{len(bad)} problem(s) in the results files the tests wrote (schema: "
            "commbench/schema/results.schema.json):\n" + "\n".join(bad[:40]),
            pytrace=False,
        )


# What a test measured but does not require (a library defect that showed or not, issue 45):
# printed at the end of the run, so the CI log says how often each showed and under what load.
MEASURED: list[str] = []


@pytest.fixture
def measured(request):
    def note(line: str) -> None:
        MEASURED.append(f"{request.node.name}: {line}")
        print(line)

    return note


def pytest_terminal_summary(terminalreporter):
    if MEASURED:
        terminalreporter.section("measured, not required (library defects: docs/mpis.md)")
        for line in MEASURED:
            terminalreporter.write_line(line)
