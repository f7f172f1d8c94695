"""Output parity with IMB 2021.11 (issue 13, item 6): for each IMB family, a parser of
IMB 2021's text (tests/imb_layout.py) reads the same structure from commbench's text
for the same options under --methodology imb2021: the same benchmarks in the same
order, modes, process counts, column headers and rows. References and the commands
that made them: tests/data/imb2021."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.imb_layout import layout
from tests.mpirun import mpiexec

DATA = Path(__file__).with_name("data") / "imb2021"
ARGS = ["-msglog", "0:3", "-iter", "20", "-iter_policy", "off"]
CASES = [("mpi1", 2, []), ("ext", 2, []), ("rma", 2, []), ("nbc", 2, []),
         ("mpi1", 3, ["PingPong", "Allreduce", "Bcast", "Sendrecv"])]


@pytest.mark.parametrize("family, np_, names", CASES, ids=[f"{c[0]}-np{c[1]}" for c in CASES])
def test_same_structure_as_imb_2021(family, np_, names):
    ref = (DATA / f"{family}-np{np_}.txt").read_text()
    p = mpiexec(np_, "run", "--suite", family, "--methodology", "imb2021", *ARGS, *names, "-o", "-", timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    got, want = layout(p.stdout), layout(ref)
    assert len(want) > 20
    assert got == want
