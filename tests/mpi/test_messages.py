"""Tracebacks and messages (issue "No false success in any family", item 7).

Each case once failed with a traceback or a message about the wrong problem.
"""

from __future__ import annotations

import csv
import json

import numpy as np

from commbench.views import plot
from commbench.views.fit_text import fit_series
from commbench.views.series import Series
from tests.support.check_families import DRIVER_FAMILIES
from tests.support.mpirun import commbench

OVERHEAD = DRIVER_FAMILIES["overhead"]  # a short overhead run


def test_overhead_with_csv_then_report_and_compare(tmp_path):
    out, csv_out = tmp_path / "ov.json", tmp_path / "ov.csv"
    p = commbench(
        "overhead", "-n", "3", *OVERHEAD, "-o", str(out), "--csv", str(csv_out), timeout=300
    )
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-3000:]
    rows = list(csv.DictReader(csv_out.open()))
    assert len(rows) == len(json.loads(out.read_text())["records"]) > 10
    # one trial, two sizes: no interval can be computed; said so, not "[inf, inf]"
    assert "inf," not in p.stdout and "n/a" in p.stdout and "# n/a: no interval" in p.stdout
    r = commbench("report", str(out))
    assert r.returncode == 0 and "Traceback" not in r.stderr and "Table 3" in r.stdout, r.stderr[
        -2000:
    ]
    r = commbench("report", str(out), "--csv", str(tmp_path / "again.csv"))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert (tmp_path / "again.csv").read_text() == csv_out.read_text()
    r = commbench("compare", str(out), str(out), "--gate-unsampled")
    assert r.returncode == 0 and "Traceback" not in r.stderr and "matched rows" in r.stdout, (
        r.stderr[-2000:]
    )


def test_fit_and_plot_of_overlap_rows_say_what_they_are(tmp_path):
    out = tmp_path / "nbc.json"
    p = commbench(
        "run",
        "-n",
        "2",
        "--suite",
        "nbc",
        "Ibcast",
        "-msglog",
        "0:3",
        "-iter",
        "20",
        "-o",
        str(out),
    )
    assert p.returncode == 0, p.stderr[-2000:]
    for cmd in (["fit", str(out)], ["plot", str(out), "-o", str(tmp_path / "x.png")]):
        r = commbench(*cmd)
        assert r.returncode == 2
        assert "overlap measurements" in r.stderr and "Ibcast_pure" in r.stderr, r.stderr
        assert "no measurements with message sizes" not in r.stderr


def test_msglen_rounded_to_the_unit_is_said_and_measured_once(tmp_path):
    lens = tmp_path / "lens"
    lens.write_text("3\n5\n7\n")
    out = tmp_path / "ext.json"
    p = commbench(
        "run",
        "-n",
        "2",
        "--suite",
        "ext",
        "Unidir_Put",
        "-msglen",
        str(lens),
        "-iter",
        "20",
        "-o",
        str(out),
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert (
        "# -msglen: sizes are multiples of 4 bytes here: rounded up 3 to 4, 5 to 8, 7 to 8"
        in p.stdout
    )
    recs = json.loads(out.read_text())["records"]
    for mode in ("AGGREGATE", "NON-AGGREGATE"):
        assert [r["bytes"] for r in recs if r["mode"] == mode] == [4, 8]


def _series(name: str, t: np.ndarray) -> Series:
    n = np.array([2.0**k for k in range(11)])
    return Series(name, 2, "", 1, 1.0, "", n, t, t, t)


def test_plot_legend_names_benchmarks_and_leaves_out_meaningless_fits(tmp_path):
    n = np.array([2.0**k for k in range(11)])
    good = _series("PingPong", 1.0 + n / 1000.0)
    bad = _series("S_Write_Indv", 25.0 - n / 50.0)  # falling with size: r_inf < 0
    items = [(good, fit_series(good)), (bad, fit_series(bad))]
    labels = plot.figure(items, str(tmp_path / "f.png"))
    assert (tmp_path / "f.png").stat().st_size > 0
    assert all(lab.startswith(("PingPong", "S_Write_Indv")) for lab in labels), labels
    assert any(lab.startswith("PingPong fit: r_inf") for lab in labels)
    assert not any(lab.startswith("S_Write_Indv fit") for lab in labels)
    assert any("S_Write_Indv" in lab and "fit not drawn" in lab for lab in labels)


def test_sixteen_series_plot_with_a_legend_entry_each(tmp_path):
    many = [(_series(f"B{k}", 1.0 + k + np.arange(11.0)), None) for k in range(16)]
    labels = plot.figure(many, str(tmp_path / "many.png"))
    assert len(labels) == 16 and len(set(labels)) == 16


def _small_run(tmp_path, name: str, *args: str) -> str:
    out = tmp_path / name
    p = commbench("run", "-n", "2", *args, "-msglog", "0:2", "-iter", "20", "-o", str(out))
    assert p.returncode == 0, p.stderr[-2000:]
    return str(out)


def test_report_and_compare_of_broken_files_name_the_problem(tmp_path):
    good = _small_run(tmp_path, "good.json", "PingPong", "Allreduce")
    r = commbench("report", good, "--csv", "/proc/no/such.csv")
    assert r.returncode == 2 and "cannot write" in r.stderr and "Traceback" not in r.stderr
    r = commbench("report", good, "--csv", str(tmp_path / "g.csv"))
    assert r.returncode == 0 and "records written to" in r.stderr  # says what it did
    doc = json.loads(open(good).read())
    doc["records"][1]["bytes"] = "big"
    (tmp_path / "bad.invalid.json").write_text(json.dumps(doc))
    for cmd in (
        ["report", str(tmp_path / "bad.invalid.json")],
        ["compare", good, str(tmp_path / "bad.invalid.json")],
    ):
        r = commbench(*cmd)
        assert (
            r.returncode == 2
            and "record 1 (" in r.stderr
            and "field bytes: 'big' is not of type" in r.stderr
        ), r.stderr
        assert "Traceback" not in r.stderr
    (tmp_path / "nj.json").write_text("not json\n")
    r = commbench("fit", str(tmp_path / "nj.json"))
    assert r.returncode == 2 and "not a JSON results file" in r.stderr
    (tmp_path / "z.csv").write_text("bytes,t_usec\n0,0\n8,0\n16,0\n")
    r = commbench("fit", str(tmp_path / "z.csv"))
    assert "every time is 0: nothing to fit" in r.stderr


def test_compare_keeps_families_apart_and_says_what_differs(tmp_path):
    ext = _small_run(tmp_path, "ext.json", "--suite", "ext", "Accumulate")
    rma = _small_run(tmp_path, "rma.json", "--suite", "rma", "Accumulate")
    r = commbench("compare", ext, rma)
    assert r.returncode == 2 and "have no matching rows" in r.stderr  # nothing compared: not a pass
    assert "# note: family differs: old ext, new rma" in r.stdout
    assert "# no matching rows" in r.stdout  # IMB-EXT's Accumulate is not IMB-RMA's


def test_watchdog_status_is_124_at_any_process_count(tmp_path):
    p = commbench(
        "run",
        "-n",
        "4",
        "--suite",
        "nbc",
        "Ibcast",
        "-msglog",
        "0:1",
        "--nbc-cpu-factor",
        "1e6",
        "-iter",
        "5,off",
        "--timeout",
        "3",
        "-o",
        str(tmp_path / "w.json"),
        timeout=120,
    )
    assert p.returncode == 124, p.stderr[-2000:]


def test_help_and_final_line_name_what_they_should(tmp_path):
    h = commbench("overhead", "-h")
    assert h.returncode == 0 and h.stdout.startswith("usage: commbench overhead")
    assert "--sizes" in h.stdout and "-check" not in h.stdout  # only what it takes
    out, csv_out = tmp_path / "r.json", tmp_path / "r.csv"
    p = commbench(
        "run",
        "-n",
        "2",
        "PingPong",
        "-msglog",
        "0:1",
        "-iter",
        "10",
        "-o",
        str(out),
        "--csv",
        str(csv_out),
    )
    assert p.returncode == 0 and f"results written to {out} and {csv_out}" in p.stderr
    assert json.loads(out.read_text())["units"]["rank_times"] == "s"  # the file says its units


def test_msgrate_rates_have_units(tmp_path):
    p = commbench(
        "run",
        "-n",
        "3",
        "--suite",
        "msgrate",
        "--peers",
        "2",
        "--iters",
        "2",
        "--msgs",
        "4",
        "--cache-size",
        "0",
        "all_start",
        "-o",
        str(tmp_path / "m.json"),
        timeout=120,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert "all-start: " in p.stdout and " msgs/s" in p.stdout


def test_no_mpi_library_is_a_message_not_a_traceback():
    env = {"MPI4PY_LIBMPI": "/nonexistent/libmpi.so"}  # what mpi4py meets where no MPI is installed
    p = commbench("run", "-n", "2", "PingPong", "-o", "-", env=env)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr[-1000:]
    assert p.stderr.count("no MPI library could be loaded") == 1 and "commbench[mpich]" in p.stderr


def test_list_help_report_and_compare_need_no_mpi_library(tmp_path):
    out = tmp_path / "r.json"
    assert (
        commbench(
            "run", "-n", "2", "PingPong", "-msglog", "0:1", "-iter", "10", "-o", str(out)
        ).returncode
        == 0
    )
    env = {"MPI4PY_LIBMPI": "/nonexistent/libmpi.so"}  # they read descriptors and files only
    for cmd, expect in (
        (["list"], "PingPong"),
        (["run", "-h"], "usage: commbench run"),
        (["report", str(out)], "Benchmarking PingPong"),
        (["compare", str(out), str(out), "--gate-unsampled"], "matched"),
    ):
        p = commbench(*cmd, env=env)
        assert p.returncode == 0 and expect in p.stdout, (cmd, p.stderr[-1000:])
