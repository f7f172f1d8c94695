"""The PGAS suite in real MPI processes at 2 and 4 ranks (3 is refused):
rows, records, pairing, check mode; and the random streams of the random tests
(commbench.suites.pgas.segment, which imports mpi4py.MPI: not in tests/unit)."""

import json

import numpy as np
import pytest

from commbench import policy
from commbench.suites import pgas
from commbench.suites.pgas import segment
from tests.support.mpirun import commbench, mpiexec, run_json, tables

ALL = [b.name for b in pgas.BENCHMARKS]
UNIT4 = {b.name for b in pgas.BENCHMARKS if b.unit == 4}
LATENCY = {
    "PutGet_latency",
    "PutPut_latency",
    "GetGet_latency",
    "Reduction_separate",
    "Reduction_inplace",
}
# Benchmarks in which only the lower rank of each pair times (the others are targets).
LOWER_ONLY = {"PutGet_latency", "Put_bw", "Get_bw", "Strided_put_bw", "Strided_get_bw"}
# Fixed repetitions; -time only sets the time budget, generous on a loaded machine.
FAST = ["--pgas-reps", "20", "-time", "20", "-msglog", "3"]


def sizes(name: str) -> list[int]:
    return policy.size_list(4 if name in UNIT4 else 1, 0, 3)


def check_run(p, doc, np_: int, names: list[str], offset: int | None = None) -> None:
    out = p.stdout
    t = tables(out)
    lower = {i for i, _ in pgas.pairs(np_, offset)}
    for name in names:
        rows = t[(name, np_)]
        assert [int(r[0]) for r in rows] == sizes(name), (name, rows)
        width = 6 if name in LATENCY else 7  # t_min/t_max/t_avg [+ Mbytes/sec] + defects
        for r in rows:
            assert len(r) == width, (name, r)
            assert int(r[1]) == 20
            assert all(float(v) >= 0 for v in r)
            assert float(r[-1]) == 0.0  # defects
    assert "!!!!  ALL BENCHMARKS SUCCESSFUL !!!! " in out
    assert doc["complete"] is True
    recs = doc["records"]
    assert len(recs) == sum(len(sizes(n)) for n in names)
    for r in recs:
        assert r["status"] == "ok" and r["np"] == np_ and r["groups"] == [list(range(np_))]
        assert r["defects"] is not None and r["defects"] <= policy.TOL
        times = r["rank_times"]["t"]
        assert len(times) == np_
        timed = {i for i, v in enumerate(times) if v is not None and v >= 0}
        # which ranks time follows from the pairing rule
        assert timed == (lower if r["benchmark"] in LOWER_ONLY else set(range(np_))), (
            r["benchmark"],
            timed,
        )
        v = r["values"]
        assert v["t_min"] <= v["t_avg"] <= v["t_max"]
        if r["benchmark"] not in LATENCY and r["bytes"]:
            assert v["bytes_per_sec"] == pytest.approx(r["bytes"] / (v["t_max"] * 1e-6))
    assert [r["benchmark"] for r in recs] == [n for n in names for _ in sizes(n)]


@pytest.mark.parametrize("np_", [2, 4])
def test_every_benchmark_every_row(tmp_path, np_):
    p, doc = run_json(tmp_path, np_, "--suite", "pgas", *FAST, "-check")
    check_run(p, doc, np_, ALL)
    assert "PGAS microbenchmarks part" in p.stdout
    assert doc["config"]["params"]["pgas_seed"] == 1  # the random tests' seed is recorded
    assert doc["config"]["params"]["pgas_stride"] == 4


def test_partner_offset_at_four(tmp_path):
    names = [
        "PutGet_latency",
        "PutPut_latency",
        "Put_bw",
        "Get_bw",
        "Strided_get_bw",
        "Random_put_bw",
    ]
    p, doc = run_json(
        tmp_path,
        4,
        "--suite",
        "pgas",
        *FAST,
        "-check",
        "--pgas-offset",
        "1",
        "--pgas-seed",
        "5",
        *names,
    )
    check_run(p, doc, 4, names, offset=1)  # pairs {0,1}, {2,3}: ranks 0 and 2 time
    assert doc["config"]["params"]["pgas_offset"] == 1 and doc["config"]["params"]["pgas_seed"] == 5


def test_strided_sides_and_barrier_sync(tmp_path):
    names = ["PutPut_latency", "GetGet_latency", "Strided_put_bw", "Strided_get_bw"]
    for side in ("origin", "both"):
        p, doc = run_json(
            tmp_path,
            2,
            "--suite",
            "pgas",
            *FAST,
            "-check",
            "--pgas-strided",
            side,
            "--pgas-stride",
            "3",
            "--pgas-sync",
            "barrier",
            *names,
        )
        check_run(p, doc, 2, names)


def test_odd_count_refused(tmp_path):
    msg = "family pgas needs an even number of processes (communicating pairs), got 3"
    p = commbench("run", "-n", "3", "--suite", "pgas")  # refused before launching
    assert p.returncode == 2 and msg in p.stderr
    p = mpiexec(3, "run", "--suite", "pgas", "-o", str(tmp_path / "no.json"))  # inside a job of 3
    assert p.returncode == 2 and msg in p.stderr
    assert not (tmp_path / "no.json").exists()
    p = commbench("run", "-n", "4", "--suite", "pgas", "--pgas-offset", "3")
    assert (
        p.returncode == 2
        and "--pgas-offset 3 leaves rank 1 of 4 processes without a partner" in p.stderr
    )


def test_corrupted_data_is_caught(tmp_path):
    names = ["Put_bidir_bw", "Get_bw", "Strided_get_bw", "Random_get_bw", "Reduction_separate"]
    out = tmp_path / "bad.json"
    p = mpiexec(
        2,
        "run",
        "--suite",
        "pgas",
        *FAST,
        "-check",
        "-o",
        str(out),
        *names,
        env={"COMMBENCH_FAULT_CORRUPT": "1"},
    )
    assert p.returncode != 0
    assert "!!!!  5  BENCHMARKS FAILED     !!!! " in p.stdout
    doc = json.loads(out.read_text())
    bad = [r for r in doc["records"] if r["bytes"]]
    assert bad and all(r["defects"] == 1.0 for r in bad)


def test_huge_stride_counts_against_mem(tmp_path):
    """--pgas-stride sizes the segment: rows beyond -mem are out-of-mem, the warm-up too
    (before: the 4-byte warm-up allocated a 40 GB segment and met the OOM killer)."""
    p, doc = run_json(
        tmp_path,
        2,
        "--suite",
        "pgas",
        "Strided_put_bw",
        "Strided_get_bw",
        "--pgas-reps",
        "5",
        "-msglog",
        "0:4",
        "--pgas-stride",
        "10000000000",
    )
    rows = {(r["benchmark"], r["bytes"]): r["status"] for r in doc["records"]}
    for name in ("Strided_put_bw", "Strided_get_bw"):
        assert rows[(name, 0)] == "ok"
        assert all(rows[(name, x)] == "out-of-mem" for x in (4, 8, 16)), rows
    assert 'needed X=  37.253 GB; use flag "-mem X"' in p.stdout


def test_random_draws_prefix_and_range():
    for me in range(4):
        t10, k10 = segment.random_draws(7, 3, me, 4, 16, 10)
        t50, k50 = segment.random_draws(7, 3, me, 4, 16, 50)
        assert np.array_equal(t10, t50[:10]) and np.array_equal(k10, k50[:10])
        assert ((t50 >= 0) & (t50 < 4) & (t50 != me)).all()
        assert ((k50 >= 0) & (k50 < 16)).all()
        assert set(t50.tolist()) == {r for r in range(4) if r != me}
    a, _ = segment.random_draws(7, 3, 0, 4, 16, 50)
    b, _ = segment.random_draws(8, 3, 0, 4, 16, 50)
    assert not np.array_equal(a, b)  # the seed matters
