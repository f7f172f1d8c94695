"""Every family's check mode has its fault-injection test: the families
tests/mpi/test_check_honesty.py corrupts (tests/support/check_families.py) and those with a
-check of their own are every family there is."""

from __future__ import annotations

from commbench import suites
from tests.support.check_families import DRIVER_FAMILIES, KERNEL_FAMILIES

# Driver families with a -check of their own, whose fault-injection tests live beside them.
OWN_CHECK = {"mt": "tests/mpi/test_mt.py", "osu": "tests/mpi/test_osu.py"}


def test_every_family_is_covered():
    assert set(suites.family_names()) == set(KERNEL_FAMILIES) | set(DRIVER_FAMILIES) | set(
        OWN_CHECK
    )
