"""The readers on a file that holds two logs of one run, in this process (commands.main): compare,
report, report --html, fit and plot refuse it alike, naming the repeated rows. The readers on
files broken field by field, from a real run's file, are tests/mpi/test_readers.py."""

from __future__ import annotations

from pathlib import Path

from commbench import commands
from tests.support.in_process import call as _call

DATA = Path(__file__).parents[1] / "data"


def test_two_logs_of_one_run_in_one_file_are_refused_by_every_reader(tmp_path, capsys):
    """compare refused such a file while fit and report --html merged its rows: one rule now."""
    log = DATA / "import" / "imb-mpi1-pingpong-np2.txt"
    twice = tmp_path / "twice.json"
    assert commands.main(["import", str(log), str(log), "-o", str(twice)]) in (0, 2)
    capsys.readouterr()
    if not twice.exists():  # the importer refused it already: that is the same rule, earlier
        return
    for argv in (
        ["compare", str(twice), str(twice)],
        ["report", str(twice)],
        ["fit", str(twice)],
        ["report", "--html", str(tmp_path / "r.html"), str(twice)],
        ["plot", str(twice), "-o", str(tmp_path / "p.png")],
    ):
        rc, err = _call(capsys, *argv)
        assert rc == 2 and "6 rows repeat another row of the file (PingPong np=2 bytes=0)" in err, (
            argv,
            err,
        )
