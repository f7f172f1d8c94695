"""Output parity with IMB 2021.11 (issue 13, item 6): for each IMB family, a parser of
IMB 2021's text (tests/support/imb_layout.py) reads the same structure from commbench's text
for the same options under --methodology imb2021: the same benchmarks in the same
order, modes, process counts, column headers and rows. References and the commands
that made them: tests/data/imb2021."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from commbench import suites
from tests.support.imb_layout import layout
from tests.support.mpirun import commbench, mpiexec

DATA = Path(__file__).parents[1].joinpath("data") / "imb2021"
ARGS = ["-msglog", "0:3", "-iter", "20", "-iter_policy", "off"]
CASES = [
    ("mpi1", 2, []),
    ("ext", 2, []),
    ("rma", 2, []),
    ("nbc", 2, []),
    ("mpi1", 3, ["PingPong", "Allreduce", "Bcast", "Sendrecv"]),
]


@pytest.mark.parametrize("family, np_, names", CASES, ids=[f"{c[0]}-np{c[1]}" for c in CASES])
def test_same_structure_as_imb_2021(family, np_, names):
    ref = (DATA / f"{family}-np{np_}.txt").read_text()
    p = mpiexec(
        np_,
        "run",
        "--suite",
        family,
        "--methodology",
        "imb2021",
        *ARGS,
        *names,
        "-o",
        "-",
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    got, want = layout(p.stdout), layout(ref)
    assert len(want) > 20
    assert got == want


LISTS = {
    "MPI1": "mpi1",
    "EXT": "ext",
    "RMA": "rma",
    "NBC": "nbc",
    "P2P": "p2p",
    "MT": "mt",
    "MPI4-source": "mpi4",
}


def imb_list(text: str) -> list[tuple[str, bool]]:
    """(name, in the default list) from `IMB-X -list` (P2P prints its list as '# Name' lines)."""
    out = []
    for line in text.splitlines():
        m = re.fullmatch(r"    (\w+)( \(non-default\))?", line) or re.fullmatch(r"# (\w+)()", line)
        if m and m[1] != "List":
            out.append((m[1], not m[2]))
    return out


@pytest.mark.parametrize("which", list(LISTS))
def test_list_shows_every_imb_benchmark(which):
    """Every benchmark IMB 2021.11's executables list (IMB-MPI4: its source) is in `commbench list`
    under IMB's spelling, in the default list under --methodology imb2021 exactly where IMB's is."""
    listed = imb_list((DATA / f"list-{which}.txt").read_text())
    assert len(listed) >= 6, listed
    p = commbench("list", LISTS[which])
    assert p.returncode == 0, p.stderr
    shown = {line.split()[0] for line in p.stdout.splitlines()[1:] if line.startswith("  ")}
    assert {n for n, _ in listed} <= shown, sorted({n for n, _ in listed} - shown)
    if (
        which != "MPI4-source"
    ):  # IMB-MPI4's defaults: suites/mpi4.py asserts them from the same source
        default = set(suites.family(LISTS[which]).default_list("imb2021"))
        assert {n for n, d in listed if d} == {n for n, _ in listed} & default
