"""The unit tier starts no process and loads no MPI.

A test here that spawns a process (subprocess, fork, exec, posix_spawn: an mpiexec, a
compiler, the CLI) fails, naming what it started, and belongs in tests/mpi.

A session of unit tests alone (`make test-unit`, `pytest tests/unit`, one unit file) that ends
with mpi4py.MPI in sys.modules fails, naming where it was first seen loaded: the collection of
a test file (a module-level import) or a test. A unit test imports the catalogs (a family's
package, run_config, harness.plan), which load no MPI; one that needs a module importing
mpi4py.MPI (a kernel, a verifier, the harness's core) belongs in tests/mpi. In a session
with other tiers their collection loads MPI first, and the check is left to the unit-only run.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from tests.support.ahead import THREADS

_EVENTS = ("subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.exec", "os.system")
_ARMED = [False]
_MPI = "mpi4py.MPI"
_UNIT = Path(__file__).resolve().parent
_FIRST_SEEN: list[str] = []  # where mpi4py.MPI was first seen loaded


def _hook(event: str, args: tuple) -> None:
    # the installs of tests/support/ahead.py run beside the unit tier, in threads of their own
    if _ARMED[0] and event in _EVENTS and not threading.current_thread().name.startswith(THREADS):
        _ARMED[0] = False  # the failure's own reporting may start nothing, but never loop
        raise RuntimeError(
            f"a unit test started a process ({event}: {str(args)[:200]}): move it to tests/mpi"
        )


sys.addaudithook(_hook)


def _seen_after(where: str) -> None:
    if not _FIRST_SEEN and _MPI in sys.modules:
        _FIRST_SEEN.append(where)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    yield
    _seen_after(f"collecting {collector.nodeid}")


@pytest.fixture(scope="session", autouse=True)
def _font_cache():
    """matplotlib builds its font cache at its first use on a machine, running fc-list: done
    here, before any test is armed, so that a unit test drawing a plot (report --html) passes
    on a fresh machine too, whichever tier ran first."""
    try:
        import matplotlib.font_manager  # noqa: F401 - the import builds the cache
    except ImportError:
        pass


@pytest.fixture(autouse=True)
def _starts_no_process(request, _font_cache):
    _ARMED[0] = True
    yield
    _ARMED[0] = False
    _seen_after(f"the test {request.node.nodeid}")


@pytest.fixture(scope="session", autouse=True)
def _loads_no_mpi(request):
    yield
    items = request.session.items
    if not all(Path(item.path).resolve().is_relative_to(_UNIT) for item in items):
        return  # other tiers in the session: their collection loads MPI, nothing to tell
    if _MPI in sys.modules:
        where = _FIRST_SEEN[0] if _FIRST_SEEN else "an unknown point"
        pytest.fail(
            f"the unit tier loaded {_MPI} (first seen after {where}): a unit test must not "
            "load MPI. Import the catalog (the family's package, run_config, harness.plan) "
            "instead of a module that imports mpi4py.MPI, or move the test to tests/mpi.",
            pytrace=False,
        )
