"""commbench's commands called in the pytest process (commands.main), as the readers' tests do:
the exit status and what the command wrote on stderr. tests/mpi/test_readers.py and
tests/unit/test_readers.py use it."""

from __future__ import annotations

from commbench import commands


def call(capsys, *argv: str) -> tuple[int, str]:
    rc = commands.main(list(argv))
    err = capsys.readouterr().err
    return rc, err
