"""The fit text `commbench report` prints from a results file's stored entry is the text of
the Fit itself (JSON and all). The report against a real run on 2 ranks is
tests/mpi/test_report_fits.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

from commbench.models import hockney
from commbench.views import fit_text

SIZES = np.array([0] + [2.0**k for k in range(16)])


def _fits() -> list[tuple[hockney.Fit, int]]:
    rng = np.random.default_rng(7)
    noisy = (SIZES + 2000) / 5000 * (1 + rng.normal(0, 0.03, SIZES.size))
    switch = np.where(SIZES <= 1024, (SIZES + 500) / 2000, (SIZES + 8000) / 6000)
    falling = 3.0 - SIZES / SIZES.max()  # time does not grow: warnings, r_inf < 0
    label = {"benchmark": "PingPong", "np": 2, "mode": "", "groups": 1}
    return [
        (hockney.fit(SIZES, noisy, auto=True, label=label), 10**6),
        (hockney.fit(SIZES, switch, auto=True, turnover=2.0, label=label), 2**20),
        (hockney.fit(SIZES, switch, breakpoints=[1024], label=label), 10**6),
        (hockney.fit(SIZES[:2], noisy[:2], label=label), 10**6),  # 2 points: unbounded intervals
        (hockney.fit(SIZES, falling, weighting="uniform", label=label), 10**6),
        (hockney.fit(SIZES, noisy, model="linear", breakpoints=[64], label=label), 10**6),
        (hockney.fit(SIZES[:4], falling[:4], model="linear", breakpoints=[1], label=label), 10**6),
        (
            hockney.fit(SIZES[:6], np.full(6, 2.0), label=label),
            10**6,
        ),  # flat: huge r_inf, open intervals
    ]


@pytest.mark.parametrize("case", range(8))
def test_stored_entry_prints_the_fit_text(case):
    fit, mb_unit = _fits()[case]
    stored = json.loads(json.dumps(fit.to_dict(), allow_nan=False))  # what the results file holds
    assert fit_text.entry_lines(stored, "PingPong, 2 processes", mb_unit) == fit_text.format_fit(
        fit, "PingPong, 2 processes", mb_unit
    )


def test_not_possible_entry():
    entry = {
        "benchmark": "PingPong",
        "np": 2,
        "mode": "",
        "groups": 1,
        "model": "hockney",
        "error": "a line needs at least 2 distinct sizes, got 1",
    }
    assert fit_text.entry_lines(entry, "PingPong, 2 processes") == [
        (
            "# Hockney fit of PingPong, 2 processes: not possible: a line needs at least 2 "
            "distinct sizes, got 1"
        )
    ]


def test_no_fits_section_no_sink():
    assert fit_text.report_sink({"format": "commbench-results"}) is None
