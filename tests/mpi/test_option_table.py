"""`commbench list --options`'s table says what a run refuses: a "—" cell is refused by a real
run, a cell with users is accepted by the parser. That docs/options.md quotes the generated
table, and that no option takes NaN or an infinity: tests/unit/test_option_table.py."""

from __future__ import annotations

from commbench.commands.listing import option_table
from tests.support.mpirun import commbench


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
