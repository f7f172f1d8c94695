"""The osu family's nonblocking and neighborhood collectives without MPI: OSU's iteration counts,
and the neighbours of -N's cartesian topologies (the arithmetic; no communicator). The
collectives in real MPI processes are tests/mpi/test_osu_nbc.py."""

from __future__ import annotations

from commbench.suites.osu import neighbor, nonblocking, topology
from commbench.suites.osu.settings import OsuSettings


def test_osus_counts():
    assert nonblocking.NBC.counts(8192, None, None) == (1000, 100)
    assert nonblocking.NBC.counts(16384, None, None) == (100, 10)
    assert neighbor.NBR.counts(16384, None, None) == (100, 10) and neighbor.NBR.max_size == 1 << 20
    ring = OsuSettings()  # OSU's default -N cart:1:1: the ranks at -1, +1
    assert topology.layout(ring, 4, 0) == ([3, 1], [3, 1]) and topology.layout(ring, 4, 2) == (
        [1, 3],
        [1, 3],
    )
    grid = OsuSettings(nhbr=("cart", 2, 1))  # 3 x 3: the 8 cells around, last dimension fastest
    assert topology.layout(grid, 9, 4)[1] == [0, 1, 2, 3, 5, 6, 7, 8] and topology.layout(
        grid, 9, 0
    )[1][:3] == [8, 6, 7]
    assert topology.dims_create(12, 2) == [4, 3] and topology.dims_create(16, 3) == [4, 2, 2]
    assert "radius (r = 1)" in topology.fits(grid, 4) and topology.fits(grid, 9) is None
