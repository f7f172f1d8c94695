"""A known library defect excuses a failed -check only where it can be the cause: its
library, its benchmarks and, for the MPICH 4.0 window offset, its sizes (issue 47 item 6's
audit: the PGAS pattern excused every Put/Get failure on MPICH 4.0 at any size)."""

from __future__ import annotations

from commbench import mpi_defects

MPICH40 = "MPICH Version:\t4.0.2\nMPICH Release date:\tThu May 19 2022"
MPICH50 = "MPICH Version:\t5.0.2"


def test_the_window_offset_excuses_only_the_small_segments_it_touches():
    assert mpi_defects.known_defect("pgas", "Put_latency", MPICH40, {1, 8})
    assert mpi_defects.known_defect("pgas", "Get_bw", MPICH40, {4})
    for sizes in ({16}, {8, 64}, {4096}):
        assert mpi_defects.known_defect("pgas", "Put_latency", MPICH40, sizes) is None, sizes
    assert mpi_defects.known_defect("pgas", "Put_latency", MPICH50, {8}) is None


def test_a_defect_of_every_size_excuses_any_size_on_its_library_only():
    assert mpi_defects.known_defect("mpi4", "Scatter_persist", MPICH40, {0, 4194304})
    assert mpi_defects.known_defect("mpi4", "Scatter_persist", MPICH50, {8}) is None
    assert mpi_defects.known_defect("mpi4", "Gather_persist", MPICH40, {8}) is None
