"""A copy of the native kernels' C source with one more row in its pattern table, for
tests/unit/test_native.py (the table reader, the build key) and tests/mpi/test_native.py
(the row built and run)."""

from __future__ import annotations

from commbench import native

# A row to add in the tests: a second Allreduce loop, under a new name.
NEW_ROW = (
    "P(allreduce_again,   floats,         EACH,   MPI_Allreduce(s, r, c, MPI_FLOAT, MPI_SUM, comm))"
)


KERNELS = native.SOURCE


LAST_ROW = (
    "P(persist,           persist,        START,  "
    "rq = (MPI_Request *)a->preqs[root * a->slots + k]; MPI_Start(rq))\n"
)


def with_row(tmp_path, row: str = NEW_ROW, name: str = "kernels.c"):
    """A copy of kernels.c whose table has `row` after its last row, beside a copy of
    the loops it includes."""
    src = KERNELS.read_text()
    assert src.count(LAST_ROW) == 1
    copy = tmp_path / name
    copy.write_text(src.replace(LAST_ROW, LAST_ROW[:-1] + " \\\n" + row + "\n"))
    for inc in native.local_includes(KERNELS):
        (tmp_path / inc.name).write_text(inc.read_text())
    return copy
