"""IMB's overlap percentage from known times (spec §7.7, A5), not from the function that
computes it: 100 * max(0, min(1, (t_pure + t_CPU - t_ovrl) / min(t_pure, t_CPU))), taken on
the rank with the largest t_ovrl, whose three times the row reports (issue 47 item 6)."""

from __future__ import annotations

import pytest

from commbench import records


@pytest.mark.parametrize(
    "t_ovrl,t_pure,t_cpu,percent",
    [
        (10.0, 10.0, 10.0, 100.0),  # perfect: t_ovrl = max(t_pure, t_CPU)
        (20.0, 10.0, 10.0, 0.0),  # none: t_ovrl = t_pure + t_CPU
        (15.0, 10.0, 10.0, 50.0),
        (12.0, 4.0, 10.0, 50.0),  # (4 + 10 - 12) / min(4, 10)
        (13.0, 10.0, 4.0, 25.0),  # (10 + 4 - 13) / 4
        (25.0, 10.0, 10.0, 0.0),  # slower than both in turn: clamped at 0
        (8.0, 10.0, 10.0, 100.0),  # faster than either alone: clamped at 100
        (5.0, 0.0, 3.0, 0.0),  # no communication time to hide: 0, not a division by zero
    ],
)
def test_known_times_give_imb_s_percentage(t_ovrl, t_pure, t_cpu, percent):
    assert records.overlap_percent(t_ovrl * 1e-6, t_pure * 1e-6, t_cpu * 1e-6) == pytest.approx(
        percent
    )


def test_the_row_takes_the_rank_with_the_largest_overlapped_time():
    """Rank 1 has the largest t_ovrl: its own three times make the row, not each column's
    maximum over the ranks (which would give (12 + 9 - 14) / 9 = 77.8 %)."""
    times = {
        "t_ovrl": [10e-6, 14e-6, 13e-6],
        "t_pure": [12e-6, 8e-6, 7e-6],
        "t_cpu": [9e-6, 8e-6, 9e-6],
    }
    got = records.reduce_times(
        records.Kind.OVERLAP, ["t_ovrl", "t_pure", "t_cpu"], times, [0, 1, 2], 8, 1.0
    )
    assert got["rank"] == 1
    assert (got["t_ovrl"], got["t_pure"], got["t_cpu"]) == pytest.approx((14.0, 8.0, 8.0))
    assert got["overlap"] == pytest.approx(100 * (8 + 8 - 14) / 8)  # 25 %
