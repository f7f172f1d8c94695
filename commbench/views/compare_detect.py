"""What the tests of `commbench compare` could see (no MPI): the smallest slowdown each row's
test could call (ComparedRow.detectable: either gate's at 90 % power), over the rows and per
table, and how the samples were taken (docs/statistics.md).
"""

from __future__ import annotations

from dataclasses import replace

from commbench.models import twosample
from commbench.views.compare import CONSECUTIVE, ComparedRow

BLIND = 2.0  # a row whose test cannot call a slowdown of this ratio says so
MOST_TABLES = 40  # detectable lines, one a table


def _table(r: ComparedRow) -> str:
    return replace(r, key=(*r.key[:3], None, r.key[4])).label()


def detectability(rows: list[ComparedRow]) -> dict | None:
    """What the rows' tests could call: the smallest slowdown per row (ComparedRow.detectable;
    power: the probability that a slowdown of that size is called, 0.9 in both gates), its
    median and largest over the rows and per table, and
    the rows that could not call even BLIND x; None where no row has one."""
    have = [r for r in rows if r.tested and r.detectable is not None]
    if not have:
        return None
    d = sorted(r.detectable for r in have)
    blind = [r.label() for r in have if r.detectable >= BLIND]
    tables: dict[str, list[float]] = {}
    for r in have:
        tables.setdefault(_table(r), []).append(r.detectable)
    return {
        "median": d[len(d) // 2],
        "largest": d[-1],
        "power": twosample.POWER,  # the store's test (models.betweenruns) at the same power
        "versus": "base" if all(r.versus == "base" for r in have) else "old",
        "blind": len(blind),
        "blind_rows": blind[:20],
        "tables": [
            {"table": t, "rows": len(v), "median": sorted(v)[len(v) // 2], "largest": max(v)}
            for t, v in tables.items()
        ],
    }


def detect_lines(rows: list[ComparedRow]) -> list[str]:
    """The detectable ratios in text: the median and worst row, then a line per table."""
    got = detectability(rows)
    if got is None:
        return []
    what = (
        "the smallest slowdown each row's test calls 9 times in 10 (at alpha, before "
        "Benjamini-Hochberg)"
    )
    line = (
        f"# detectable: {what} is {got['median']:.2f}x on the median row, "
        f"{got['largest']:.2f}x on the worst"
    )
    if got["blind"]:
        line += (
            f"; {got['blind']} rows cannot detect less than {BLIND:g}x here (their "
            f"{'baseline runs' if got['versus'] == 'base' else 'samples'} spread too widely: "
            "no verdict below that, which is not a pass)"
        )
    tables = got["tables"]
    out = [line] + [
        f"#   {t['table']}: median row {t['median']:.2f}x, worst {t['largest']:.2f}x "
        f"({t['rows']} rows)"
        for t in tables[:MOST_TABLES]
    ]
    return out + (
        [f"#   … and {len(tables) - MOST_TABLES} tables more"] if len(tables) > MOST_TABLES else []
    )


def sample_notes(rows: list[ComparedRow]) -> list[str]:
    """How the two-file test took the samples: rows widened for autocorrelation, and runs
    whose samples were taken one after another."""
    tested = [r for r in rows if r.tested and r.n_eff]
    wide = [r for r in tested if r.n_eff[0] < r.k_old or r.n_eff[1] < r.k_new]
    out = []
    if wide:
        out.append(
            f"# note: {len(wide)} of {len(tested)} tested rows have samples correlated from one "
            "to the next (lag-1 rho above 1.645/sqrt(K) in old or new): their tests count "
            "K(1 - rho)/(1 + rho) independent samples instead of K, and are wider for it"
        )
    sides = [
        side
        for i, side in enumerate(("old", "new"))
        if any(r.taken and r.taken[i] == CONSECUTIVE for r in rows)
    ]
    if sides:
        out.append(
            f"# note: {' and '.join(sides)} took each row's samples one after another, not in "
            "rounds spread over the run: a burst of another job moves consecutive samples "
            "together; the autocorrelation check widens the rows where it shows, but a burst "
            "that covered a whole row looks like a slower row"
        )
    return out
