"""docs/options.md quotes `commbench list --options`, the table generated from the same
declarations the refusals come from (commbench.suites.option_use): they must not drift. And one
rule for every number an option of any command takes: NaN and the infinities are refused.
Both in the pytest process; that a "—" cell is refused by a real run is
tests/mpi/test_option_table.py."""

from __future__ import annotations

import math
import re
from pathlib import Path

from commbench.commands.listing import option_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "options.md"


def test_the_docs_table_is_the_generated_one():
    text = DOC.read_text()
    block = re.search(
        r"<!-- generated: commbench list --options -->\n(.*?)\n<!-- end generated -->", text, re.S
    )
    assert block, "docs/options.md lost its generated block"
    assert block.group(1).splitlines() == option_table(), (
        "docs/options.md is stale: regenerate its block with `commbench list --options`"
    )


NOT_FINITE = ["nan", "NaN", "inf", "-inf", "Infinity", "nan%", "inf%", "1e400", "nan,10", "3:nan"]


FINITE = ["0.5", "1.5", "2", "50", "10%", "1e-3", "0.5,10", "3:0.5"]


def _floats(v) -> list[float]:
    if isinstance(v, float):
        return [v]
    if isinstance(v, tuple | list):
        return [f for x in v for f in _floats(x)]
    return []


def _number_parsers():
    """Every option of every command whose value is a number: run's (every family's), the
    gates' (compare, --baseline, store trend's --threshold), fit's."""
    import argparse

    from commbench import run_options, suites
    from commbench.commands import compare, fit

    opts = [*run_options.OPTIONS, *(o for f in suites.families() for o in f.options)]
    found = {o.names[0]: o.parse for o in opts if o.parse is not None}
    found.update({name: parse for name, (_, parse) in compare.VALUED.items()})
    p = argparse.ArgumentParser()
    fit.add_fit_options(p)
    found.update({a.option_strings[0]: a.type for a in p._actions if callable(a.type)})
    for name, parse in found.items():
        takes = []
        for s in FINITE:
            try:
                takes += _floats(parse(s))
            except Exception:  # noqa: BLE001 - any refusal
                pass
        if takes:
            yield name, parse


def test_no_option_of_any_command_takes_nan_or_an_infinity():
    """One rule for every number an option takes: NaN and the infinities are refused when the
    command line is read (--gpcnet-threshold nan was taken, and the run crashed at its end)."""
    parsers = dict(_number_parsers())
    assert {"--gpcnet-threshold", "--threshold", "--precision", "--alpha"} <= set(parsers)
    taken = {}
    for name, parse in parsers.items():
        for s in NOT_FINITE:
            try:
                v = parse(s)
            except Exception:  # noqa: BLE001 - refused: what the rule asks
                continue
            if any(not math.isfinite(f) for f in _floats(v)):
                taken.setdefault(name, []).append(s)
    assert not taken, taken
