"""Where `commbench import` writes (issue 31 item 9), and a line longer than any the tools
print: -o is checked as a run's -o: missing directories are made, a directory or a file that
is not a results file is refused, - or /dev/null writes nothing. The large logs, imported by
a process of their own, are tests/mpi/test_import_size.py."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from commbench.commands import importing as command

IMB = Path(__file__).parents[1] / "data" / "imb2021" / "mpi1-np2.txt"
FINALIZE = "# All processes entering MPI_Finalize\n"


def test_o_makes_missing_directories_as_run_does(tmp_path, capsys):
    out = tmp_path / "a" / "b" / "imb.json"
    assert command.main([str(IMB), "-o", str(out)]) == 0
    assert json.loads(out.read_text())["complete"] is True
    assert command.main([str(IMB), "-o", str(out)]) == 0, "a results file may be written again"


@pytest.mark.parametrize("what", ["directory", "other file", "under a file"])
def test_o_refuses_what_a_run_refuses(tmp_path, capsys, what):
    target = tmp_path / "target"
    if what == "directory":
        target.mkdir()
    else:
        target.write_text("my notes\n")
    out = target / "x.json" if what == "under a file" else target
    assert command.main([str(IMB), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    said = {
        "directory": "is a directory",
        "other file": "exists and is not a commbench results file",
        "under a file": "cannot create directory",
    }[what]
    assert f"commbench import: error: -o {str(out)!r}: {said}" in err
    assert "(accepted: -o <file in a writable directory> or -o - for none" in err
    assert what == "directory" or target.read_text() == "my notes\n", "left untouched"


@pytest.mark.parametrize("out", ["-", os.devnull])
def test_o_dash_or_dev_null_checks_the_logs_and_writes_nothing(tmp_path, capsys, out):
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert command.main([str(IMB), "-o", out]) == 0
        assert os.listdir(tmp_path) == []
    finally:
        os.chdir(cwd)
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode), "/dev/null is still the device"
    assert f"written to no file (-o {out})" in capsys.readouterr().err


def test_a_line_longer_than_any_the_tools_print(tmp_path, capsys):
    log = tmp_path / "long.txt"
    log.write_text(IMB.read_text()[:600] + "x" * (2 << 20) + "\n" + FINALIZE)
    assert command.main([str(log), "-o", str(tmp_path / "long.json")]) == 2
    assert (
        "is longer than 1048576 bytes: not the text of IMB, OSU or nccl-tests"
        in capsys.readouterr().err
    )
