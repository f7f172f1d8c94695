"""The one table of collective operations (commbench.suites.collops) read without MPI: every
family's names for an operation resolve to it, and its counts split a message as declared.
Each operation called on a real MPI is tests/mpi/test_collops.py."""

from __future__ import annotations

from commbench.suites import collops


def test_names_of_every_family_resolve_to_one_operation():
    assert (
        collops.op("Iallgatherv")
        is collops.op("allgatherv_persistent")
        is collops.op("Allgatherv_persist")
    )
    assert collops.op("ineighbor_alltoallw") is collops.OPS["neighbor_alltoallw"]
    assert collops.counts(collops.OPS["reduce_scatter"], 10, 4) == ([3, 3, 2, 2], [0, 3, 6, 8])
    assert collops.counts(collops.OPS["allgatherv"], 5, 3) == ([5, 5, 5], [0, 5, 10])
