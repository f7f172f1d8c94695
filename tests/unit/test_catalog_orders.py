"""The benchmark orders IMB prints, held by tests rather than by import-time asserts that
`python -O` removes (issue 47, item 5). No MPI process is started."""

from __future__ import annotations

import importlib

import pytest

from commbench.suites import collops

# (module, the names the test reads: all benchmarks or only the default ones, the order);
# IMB-NBC's and IMB-MPI4's default lists are held by tests/unit/test_nbc.py and test_mpi4.py
ORDERS = [
    ("commbench.suites.mpi1", "all", "_ORDER"),
    ("commbench.suites.rma", "default", "_DEFAULT"),
    ("commbench.suites.ext", "all", "_ORDER"),
]


@pytest.mark.parametrize("module,which,order", ORDERS, ids=[m.rsplit(".")[-1] for m, *_ in ORDERS])
def test_a_family_lists_its_benchmarks_in_imb_s_order(module, which, order):
    mod = importlib.import_module(module)
    names = [b.name for b in mod.BENCHMARKS if which == "all" or b.default]
    expected = getattr(mod, order)
    assert len(set(expected)) == len(expected), "a name twice in the order"
    # commbench's own collectives (collops.OURS) follow IMB's list, run by name
    ours = [n for n in names if n not in expected]
    assert names == expected + ours
    assert ours == ([o.method for o in collops.OURS] if module.endswith("mpi1") else [])


# The reference's default list and order (spec section 8); IMB 2021 adds benchmarks in between.
REFERENCE_MPI1 = (
    "PingPong PingPing Sendrecv Exchange Allreduce Reduce Reduce_scatter Allgather Allgatherv "
    "Gather Gatherv Scatter Scatterv Alltoall Alltoallv Bcast Barrier"
).split()


def test_mpi1_keeps_the_reference_s_order():
    from commbench.suites import mpi1

    names = [b.name for b in mpi1.BENCHMARKS]
    assert [n for n in names if n in REFERENCE_MPI1] == REFERENCE_MPI1


def test_io_has_imb_io_s_37_benchmarks():
    from commbench.suites import io

    names = [b.name for b in io.BENCHMARKS]
    assert len(names) == 37 and len(set(names)) == 37
