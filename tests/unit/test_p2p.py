"""IMB-P2P's process grids without MPI: the process counts Stencil2D and Stencil3D run at and
their shapes. The family in real MPI processes is tests/mpi/test_p2p.py."""

from __future__ import annotations

from commbench.suites.p2p.spec import grid2d, grid3d


def test_grids_are_imb_p2ps():
    assert [p for p in range(1, 17) if grid2d(p)] == [4, 6, 8, 9, 10, 12, 14, 15, 16]
    assert grid2d(6) == (3, 2) and grid2d(8) == (2, 4)
    assert {p: grid3d(p) for p in range(1, 25) if grid3d(p)} == {
        8: (2, 2, 2),
        12: (2, 3, 2),
        16: (2, 2, 4),
        18: (2, 3, 3),
        20: (2, 2, 5),
        24: (2, 4, 3),
    }
