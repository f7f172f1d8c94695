"""docs/options.md quotes `commbench list --options`, the table generated from the same
declarations the refusals come from (commbench.suites.uses): they must not drift."""

from __future__ import annotations

import re
from pathlib import Path

from commbench.cli import option_table
from tests.mpirun import commbench

DOC = Path(__file__).resolve().parents[1] / "docs" / "options.md"


def test_the_docs_table_is_the_generated_one():
    text = DOC.read_text()
    block = re.search(
        r"<!-- generated: commbench list --options -->\n(.*?)\n<!-- end generated -->", text, re.S
    )
    assert block, "docs/options.md lost its generated block"
    assert block.group(1).splitlines() == option_table(), (
        "docs/options.md is stale: regenerate its block with `commbench list --options`"
    )


def test_the_table_says_what_a_run_refuses():
    """A "—" cell is a refusal of a real run; a cell with users is accepted by the parser."""
    lines = option_table()
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = {
        c[0].strip(" `"): [x.strip() for x in c[1:]]
        for c in (
            [x for x in line.strip("|").split("|")] for line in lines[2:] if line.startswith("| `")
        )
    }
    osu = head.index("osu") - 1
    assert rows["--samples"][osu] == "all" and rows["--shuffle"][osu] == "all"
    assert rows["-multi"][osu] == "—"
    p = commbench("run", "-n", "2", "--suite", "osu", "latency", "-multi", "0", "-o", "-")
    assert p.returncode == 2 and "-multi: the osu family does not use it" in p.stderr
