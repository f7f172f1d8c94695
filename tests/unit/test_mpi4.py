"""IMB-MPI4's catalog without MPI: its benchmarks mirror IMB-MPI1's operations and IMB-NBC's
own, with IMB-MPI4's default list. The persistent requests in real MPI processes are
tests/mpi/test_mpi4.py."""

from __future__ import annotations

from commbench.suites import mpi1, mpi4, nbc
from commbench.suites.base import Kind
from tests.support.imb_mpi4 import DEFAULT

ALL = [b.name for b in mpi4.BENCHMARKS]


def test_family_mirrors_mpi1_and_imb_mpi4():
    fam = mpi4.FAMILY
    assert fam.title == "IMB-MPI4" and fam.part == "MPI-4 part" and fam.methodology
    assert fam.default_list() == fam.default_list("imb2021") == DEFAULT  # IMB-MPI4's DEFAULT flags
    assert len(ALL) == 26 + 2 * len(nbc.OURS)  # IMB-MPI4's, then Scan_persist …
    for stem, _, _ in nbc.OPERATIONS + nbc.OURS:
        over, pure = fam.get(f"{stem}_persist"), fam.get(f"{stem}_persist_pure")
        assert not pure.default and over.default == (stem != "Allgather" and stem not in nbc.OWN)
        ref = mpi1.FAMILY.get(stem)
        for b in (over, pure):
            assert b.family == "mpi4" and b.unit == ref.unit and b.root_based == ref.root_based
            assert b.buffers(8, 4) == ref.buffers(8, 4) and b.int_extent is ref.int_extent
            # rooted verifiers re-run the operation per root with a persistent request of its own
            assert (b.expected is ref.expected) == (stem not in mpi1.ROOT_SWEPT), b.name
            assert b.setup is not None and b.teardown is not None  # requests bound per size, freed
        sync = stem == "Barrier"
        assert over.kind == (Kind.OVERLAP_SYNC if sync else Kind.OVERLAP)
        assert pure.kind == (Kind.SYNC if sync else Kind.COLLECTIVE)
        assert over.components == nbc.OVERLAP_COMPONENTS
