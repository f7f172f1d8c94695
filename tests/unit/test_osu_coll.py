"""The osu family's blocking and persistent collectives without MPI: the 29 programs of OMB 7.4,
and those of the binaries beside the checkout (../shared/peers/osu) where present. The
collectives in real MPI processes are tests/mpi/test_osu_coll.py."""

from __future__ import annotations

from pathlib import Path

from commbench.suites.osu import collectives

# OMB 7.4's programs (commbench's own, scan …, only by name: tests/unit/test_scan.py)
NAMES = [b.name for b in collectives.BENCHMARKS if b.default]


def test_the_29_programs_of_omb_7_4():
    peers = Path(__file__).resolve().parents[3] / "shared" / "peers" / "osu"  # ../shared/peers/osu
    programs = sorted(p.name[4:] for p in peers.glob("osu_*"))
    assert len(NAMES) == 29 and len(set(NAMES)) == 29
    if programs:  # the binaries beside the checkout (../shared/peers/osu), where present
        assert set(NAMES) <= set(programs)
        coll = {
            p for p in programs if p.split("_persistent")[0] in {c.name for c in collectives.CALLS}
        }
        assert coll == set(NAMES)
