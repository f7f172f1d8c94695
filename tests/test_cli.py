"""The command line end to end, in real MPI processes."""

import json
import subprocess

import pytest

from tests.mpirun import FAST, commbench, mpiexec, run_json, wait_for_records


@pytest.mark.parametrize("np_", [1, 2])
@pytest.mark.parametrize("argv,needle", [
    (["PingPang"], "did you mean PingPong"),
    (["-npmin", "zero"], "-npmin needs an integer"),
    (["-map", "1x0"], "-map"),
    (["-msglog", "40"], "-msglog"),
])
def test_bad_input_every_rank_exits_2(np_, argv, needle):
    p = mpiexec(np_, "run", *argv, timeout=60)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert needle in p.stderr
    assert p.stderr.count("commbench: error:") == 1  # only rank 0 speaks
    assert "Traceback" not in p.stderr + p.stdout
    assert "Benchmarking" not in p.stdout


def test_map_that_does_not_fit_the_job():
    p = mpiexec(2, "run", "-map", "1x1", "PingPong", timeout=60)
    assert p.returncode == 2 and "-map 1x1: 1*1 = 1 places for 2 processes" in p.stderr


def test_bad_input_through_launcher_starts_nothing():
    p = commbench("run", "-n", "2", "-iter", "1,2,3,4", timeout=60)
    assert p.returncode == 2 and "-iter" in p.stderr and "Traceback" not in p.stderr


def test_help_and_list():
    p = mpiexec(2, "run", "-h", timeout=60)
    assert p.returncode == 0 and "-npmin" in p.stdout and "-off_cache" in p.stdout
    p = commbench("list", timeout=60)
    assert p.returncode == 0 and "PingPongSpecificSource" in p.stdout and "mpi1" in p.stdout
    p = commbench("nonsense", timeout=60)
    assert p.returncode == 2


def test_launcher_and_report_roundtrip(tmp_path):
    out = tmp_path / "r.json"
    p = commbench("run", "-n", "2", *FAST, "-msglog", "3", "PingPong", "Barrier", "-o", str(out), timeout=120)
    assert p.returncode == 0, p.stderr
    again = commbench("report", str(out), timeout=60)
    assert again.returncode == 0
    # The report is the same view over the same records: identical tables.
    start = p.stdout.index("# Benchmarking")
    assert again.stdout[again.stdout.index("# Benchmarking"):] == p.stdout[start:]
    csv = commbench("report", str(out), "--csv", "-", timeout=60)
    assert csv.stdout.splitlines()[0].startswith("family,benchmark,kind,np")
    assert len(csv.stdout.splitlines()) == 1 + 6  # header, PingPong 0,1,2,4,8, Barrier
    bad = commbench("report", str(tmp_path / "missing.json"), timeout=60)
    assert bad.returncode == 2 and "cannot read" in bad.stderr


def test_thread_level_and_mib(tmp_path):
    p, doc = run_json(tmp_path, 2, *FAST, "-msglog", "2", "-thread_level", "multiple", "--mib", "PingPong")
    assert doc["metadata"]["thread_level"] == "MPI_THREAD_MULTIPLE"
    assert "# MPI Thread Environment: MPI_THREAD_MULTIPLE" in p.stdout
    rec = doc["records"][-1]
    row = [line for line in p.stdout.splitlines() if line.startswith("            4 ")][0].split()
    assert row[3] == f"{rec['values']['bytes_per_sec'] / 2**20:.2f}"


def test_out_of_memory_and_time_budget_rows(tmp_path):
    p, doc = run_json(tmp_path, 2, "-iter", "10", "-msglog", "20:22", "-mem", "0.005", "PingPong")
    assert "out-of-mem.; needed X=" in p.stdout
    statuses = [r["status"] for r in doc["records"]]
    assert statuses[:2] == ["ok", "ok"] and "out-of-mem" in statuses
    # A budget of one size: -time 0.01 with 1 size step allows only the first sizes.
    p, doc = run_json(tmp_path, 2, "-msglog", "1", "-time", "0.0001", "-iter", "1000", "PingPong")
    assert any(r["status"] == "time-out" for r in doc["records"]) or all(r["status"] == "ok" for r in doc["records"])


def test_interrupted_results_file_is_valid_json(tmp_path):
    out = tmp_path / "part.json"
    proc = subprocess.Popen(["python3", "-m", "commbench", "run", "-n", "2", "-msglog", "22", "-time", "5",
                             "PingPong", "-o", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    wait_for_records(out)  # (the header names "bytes" in its units: not a sign of a record)
    proc.kill()
    subprocess.run(["pkill", "-f", str(out)])
    proc.wait(timeout=30)
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and len(doc["records"]) >= 1
