"""One rule for every file commbench writes, and a status of its own for an aborted job.

- Missing directories are made by every option that names a file to write (run's -o and
  --csv, compare --json, report --csv and --html, import -o, plot -o), as run always did.
- An MPI job that aborts (MPI_Abort(1), as an MPI library's fatal error ends a job) before
  rank 0 finished: mpiexec says 1, the check failures' status; the launcher tells the two
  apart by the results file (still provisional) and exits 4, and the file says how it ended.
- `commbench report` takes --csv before or after the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.mpirun import commbench, mpiexec

DATA = Path(__file__).parents[1] / "data"


@pytest.fixture(scope="module")
def sampled(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rules") / "r.json"
    p = mpiexec(
        2, "run", "PingPong", "-msglog", "0:2", "-iter", "50", "--samples", "6", "-o", str(out)
    )
    assert p.returncode == 0, p.stderr[-2000:]
    return out


def test_every_output_option_makes_missing_directories(sampled, tmp_path):
    r = str(sampled)
    cases = {
        "run -o/--csv": (
            [
                "run",
                "-n",
                "2",
                "PingPong",
                "-msglog",
                "0:1",
                "-iter",
                "10",
                "-o",
                "{d}/run.json",
                "--csv",
                "{d}/run.csv",
            ],
            ["run.json", "run.csv"],
        ),
        # -iter 50 spreads the samples: --allow-noisy, or a pass may be "too noisy" (exit 2)
        "compare --json": (["compare", r, r, "--json", "{d}/v.json", "--allow-noisy"], ["v.json"]),
        "report --csv": (["report", r, "--csv", "{d}/r.csv"], ["r.csv"]),
        "report --html": (["report", "--html", "{d}/r.html", r], ["r.html"]),
        "import -o": (
            ["import", str(DATA / "import" / "imb-mpi1-pingpong-np2.txt"), "-o", "{d}/i.json"],
            ["i.json"],
        ),
        "plot -o": (["plot", r, "-o", "{d}/p.png"], ["p.png"]),
    }
    for name, (argv, made) in cases.items():
        d = tmp_path / name.replace(" ", "_").replace("/", "_") / "not" / "yet"
        p = commbench(*(a.format(d=d) for a in argv))
        assert p.returncode == 0, (name, p.stderr[-1500:])
        for f in made:
            assert (d / f).stat().st_size > 0, (name, f)


def test_an_aborted_job_has_its_own_status_and_says_so_in_the_file(tmp_path):
    out = tmp_path / "ab.json"
    p = commbench(
        "run",
        "-n",
        "2",
        "PingPong",
        "Sendrecv",
        "-msglog",
        "0:4",
        "-iter",
        "20",
        "-o",
        str(out),
        env={"COMMBENCH_FAULT_ABORT": "3"},
    )
    assert p.returncode == 4, p.stderr[-2000:]
    assert "the MPI job was aborted (mpiexec's status 1 from an unfinished run" in p.stderr
    doc = json.loads(out.read_text())
    assert (
        doc["complete"] is False and 3 <= len(doc["records"]) < 10
    )  # what was measured before the abort
    assert "aborted" in doc["summary"]["interrupted"] and "provisional" not in doc["summary"]
    # a finished run whose check failed keeps status 1: the abort is told from it by the file
    chk = tmp_path / "chk.json"
    p = commbench(
        "run",
        "-n",
        "2",
        "PingPong",
        "-msglog",
        "0:2",
        "-iter",
        "20",
        "-check",
        "-o",
        str(chk),
        env={"COMMBENCH_FAULT_CORRUPT": "1"},
    )
    assert p.returncode == 1 and json.loads(chk.read_text())["complete"] is True


def test_report_takes_csv_before_or_after_the_file(sampled, tmp_path):
    after = commbench("report", str(sampled), "--csv", str(tmp_path / "a.csv"))
    before = commbench("report", "--csv", str(tmp_path / "b.csv"), str(sampled))
    assert after.returncode == before.returncode == 0, before.stderr
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()
    stdout = commbench("report", "--csv", "-", str(sampled))
    assert stdout.returncode == 0 and stdout.stdout == (tmp_path / "a.csv").read_text()
    for argv, says in (
        (["--csv", str(sampled)], "did --csv take the results file as its OUT?"),
        ([str(sampled), str(sampled)], "report needs one results file, got 2"),
        (["-x", str(sampled)], "unknown option '-x' for report"),
    ):
        p = commbench("report", *argv)
        assert p.returncode == 2 and says in p.stderr, (argv, p.stderr)
