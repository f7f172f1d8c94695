"""The unit tier starts no process: a test here that spawns one (subprocess, fork, exec,
posix_spawn: an mpiexec, a compiler, the CLI) fails, naming what it started, and belongs
in tests/mpi."""

from __future__ import annotations

import sys

import pytest

_EVENTS = ("subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.exec", "os.system")
_ARMED = [False]


def _hook(event: str, args: tuple) -> None:
    if _ARMED[0] and event in _EVENTS:
        _ARMED[0] = False  # the failure's own reporting may start nothing, but never loop
        raise RuntimeError(
            f"a unit test started a process ({event}: {str(args)[:200]}): move it to tests/mpi"
        )


sys.addaudithook(_hook)


@pytest.fixture(autouse=True)
def _starts_no_process():
    _ARMED[0] = True
    yield
    _ARMED[0] = False
