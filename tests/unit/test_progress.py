"""The progress line's schedule (commbench.views.progress), without MPI: it counts the sizes of
the harness's plan, bounds the rest by the time budget, and says sizes and durations as the
line shows them. The line under a real pseudo-terminal, in real MPI runs, is
tests/mpi/test_progress.py."""

from __future__ import annotations

from commbench import run_config
from commbench.harness.plan import Plan
from commbench.views.progress import Schedule, duration, size_text

ROWS = 8 + 6  # PingPong 0, 1 … 64; Allreduce 0, 4 … 64 (float elements)


def test_the_schedule_counts_sizes_and_bounds_the_rest_by_the_time_budget():
    cfg = run_config.parse_run_args(
        ["PingPong", "Allreduce", "-msglog", "0:6", "-time", "2", "-o", "-"], world_size=2
    )
    s = Schedule(Plan(cfg, 2))
    assert s.total == ROWS and [w[:3] for w in s.sweeps] == [
        ("PingPong", 2, ""),
        ("Allreduce", 2, ""),
    ]
    full = s.left()
    s.advance({"benchmark": "PingPong", "np": 2, "mode": "", "bytes": 0})
    assert s.done == 0 and s.left() <= full
    for x in (1, 2, 4):
        s.advance({"benchmark": "PingPong", "np": 2, "mode": "", "bytes": x})
    assert s.done == 3
    # the time budget cut PingPong: its sizes count as done, and the bound is Allreduce's alone
    s.advance({"benchmark": "Allreduce", "np": 2, "mode": "", "bytes": 0})
    assert s.done == 8 and s.left() <= 6 * 2
    assert (size_text(0), size_text(4096), size_text(3 << 20), duration(75), duration(3700)) == (
        "0 B",
        "4 KiB",
        "3 MiB",
        "1:15",
        "1:01:40",
    )


def test_samples_in_rounds_count_every_visit():
    """--samples 3 in rounds: the bar counts 3 visits of every row, the later rounds' visits in
    any order (harness.rounds), and it never passes the total."""
    cfg = run_config.parse_run_args(
        ["PingPong", "Allreduce", "-msglog", "0:6", "--samples", "3", "-o", "-"], world_size=2
    )
    s = Schedule(Plan(cfg, 2))
    assert s.total == 3 * ROWS
    for x in (0, 1, 2, 4, 8, 16, 32, 64):
        s.advance({"benchmark": "PingPong", "np": 2, "mode": "", "bytes": x})
    for x in (0, 4, 8, 16, 32, 64):
        s.advance({"benchmark": "Allreduce", "np": 2, "mode": "", "bytes": x})
    assert s.done == ROWS - 1  # the last row is being measured
    s.advance({"benchmark": "Allreduce", "np": 2, "mode": "", "bytes": 16, "round": 2})
    assert s.done == ROWS and s.left() >= 0
    for _ in range(2 * ROWS + 5):
        s.advance({"benchmark": "PingPong", "np": 2, "mode": "", "bytes": 0, "round": 3})
    assert s.done == s.total
    consecutive = run_config.parse_run_args(
        ["PingPong", "-msglog", "0:6", "--samples", "3", "--consecutive-samples", "-o", "-"],
        world_size=2,
    )
    assert Schedule(Plan(consecutive, 2)).total == 8
