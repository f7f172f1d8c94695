"""MPI_Scan and MPI_Exscan, commbench's own collectives (issue 47 item 3), without MPI: every
collective family (IMB-MPI1, IMB-NBC, IMB-MPI4, OSU) offers them by name only, never in its
default list. Both engines running and checking them are tests/mpi/test_scan.py."""

from __future__ import annotations

from commbench import suites
from tests.support.scan_names import IMB, OSU


def test_every_family_offers_them_by_name_only():
    for family, names in {**IMB, "osu": OSU}.items():
        fam = suites.family(family)
        assert all(fam.get(n) is not None for n in names), family
        assert not set(names) & set(fam.default_list()), family
