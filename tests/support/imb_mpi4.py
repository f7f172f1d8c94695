"""IMB-MPI4's default benchmark list (its DEFAULT flags): tests/unit/test_mpi4.py holds the
catalog to it, tests/mpi/test_mpi4.py the run list `IMB-MPI4` selects."""

from __future__ import annotations

DEFAULT = [
    "Bcast_persist",
    "Allgatherv_persist",
    "Gather_persist",
    "Gatherv_persist",
    "Scatter_persist",
    "Scatterv_persist",
    "Alltoall_persist",
    "Alltoallv_persist",
    "Reduce_persist",
    "Reduce_scatter_persist",
    "Allreduce_persist",
    "Barrier_persist",
]
