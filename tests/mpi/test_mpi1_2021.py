"""IMB 2021's additions to IMB-MPI1 in real MPI runs: Uniband, Biband,
Reduce_local, Reduce_scatter_block, -window_size and -zero_size, against the
structure of IMB 2021.11's own output (tests/data/imb-mpi1, with its command)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.imb_layout import layout
from tests.support.mpirun import mpiexec, run_json, tables

DATA = Path(__file__).parents[1].joinpath("data") / "imb-mpi1"
ADDED = ["Uniband", "Biband", "Reduce_local", "Reduce_scatter_block"]
ARGS = ["-msglog", "0:3", "-iter", "20", "-iter_policy", "off", "-window_size", "8", "-npmin", "2"]


@pytest.mark.parametrize("engine", ["native", "mpi4py"])
def test_same_tables_as_imb_2021(tmp_path, engine):
    p, doc = run_json(tmp_path, 4, *ARGS, "--engine", engine, *ADDED)
    assert layout(p.stdout) == layout((DATA / "imb2021-additions.txt").read_text())
    rates = [r for r in doc["records"] if r["benchmark"] in ("Uniband", "Biband")]
    for r in rates:
        v, pairs = r["values"], r["np"] // 2
        per_rep = (2 if r["benchmark"] == "Biband" else 1) * 8 * pairs
        assert r["turnover"] == per_rep
        assert v["msgs_per_sec"] == pytest.approx(per_rep / (v["t_max"] * 1e-6))
        assert v["bytes_per_sec"] == pytest.approx(v["msgs_per_sec"] * r["bytes"])


@pytest.mark.parametrize("np_", [2, 3])
def test_windows_verified_and_odd_np_idles_the_last_rank(tmp_path, np_):
    p, doc = run_json(
        tmp_path,
        np_,
        "-msglog",
        "0:4",
        "-iter",
        "30",
        "-window_size",
        "5",
        "-off_cache",
        "0.001,64",
        "-check",
        *ADDED,
    )
    assert "ALL BENCHMARKS SUCCESSFUL" in p.stdout, p.stdout[-2000:]
    odd = [r for r in doc["records"] if r["benchmark"] == "Uniband" and r["np"] == 3]
    assert all(r["rank_times"]["t"][2] is not None and r["rank_times"]["t"][2] < 0 for r in odd)
    assert len(odd) == (6 if np_ == 3 else 0)


def test_zero_size_off_and_bad_window(tmp_path):
    p, doc = run_json(
        tmp_path,
        2,
        "-zero_size",
        "off",
        "-msglog",
        "0:2",
        "-iter",
        "10",
        "PingPong",
        "Reduce_local",
    )
    assert 0 not in {r["bytes"] for r in doc["records"]}
    assert [r[0] for r in tables(p.stdout)[("PingPong", 2)]] == ["1", "2", "4"]
    for bad, words in (
        (["-window_size", "0"], "-window_size must be >= 1"),
        (["-window_size", "100000"], "-window_size must be <= 65536"),
        (["--suite", "ext", "-window_size", "4"], "-window_size is an option of the mpi1 family"),
    ):
        p = mpiexec(2, "run", *bad, timeout=60)
        assert p.returncode == 2 and words in p.stderr and "Traceback" not in p.stderr, p.stderr


TYPED = [
    "PingPong",
    "Sendrecv",
    "Exchange",
    "Allreduce",
    "Reduce",
    "Reduce_scatter",
    "Allgatherv",
    "Gatherv",
    "Scatterv",
    "Alltoallv",
    "Bcast",
    "Uniband",
    "Reduce_local",
    "Reduce_scatter_block",
]


def test_data_types_shape_the_tables_as_imb_2021(tmp_path):
    p, _ = run_json(
        tmp_path,
        2,
        "-data_type",
        "double",
        "-red_data_type",
        "char",
        "-msglog",
        "0:4",
        "-iter",
        "20",
        "-iter_policy",
        "off",
        "PingPong",
        "Sendrecv",
        "Allreduce",
        "Reduce_scatter",
        "Allgatherv",
    )
    ref = (DATA / "data-types.txt").read_text()
    assert layout(p.stdout) == layout(ref)
    for line in (
        "# MPI_Datatype                   :   MPI_DOUBLE",
        "# MPI_Datatype for reductions    :   MPI_CHAR",
    ):
        assert line in p.stdout and line in ref


@pytest.mark.parametrize("engine", ["native", "mpi4py"])
@pytest.mark.parametrize("types", [("int", "double"), ("char", "char"), ("double", "int")])
def test_every_typed_benchmark_verified(tmp_path, engine, types):
    """Counts, displacements and reductions in the chosen types, every byte checked;
    rank 1's corrupted data fails every reduction (their sums are checked as that type)."""
    args = [
        "-data_type",
        types[0],
        "-red_data_type",
        types[1],
        "--engine",
        engine,
        "-msglog",
        "0:4",
        "-iter",
        "30",
        "-check",
        "-off_cache",
        "0.001,64",
        *TYPED,
    ]
    p, doc = run_json(tmp_path, 3, *args, timeout=300)
    assert "ALL BENCHMARKS SUCCESSFUL" in p.stdout, p.stdout[-2000:]
    assert doc["config"]["params"]["mpi1_data_type"] == types[0]
    if engine == "native":
        bad = mpiexec(3, "run", *args, "-o", "-", env={"COMMBENCH_FAULT_CORRUPT": "1"}, timeout=300)
        for name in (
            "Allreduce",
            "Reduce",
            "Reduce_scatter",
            "Reduce_local",
            "Reduce_scatter_block",
            "Allgatherv",
        ):
            assert f"{name}    : FAILED" in bad.stdout, (name, bad.stdout[-1500:])


def test_bad_types_refused():
    for bad, words in (
        (["-data_type", "half"], "-data_type must be one of byte|char|int|float|double"),
        (["-red_data_type", "byte"], "-red_data_type must be one of char|int|float|double"),
    ):
        p = mpiexec(2, "run", *bad, timeout=60)
        assert p.returncode == 2 and words in p.stderr and "Traceback" not in p.stderr, p.stderr
