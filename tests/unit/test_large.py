"""Messages of 2^31 bytes and more, before anything is allocated and without MPI: sizes past
--maxlog cut to 2^maxlog with a note, and the pre-flight's refusals (no MPI-4 large counts, more
than the host has). The messages themselves, with MPI, are tests/mpi/test_large.py."""

from __future__ import annotations

from commbench import resources, run_config
from commbench.harness.plan import Plan
from tests.support.msglen import write as _write

BIG = 2**31 + 8  # one MPI_BYTE count past INT_MAX


def test_sizes_beyond_maxlog_are_truncated_without_maxlog(tmp_path):
    """Spec §4: without --maxlog the size is cut to 2^maxlog with a note,
    nothing is allocated big."""
    cfg = run_config.parse_run_args(
        ["-msglen", _write(tmp_path, f"{BIG}\n"), "Bcast"], world_size=1
    )
    plan = Plan(cfg, 1)
    assert plan.sizes(plan.family.get("Bcast")) == [2**22]


def test_refused_up_front(tmp_path):
    """No MPI-4: refused before allocation; more than the host has: refused with MemAvailable."""
    cfg = run_config.parse_run_args(
        ["-msglen", _write(tmp_path, f"{BIG}\n"), "--maxlog", "32", "-mem", "5", "Bcast"],
        world_size=1,
    )
    h = Plan(cfg, 1)
    peak, biggest, where = h.peak()
    assert biggest == BIG and peak >= 2 * BIG and "Bcast" in where
    msg = resources.preflight(h, 1, (3, 1), available=64 * 2**30)
    assert msg and "needs MPI-4 large counts" in msg and "accepted" in msg
    assert resources.preflight(h, 1, (4, 0), available=64 * 2**30) is None
    msg = resources.preflight(h, 2, (4, 0), available=6 * 2**30)
    assert msg and "MemAvailable" in msg and "x 2 processes" in msg and "-mem <= 3.000" in msg
    # a -mem cap below the need skips the size (out-of-mem row) instead: nothing to refuse
    small = run_config.parse_run_args(
        ["-msglen", _write(tmp_path, f"{BIG}\n"), "--maxlog", "32", "Bcast"], world_size=1
    )
    assert resources.preflight(Plan(small, 1), 2, (4, 0), available=2**30) is None
