"""COMMS1/COMMS2 on real MPI (2 ranks), `run --fit`,
`commbench fit` and `commbench plot` end to end."""

import json

import numpy as np
import pytest

from tests.support.mpirun import commbench, mpiexec, run_json, tables

SWEEP = ["-msglog", "10"]  # 0, 1, 2, … 1024: 12 sizes, enough for segments of 4
# -iter caps the repetitions; the longer -time only widens the time budget so
# that a stall of the loaded, shared machine does not time out later sizes.
FAST = ["-iter", "40", "-time", "3"]


@pytest.fixture(scope="module")
def comms_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("comms")
    csv_path = tmp / "comms.csv"
    # no --fit: COMMS fits each table by default, as the COMMS benchmarks print r_inf and n_1/2
    # (seed 000)
    p, doc = run_json(tmp, 2, *FAST, *SWEEP, "-check", "--csv", str(csv_path), "COMMS1", "COMMS2")
    return tmp, p, doc, csv_path


def test_run_tables_check_and_fit(comms_run):
    _tmp, p, doc, _ = comms_run
    out = p.stdout
    t = tables(out)
    for name in ("COMMS1", "COMMS2"):
        rows = t[(name, 2)]
        assert [int(r[0]) for r in rows] == [0] + [2**k for k in range(11)]
        assert all(float(r[2]) > 0 for r in rows)
        assert f"# Hockney fit of {name}, 2 processes: t = (n + n_1/2)/r_inf" in out, out[-3000:]
    assert "!!!!  ALL BENCHMARKS SUCCESSFUL !!!! " in out
    assert "COMMS2    : Successful" in out
    # the fit follows its own table, before the next one
    assert out.index("# Hockney fit of COMMS1") < out.index("# Benchmarking COMMS2")
    assert doc["complete"] is True and doc["family"]["title"] == "COMMS"
    fits = {f["benchmark"]: f for f in doc["fits"]}
    assert set(fits) == {"COMMS1", "COMMS2"}
    for f in fits.values():
        assert f["breakpoint_source"] == "auto" and f["criterion"]["name"] == "BIC"
        npts = sum(s["points"] for s in f["segments"])
        assert npts == 12
        for s in f["segments"]:
            for k in ("r_inf", "n_half", "t0", "pi0"):
                assert set(s[k]) == {"value", "ci", "unit"}
            assert len(s["residuals"]) == s["points"]
    # COMMS2 reports a quarter of the exchange-and-return, turnover 1: rate = n / t
    rec = next(r for r in doc["records"] if r["benchmark"] == "COMMS2" and r["bytes"] == 1024)
    assert rec["turnover"] == 1.0
    assert rec["values"]["bytes_per_sec"] == pytest.approx(1024 / (rec["values"]["t_max"] * 1e-6))


def test_fit_command_on_results_file(comms_run):
    tmp, _, doc, _ = comms_run
    path = str(tmp / "r2.json")
    p = commbench("fit", path, "--json")
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert [f["benchmark"] for f in got["fits"]] == ["COMMS1", "COMMS2"]
    assert all(f["breakpoint_source"] == "none" and len(f["segments"]) == 1 for f in got["fits"])
    # the same numbers as a direct fit of the records
    from commbench.models import hockney

    recs = [r for r in doc["records"] if r["benchmark"] == "COMMS1"]
    direct = hockney.fit([r["bytes"] for r in recs], [r["values"]["t"] for r in recs]).segments[0]
    assert got["fits"][0]["segments"][0]["r_inf"]["value"] == pytest.approx(direct.r_inf.value)

    p = commbench("fit", path, "--benchmark", "comms1", "--breakpoint", "64", "--model", "linear")
    assert p.returncode == 0, p.stderr
    assert "# Linear fit of COMMS1, 2 processes: t = a + b*n" in p.stdout
    assert "breakpoints (given): 64" in p.stdout and "COMMS2" not in p.stdout
    assert "0..64 (8)" in p.stdout and "128..1024 (4)" in p.stdout


def test_fit_command_on_csv(tmp_path, comms_run):
    rng = np.random.default_rng(0)
    n = np.array([0] + [2**k for k in range(21)], dtype=float)
    t = (n + 3000) / 2500 * (1 + rng.normal(0, 0.02, n.size))  # r_inf 2.5 GB/s, n_1/2 3000 B
    csv_path = tmp_path / "other_tool.csv"
    csv_path.write_text(
        "# from another tool\nbytes,t_usec\n" + "".join(f"{a:.0f},{b:.6f}\n" for a, b in zip(n, t))
    )
    p = commbench("fit", str(csv_path), "--json")
    assert p.returncode == 0, p.stderr
    seg = json.loads(p.stdout)["fits"][0]["segments"][0]
    lo, hi = seg["r_inf"]["ci"]
    assert lo <= 2.5e9 <= hi and seg["n_half"]["ci"][0] <= 3000 <= seg["n_half"]["ci"][1]
    # commbench's own CSV export is read too (benchmark and turnover per table)
    _, _, _, export = comms_run
    p = commbench("fit", str(export), "--benchmark", "COMMS2")
    assert p.returncode == 0, p.stderr
    assert "# Hockney fit of COMMS2, 2 processes" in p.stdout


def test_plot_png_and_svg(tmp_path, comms_run):
    tmp, _, _, _ = comms_run
    path = str(tmp / "r2.json")
    png = tmp_path / "comms.png"
    p = commbench("plot", path, "--auto-breakpoints", "-o", str(png))
    assert p.returncode == 0, p.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20000
    other = tmp_path / "other.csv"
    other.write_text(
        "bytes,t_usec\n" + "".join(f"{2**k},{(2**k + 500) / 900:.4f}\n" for k in range(12))
    )
    svg = tmp_path / "both.svg"
    p = commbench(
        "plot", path, str(other), "--benchmark", "COMMS1", "--benchmark", "other", "-o", str(svg)
    )
    assert p.returncode == 0, p.stderr
    text = svg.read_text()
    assert "<svg" in text and "r2.json" in text and "other.csv" in text


def test_errors_are_clear(tmp_path, comms_run):
    tmp, _, _, _ = comms_run
    path = str(tmp / "r2.json")
    p = commbench("fit", str(tmp_path / "missing.json"))
    assert p.returncode == 2 and "cannot read" in p.stderr
    bad = tmp_path / "bad.csv"
    bad.write_text("size,time\n1,2\n")
    p = commbench("fit", str(bad))
    assert p.returncode == 2 and "bytes,t_usec" in p.stderr
    p = commbench("fit", path, "--benchmark", "PingPong")
    assert p.returncode == 2 and "the file has: COMMS1, COMMS2" in p.stderr
    p = commbench("fit", path, "--breakpoint", "64", "--auto-breakpoints")
    assert p.returncode == 2 and "exclude each other" in p.stderr
    p = commbench("fit", path, "--breakpoint", "lots")
    assert p.returncode == 2 and "not a message size" in p.stderr
    p = commbench("fit", path, "--breakpoint", "0")
    assert p.returncode == 1 and "holds 1 measured size" in p.stderr
    p = commbench("plot", path, "-o", str(tmp_path / "x.pdf"))
    assert p.returncode == 2 and ".png or .svg" in p.stderr


def test_corrupted_exchange_is_caught(tmp_path):
    # The master's data travels in both benchmarks (the COMMS1 slave returns what it received)
    p = mpiexec(
        2,
        "run",
        *FAST,
        "-msglog",
        "3",
        "-check",
        "-o",
        "-",
        "COMMS1",
        "COMMS2",
        env={"COMMBENCH_FAULT_CORRUPT": "0"},
    )
    assert p.returncode != 0
    assert "COMMS1    : FAILED !! " in p.stdout and "COMMS2    : FAILED !! " in p.stdout
    p = mpiexec(
        2,
        "run",
        *FAST,
        "-msglog",
        "3",
        "-check",
        "-o",
        "-",
        "COMMS2",
        env={"COMMBENCH_FAULT_CORRUPT": "1"},
    )
    assert p.returncode != 0 and "COMMS2    : FAILED !! " in p.stdout


def test_run_fit_applies_to_opted_in_mpi1_benchmarks(tmp_path):
    p, doc = run_json(tmp_path, 2, *FAST, *SWEEP, "--fit", "PingPong", "Allreduce")
    assert "# Hockney fit of PingPong, 2 processes" in p.stdout
    assert "Hockney fit of Allreduce" not in p.stdout
    assert [f["benchmark"] for f in doc["fits"]] == ["PingPong"]
    lens = tmp_path / "one_size"
    lens.write_text("1024\n")
    p, doc = run_json(tmp_path, 2, *FAST, "-msglen", str(lens), "--fit", "Sendrecv")
    # one size cannot make a line: said, not crashed
    assert (
        "# Hockney fit of Sendrecv, 2 processes: not possible: a line needs at least 2" in p.stdout
    )
    assert "error" in doc["fits"][0]


def test_comms_breakpoints_and_no_fit_in_run(tmp_path):
    p, doc = run_json(tmp_path, 2, *FAST, *SWEEP, "--breakpoint", "64", "COMMS1")
    assert "breakpoints (given): 64" in p.stdout
    fit = doc["fits"][0]
    assert (
        fit["breakpoint_source"] == "user"
        and fit["breakpoints"] == [64]
        and len(fit["segments"]) == 2
    )
    p, doc = run_json(tmp_path, 2, *FAST, *SWEEP, "--no-fit", "COMMS1")
    assert "Hockney fit" not in p.stdout and not doc.get("fits")
    p = mpiexec(2, "run", "--no-fit", "--fit", "COMMS1", "-o", "-")
    assert p.returncode == 2 and "--no-fit contradicts" in p.stderr
    p = mpiexec(2, "run", "--breakpoint", "4k,1k", "COMMS1", "-o", "-")
    assert p.returncode == 2 and "ascending distinct sizes" in p.stderr
