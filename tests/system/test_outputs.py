"""Results files are never lost to another run or overwritten by surprise (issue "Nothing lost,
nothing hung, nothing silent", item 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from tests.support.mpirun import ENV, commbench, fill, tiny_tmpfs, wait_for_records

SHORT = ["PingPong", "-msglog", "0:2", "-iter", "20"]
LONG = [
    "--suite",
    "nbc",
    "Ibcast",
    "--nbc-cpu-factor",
    "100",
    "-iter",
    "2000,off",
    "-msglog",
    "0:10",
]  # ~20 s


def _start(cwd, *args):
    return subprocess.Popen(
        [sys.executable, "-m", "commbench", "run", "-n", "2", *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, **ENV),
    )


def test_two_runs_on_one_output_the_second_is_refused(tmp_path):
    out = tmp_path / "same.json"
    first = _start(tmp_path, *LONG, "-o", str(out))
    try:
        wait_for_records(out)
        p = commbench("run", "-n", "2", *SHORT, "-o", str(out), cwd=tmp_path)
        assert p.returncode == 2 and "another commbench run is writing it now" in p.stderr, p.stderr
        assert first.poll() is None  # the first run goes on, its file untouched
        assert json.loads(out.read_text())["records"]
    finally:
        first.terminate()
        first.communicate(timeout=60)


def test_default_names_of_runs_started_together_differ(tmp_path):
    procs = [_start(tmp_path, *SHORT) for _ in range(2)]
    errs = [p.communicate(timeout=120)[1] for p in procs]
    assert all(p.returncode == 0 for p in procs), errs
    files = sorted(os.listdir(tmp_path / "results"))
    assert len(files) == 2, files
    for f in files:
        assert json.loads((tmp_path / "results" / f).read_text())["complete"] is True


def test_output_over_a_foreign_file_and_csv_over_output_are_refused(tmp_path):
    notes = tmp_path / "notes.json"
    notes.write_text("my own notes\n")
    p = commbench("run", "-n", "2", *SHORT, "-o", str(notes))
    assert p.returncode == 2 and "exists and is not a commbench results file" in p.stderr
    assert notes.read_text() == "my own notes\n"
    both = tmp_path / "r.json"
    p = commbench("run", "-n", "2", *SHORT, "-o", str(both), "--csv", str(both))
    assert p.returncode == 2 and "is the results file of -o" in p.stderr
    assert not both.exists()
    # a results file of an earlier run may be replaced (a rerun with the same -o)
    assert commbench("run", "-n", "2", *SHORT, "-o", str(both)).returncode == 0
    assert commbench("run", "-n", "2", *SHORT, "-o", str(both)).returncode == 0


def test_refused_run_leaves_no_reserved_name(tmp_path):
    p = commbench("run", "-n", "2", "PingPong", "-map", "3x3", cwd=tmp_path)  # refused by the ranks
    assert p.returncode == 2
    assert not (tmp_path / "results").exists() or not os.listdir(tmp_path / "results")


def test_refused_run_keeps_a_users_empty_output_file(tmp_path):
    """Only a name the launcher reserved is released; an empty file the user named stays."""
    mine = tmp_path / "mine.json"
    mine.write_text("")
    p = commbench("run", "-n", "2", "PingPong", "-map", "3x3", "-o", str(mine))
    assert p.returncode == 2 and mine.exists()


def test_dev_null_means_no_results_file_and_other_devices_are_refused(tmp_path):
    """-o /dev/null is -o - (the file is rewritten in place and replaced at the end, which
    a device cannot be); a FIFO, which would block the writer, is refused before MPI starts."""
    p = commbench(
        "run", "-n", "2", *SHORT, "-o", os.devnull, "--csv", os.devnull, cwd=tmp_path, timeout=120
    )
    assert p.returncode == 0 and "PingPong" in p.stdout, p.stderr[-2000:]
    assert not os.path.isfile(os.devnull) and not (tmp_path / "results").exists()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for opt in ("-o", "--csv"):
        p = commbench("run", "-n", "2", *SHORT, opt, str(fifo), timeout=60)
        assert p.returncode == 2 and "is not a regular file" in p.stderr, p.stderr[-2000:]


def test_a_results_file_that_cannot_be_started_ends_every_rank(tmp_path):
    """Rank 0 fails to write the file's first bytes (a full disk): every rank ends with
    status 2 at once, none left waiting for the watchdog."""
    with tiny_tmpfs(tmp_path / "tiny", "1m") as d:
        out = d / "r.json"
        out.write_text("")  # the user's empty file: writable when checked
        fill(open(d / "filler", "wb", buffering=0))
        t0 = time.time()
        p = commbench("run", "-n", "2", *SHORT, "-o", str(out), "--timeout", "600", timeout=120)
        assert p.returncode == 2 and "cannot write the run's output" in p.stderr, p.stderr[-2000:]
        assert time.time() - t0 < 60 and "Traceback" not in p.stderr
