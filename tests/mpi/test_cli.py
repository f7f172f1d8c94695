"""The command line end to end, in real MPI processes."""

import glob
import json
import os
import subprocess
import sys
import tempfile

import pytest

from tests.support.mpirun import FAST, commbench, mpiexec, run_json, wait_for_records


@pytest.mark.parametrize("np_", [1, 2])
@pytest.mark.parametrize(
    "argv,needle",
    [
        (["PingPang"], "did you mean PingPong"),
        (["-npmin", "zero"], "-npmin needs an integer"),
        (["-map", "1x0"], "-map"),
        (["-msglog", "40"], "-msglog"),
    ],
)
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
    p = commbench(
        "run", "-n", "2", *FAST, "-msglog", "3", "PingPong", "Barrier", "-o", str(out), timeout=120
    )
    assert p.returncode == 0, p.stderr
    again = commbench("report", str(out), timeout=60)
    assert again.returncode == 0
    # The report is the same view over the same records: identical tables.
    start = p.stdout.index("# Benchmarking")
    assert again.stdout[again.stdout.index("# Benchmarking") :] == p.stdout[start:]
    csv = commbench("report", str(out), "--csv", "-", timeout=60)
    assert csv.stdout.splitlines()[0].startswith("family,benchmark,kind,np")
    assert len(csv.stdout.splitlines()) == 1 + 6  # header, PingPong 0,1,2,4,8, Barrier
    bad = commbench("report", str(tmp_path / "missing.json"), timeout=60)
    assert bad.returncode == 2 and "cannot read" in bad.stderr


def test_thread_level_and_mib(tmp_path):
    p, doc = run_json(
        tmp_path, 2, *FAST, "-msglog", "2", "-thread_level", "multiple", "--mib", "PingPong"
    )
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
    assert any(r["status"] == "time-out" for r in doc["records"]) or all(
        r["status"] == "ok" for r in doc["records"]
    )


def test_interrupted_results_file_is_valid_json(tmp_path):
    out = tmp_path / "part.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "commbench",
            "run",
            "-n",
            "2",
            "-msglog",
            "22",
            "-time",
            "5",
            "PingPong",
            "-o",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_records(out)  # (the header names "bytes" in its units: not a sign of a record)
    proc.kill()
    subprocess.run(["pkill", "-f", str(out)])
    proc.wait(timeout=30)
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and len(doc["records"]) >= 1
    # the ranks, ended after the launcher (a zombie until proc.wait), removed its launch token
    assert not glob.glob(os.path.join(tempfile.gettempdir(), f"commbench-launch-{proc.pid}-*"))


# ------------------------------------------------ the command line's own mistakes (issue 31 item 9)
# (the parser's suggestions and options given twice, in process: tests/unit/test_cli.py)


def _options_file(path, argv):
    path.write_text(json.dumps({"format": "commbench-options 1", "argv": argv}))
    return str(path)


def test_load_twice_and_launch_options_in_a_file(tmp_path):
    a = _options_file(tmp_path / "a.json", ["-msglog", "2", "PingPong"])
    b = _options_file(tmp_path / "b.json", ["-msglog", "3", "PingPong"])
    p = commbench("run", "-n", "2", "-load", a, "-load", b, "-o", "-", timeout=60)
    assert p.returncode == 2 and "-load given twice" in p.stderr and "Traceback" not in p.stderr, (
        p.stderr
    )
    for opt, val, said in (
        ("-n", "64", "-n"),
        ("--np", "8", "-n"),
        ("--mpiexec", "/usr/bin/mpiexec", "--mpiexec"),
    ):
        f = _options_file(tmp_path / "n.json", [*FAST, opt, val, "PingPong"])
        for p in (
            mpiexec(2, "run", "-load", f, "-o", "-", timeout=60),
            commbench("run", "-n", "2", "-load", f, "-o", "-", timeout=60),
        ):
            assert p.returncode == 2 and p.stdout == "", p.stdout + p.stderr
            lines = p.stderr.strip().splitlines()
            assert (
                len(lines) == 1
                and f"its argv has {said} {val}" in lines[0]
                and "accepted:" in lines[0]
            ), p.stderr


def test_thread_level_below_multiple_is_named_as_such():
    """Not as a problem of names or process counts (OSU's latency_mt said "name it on
    the command line")."""
    for argv in (
        ["--suite", "osu", "-thread_level", "single", "latency_mt"],
        ["--suite", "osu", "-thread_level", "funneled", "-include", "latency_mt", "latency"],
        ["--suite", "mt", "-thread_level", "serialized", "BarrierMT"],
    ):
        p = commbench("run", "-n", "2", *argv, "-o", "-", timeout=60)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1, p.stderr
        assert (
            f"needs MPI_THREAD_MULTIPLE, but -thread_level {argv[3]} was given" in lines[0]
            or f"need MPI_THREAD_MULTIPLE, but -thread_level {argv[3]} was given" in lines[0]
        ), lines[0]
        assert "name it" not in lines[0] and "accepted: -thread_level multiple" in lines[0]


def test_files_count_for_the_thread_level(tmp_path):
    """A job started by mpiexec asks MPI for MPI_THREAD_MULTIPLE when the benchmarks that
    need it come from a -load or an -input file, not only from the command line."""
    f = _options_file(
        tmp_path / "mt.json",
        [
            "--suite",
            "mt",
            "--mt-threads",
            "2",
            "-repeat",
            "2",
            "-warmup",
            "0",
            "-count",
            "1",
            "PingPongMT",
        ],
    )
    p = mpiexec(2, "run", "-load", f, "-o", "-", timeout=120)
    assert p.returncode == 0 and "MPI_THREAD_MULTIPLE" in p.stdout, p.stderr[-2000:]
    (tmp_path / "names").write_text("latency_mt\n")
    p = mpiexec(
        2,
        "run",
        "--suite",
        "osu",
        "-input",
        str(tmp_path / "names"),
        "-m",
        "1:2",
        "-i",
        "2",
        "-x",
        "0",
        "-o",
        "-",
        timeout=120,
    )
    assert p.returncode == 0 and "Multi-threaded Latency Test" in p.stdout, p.stderr[-2000:]


def test_plot_suggests_only_benchmarks_that_exist(tmp_path):
    """An overlap table has no t(n) to fit: the pure flavours are suggested where the
    family has them (IMB-NBC's Iallreduce_pure), never names it lacks (OSU's iallreduce
    has no iallreduce_pure)."""
    from commbench import suites
    from commbench.records import Kind
    from commbench.views import series

    overlap = [
        (f.name, b.name)
        for f in suites.families()
        for b in f.benchmarks
        if getattr(b, "kind", None) in (Kind.OVERLAP, Kind.OVERLAP_SYNC) or f.name == "osu"
    ]
    for fam, name in series._pure_flavours(overlap):
        assert suites.family(fam).get(name) is not None and name.lower().endswith("_pure")
    for argv, said in (
        (["--suite", "nbc", "Iallreduce", "-msglog", "2", "-iter", "3"], "Iallreduce_pure"),
        (["--suite", "osu", "iallreduce", "-m", "1:4", "-i", "2", "-x", "0"], None),
    ):
        out = tmp_path / f"{argv[1]}.json"
        assert mpiexec(2, "run", *argv, "-o", str(out), timeout=120).returncode == 0
        p = commbench("plot", str(out), "-o", str(tmp_path / "f.png"), timeout=60)
        assert p.returncode == 2 and "overlap measurements" in p.stderr, p.stderr
        if said:
            assert f"--suite nbc {said}" in p.stderr
        else:
            assert "iallreduce_pure" not in p.stderr and "no pure flavours" in p.stderr, p.stderr
