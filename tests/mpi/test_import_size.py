"""`commbench import` of large logs, and where it writes (issue 31 items 3 and 9).

A log is read as a stream and its records go to the results file as they are
read, so memory stays flat whatever the log's size; an import whose results
file would pass the cap on a results file (resources.SAMPLES_FILE_LIMIT, the
cap of `run --samples`) is refused before any log is read, unless --force.
The large logs are the tables of a real IMB-MPI1 output repeated. How -o is
checked (as a run's -o) is tests/unit/test_import_size.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from commbench.resources import SAMPLES_FILE_LIMIT
from tests.support.mpirun import commbench

IMB = Path(__file__).parents[1] / "data" / "imb2021" / "mpi1-np2.txt"
FINALIZE = "# All processes entering MPI_Finalize\n"


def imb_log(path: Path, tables: int, bad_at_end: bool = False) -> tuple[Path, int]:
    """IMB-MPI1's header, its tables `tables` times over, the closing line; (path, rows)."""
    lines = IMB.read_text().splitlines(keepends=True)
    start = next(
        i for i, ln in enumerate(lines) if ln.startswith("#---") and "Benchmarking" in lines[i + 1]
    )
    end = next(i for i, ln in enumerate(lines) if ln.startswith(FINALIZE.strip()))
    body = "".join(lines[start:end])
    rows = sum(1 for ln in lines[start:end] if ln.strip() and ln.split()[0].isdigit())
    with open(path, "w") as f:
        f.write("".join(lines[:start]))
        for _ in range(tables):
            f.write(body)
        if bad_at_end:
            f.write(
                "            8           20         9.01         0.8\n"
            )  # not IMB's %.2f: would stop a read
        f.write("\n" + FINALIZE)
    return path, rows * tables


def test_a_log_past_the_cap_is_refused_before_it_is_read(tmp_path):
    """The cap of 256 MB: a log whose records would pass it is refused at once (its bad last
    row, which a read would report, is never reached), nothing written; --force reads it."""
    per_table = imb_log(tmp_path / "probe.txt", 1)[1]
    log, rows = imb_log(
        tmp_path / "big.txt", SAMPLES_FILE_LIMIT // 400 // per_table + 1, bad_at_end=True
    )
    assert 25e6 < log.stat().st_size < 100e6
    out = tmp_path / "out" / "big.json"
    t0 = time.monotonic()
    p = commbench("import", str(log), "-o", str(out))
    took = time.monotonic() - t0
    assert p.returncode == 2 and "Traceback" not in p.stderr
    said = re.search(
        r"commbench import: error: the logs hold up to ([\d,]+) rows: the results file would be "
        r"about ([\d,]+) MB",
        p.stderr,
    )
    assert said and rows < int(said[1].replace(",", "")) < 1.02 * rows
    assert int(said[2].replace(",", "")) > SAMPLES_FILE_LIMIT / 1e6
    assert (
        f"past the cap of {SAMPLES_FILE_LIMIT / 1e6:.0f} MB on a results file (the cap of "
        "commbench run --samples); nothing was read or written (accepted: logs that fit, e.g. "
        "split into several imports, or --force"
    ) in p.stderr
    assert "not a number as" not in p.stderr, "refused before reading: the bad row is never reached"
    assert took < 10, took
    assert sorted(os.listdir(tmp_path)) == ["big.txt", "out", "probe.txt"] and not os.listdir(
        tmp_path / "out"
    )
    # --force lifts the cap: the log is read, here up to a bad row near its start
    text = log.read_text()
    first = text.index("         0.44\n")
    log.write_text(text[:first] + "         0.4 \n" + text[first + len("         0.44\n") :])
    n = text[:first].count("\n") + 1
    p = commbench("import", str(log), "-o", str(out), "--force")
    assert (
        p.returncode == 2
        and f"{log}:{n}: Mbytes/sec '0.4' is not a number as IMB-MPI1 prints it" in p.stderr
    )
    assert json.loads(out.read_text())["summary"]["records"] == 3 and os.listdir(
        tmp_path / "out"
    ) == ["big.json"]


PEAK = """
import resource, subprocess, sys
subprocess.run([sys.executable, "-m", "commbench", "import", *sys.argv[1:]], check=True, capture_output=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""  # noqa: E501


def peak_kib(*args: str) -> int:
    """The peak resident memory of one `commbench import` (KiB)."""
    out = subprocess.run(
        [sys.executable, "-c", PEAK, *args], capture_output=True, text=True, check=True
    )
    return int(out.stdout)


def test_memory_does_not_grow_with_the_log(tmp_path):
    """A log of 6 MB (some 50,000 records, about 20 MB of records in the file) takes no more
    memory than one of a few kB: the records are not kept (it took 150 MB more before)."""
    small, _ = imb_log(tmp_path / "small.txt", 1)
    big, rows = imb_log(tmp_path / "big.txt", 640)
    assert big.stat().st_size > 5e6 and rows > 45_000
    base = peak_kib(str(small), "-o", str(tmp_path / "small.json"))
    peak = peak_kib(str(big), "-o", str(tmp_path / "big.json"))
    doc = json.loads((tmp_path / "big.json").read_text())
    assert doc["summary"]["records"] == len(doc["records"]) == rows and doc["complete"] is True
    (
        tmp_path / "big.json"
    ).unlink()  # (the session's schema check of every file would take half a minute)
    assert peak - base < 30 * 1024, (base, peak)


def test_sigterm_while_the_file_is_written_leaves_no_tmp(tmp_path):
    """Killed (SIGTERM) while OUT.tmp is being written: OUT.tmp is removed, OUT not made."""
    log, _ = imb_log(tmp_path / "big.txt", 640)
    out = tmp_path / "big.json"
    tmp = Path(f"{out}.tmp")
    p = subprocess.Popen(
        [sys.executable, "-m", "commbench", "import", str(log), "-o", str(out)],
        stderr=subprocess.PIPE,
        text=True,
    )
    while p.poll() is None and not tmp.exists():
        time.sleep(0.001)
    assert tmp.exists(), "the import ended before it wrote OUT.tmp"
    p.send_signal(15)
    assert p.wait(timeout=60) == 143 and "Traceback" not in p.stderr.read()
    assert not tmp.exists() and not out.exists()
