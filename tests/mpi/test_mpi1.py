"""IMB-MPI1 in real MPI processes at 1, 2, 3 and 4 ranks: rows, JSON, CSV, check mode."""

import csv
import json

import pytest

from commbench import policy
from commbench.suites import collops, mpi1
from tests.support.mpirun import FAST, mpiexec, run_json, tables

ALL = [b.name for b in mpi1.BENCHMARKS]
TWO = {b.name for b in mpi1.BENCHMARKS if b.procs.fixed == 2}
UNIT4 = {"Allreduce", "Reduce", "Reduce_scatter", "Reduce_local", "Reduce_scatter_block"} | {
    o.method
    for o in collops.OURS
    if o.reduces  # commbench's own: Scan, Exscan
}
PAIRED = {b.name for b in mpi1.BENCHMARKS if b.procs.minimum == 2}  # Uniband, Biband: NP >= 2


def expected_rows(name: str) -> int:
    if name == "Barrier":
        return 1
    return len(policy.size_list(4 if name in UNIT4 else 1, 0, 3))


@pytest.mark.parametrize("np_", [1, 2, 3, 4])
def test_every_benchmark_every_row(tmp_path, np_):
    csv_path = tmp_path / "r.csv"
    p, doc = run_json(tmp_path, np_, *FAST, "-msglog", "3", "-check", "--csv", str(csv_path), *ALL)
    out = p.stdout
    t = tables(out)
    for name in ALL:
        if name in TWO:
            if np_ == 1:
                assert f"# !! Benchmark {name} invalid for 1 processes !! " in out
                continue
            nps = [2]
        elif name in PAIRED and np_ == 1:
            assert f"# !! Benchmark {name} invalid for 1 processes !! " in out
            continue
        else:
            nps = policy.np_sequence(np_, 2)
        for n in nps:
            rows = t[(name, n)]
            assert len(rows) == expected_rows(name), (name, n, rows)
            width = {"Barrier": 4}.get(name)
            for r in rows:
                assert all(float(v) >= 0 for v in r)
                if width:
                    assert len(r) == width  # sync-type: no defects column
    # Barrier moves no data: no verifier looks at it, and the trailer says so
    assert "!!!!  ALL CHECKED BENCHMARKS SUCCESSFUL; 1 NOT CHECKED !!!! " in out
    assert "Barrier    : not checked (no verifier looked at its data)" in out
    assert "# All processes entering MPI_Finalize" in out

    # JSON: complete, one record per printed row, the same numbers
    assert doc["complete"] is True
    recs = [r for r in doc["records"] if r["status"] == "ok"]
    assert len(recs) == sum(len(v) for v in t.values())
    for r in recs:
        assert len(next(iter(r["rank_times"].values()))) == np_
        if r["benchmark"] != "Barrier":
            assert r["defects"] is not None and r["defects"] <= policy.TOL
        assert r["values"]["t_min"] <= r["values"]["t_avg"] <= r["values"]["t_max"]
    pingpong = [r for r in recs if r["benchmark"] == "PingPong"]
    if pingpong:
        printed = t[("PingPong", 2)]
        for rec, row in zip(pingpong, printed):
            assert int(row[0]) == rec["bytes"] and int(row[1]) == rec["repetitions"]
            assert row[2] == f"{rec['values']['t_max']:.2f}"
            assert row[3] == f"{rec['values']['bytes_per_sec'] / 1e6:.2f}"
    meta = doc["metadata"]
    for key in (
        "commbench_version",
        "mpi4py_version",
        "python_version",
        "mpi_library_version",
        "thread_level",
        "hosts",
        "ranks_per_host",
        "cpu_model",
        "buffer_allocation",
        "command_line",
        "date",
        "mpi_env",
    ):
        assert key in meta
    assert sum(meta["ranks_per_host"].values()) == np_
    assert doc["config"]["benchmarks"] == ALL

    # CSV: the same records
    with open(csv_path) as f:
        rows = [r for r in csv.DictReader(f) if r["status"] == "ok"]
    assert len(rows) == len(recs)
    for rec, row in zip(recs, rows):
        assert row["benchmark"] == rec["benchmark"] and int(row["np"]) == rec["np"]
        assert float(row["t_max_usec"]) == pytest.approx(rec["values"]["t_max"], rel=1e-5)


def test_corrupted_buffer_is_caught(tmp_path):
    out = tmp_path / "bad.json"
    p = mpiexec(
        2,
        "run",
        *FAST,
        "-msglog",
        "2",
        "-check",
        "-o",
        str(out),
        "PingPong",
        "Allreduce",
        env={"COMMBENCH_FAULT_CORRUPT": "1"},
    )
    assert p.returncode != 0
    assert "!!! Benchmark unsuccessful !!!" in p.stdout
    assert "!!!!  2  BENCHMARKS FAILED     !!!! " in p.stdout
    assert "PingPong    : FAILED !! " in p.stdout
    doc = json.loads(out.read_text())
    bad = [r for r in doc["records"] if r["bytes"]]
    assert bad and all(r["defects"] == 1.0 for r in bad)


def test_multi_and_map(tmp_path):
    p, doc = run_json(tmp_path, 4, *FAST, "-msglog", "2", "-multi", "1", "PingPong", "Allreduce")
    assert "# Benchmarking Multi-PingPong " in p.stdout
    assert "# ( 2 groups of 2 processes each running simultaneous ) " in p.stdout
    assert "# Group  0:     0    1" in p.stdout and "# Group  1:     2    3" in p.stdout
    pp = [r for r in doc["records"] if r["benchmark"] == "PingPong"]
    assert all(len(r["group_values"]) == 2 for r in pp)
    p, doc = run_json(tmp_path, 4, *FAST, "-msglog", "2", "-map", "2x2", "Allreduce")
    assert "# #processes = 4; rank order (rowwise): " in p.stdout
    assert "#     0    2" in p.stdout and "#     1    3" in p.stdout
    first = [r for r in doc["records"] if r["np"] == 2][0]
    assert first["groups"] == [[0, 2]]


def test_off_cache_and_alloc_kinds(tmp_path):
    for alloc in ("numpy", "mpi", "mmap"):
        p, doc = run_json(
            tmp_path,
            2,
            *FAST,
            "-msglog",
            "12:13",
            "-off_cache",
            "1,64",
            "-check",
            "--alloc",
            alloc,
            "--hugepages",
            "off",
            "PingPong",
            "Bcast",
        )
        assert "ALL BENCHMARKS SUCCESSFUL" in p.stdout
        assert doc["metadata"]["buffer_allocation"]["kind"] == alloc


def test_msglen_and_policies(tmp_path):
    lens = tmp_path / "lens"
    lens.write_text("0\n3\n1000\n")
    p, doc = run_json(
        tmp_path, 2, "-msglen", str(lens), "-iter", "30,multiple_np", "Allreduce", "PingPong"
    )
    assert "# Message lengths were user defined" in p.stdout
    sizes = [r["bytes"] for r in doc["records"] if r["benchmark"] == "Allreduce"]
    assert sizes == [0, 4, 1000]
    assert all(r["repetitions"] % 2 == 0 for r in doc["records"])
    p, doc = run_json(
        tmp_path, 2, "-msglog", "2", "-iter", "17", "-iter_policy", "off", "Barrier", "Sendrecv"
    )
    assert {r["repetitions"] for r in doc["records"]} == {17}
