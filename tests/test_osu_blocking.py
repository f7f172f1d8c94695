"""OSU's blocking and persistent collectives (commbench/suites/osu/blocking.py) in
real MPI processes: every one at 2 and 4 ranks, -c with and without
COMMBENCH_FAULT_CORRUPT, -T and -z, bad values, and OSU's layout read by the one
OSU parser (commbench/importers/osu.py) for commbench's output."""

from __future__ import annotations

import json

import pytest

from commbench.suites.osu import blocking
from tests.mpirun import commbench, mpiexec, run_json
from tests.test_osu import REF, structure

NAMES = [b.name for b in blocking.BENCHMARKS]
FEW = ["-m", "1:64", "-i", "3", "-x", "1"]


@pytest.mark.parametrize("nprocs", [2, 4])
def test_every_collective_runs_and_validates(tmp_path, nprocs):
    p, res = run_json(tmp_path, nprocs, "--suite", "osu", *NAMES, *FEW, "-c", "--engine", "both", timeout=300)
    recs = res["records"]
    assert {r["benchmark"] for r in recs} == set(NAMES)
    assert {(r["benchmark"], r["extra"]["engine"]) for r in recs} == {(n, e) for n in NAMES for e in ("native", "mpi4py")}
    for r in recs:
        assert r["status"] == "ok" and r["values"]["t"] > 0 and r["np"] == nprocs, r
        assert r["values"]["t_min"] <= r["values"]["t_avg"] <= r["values"]["t_max"]
        assert r["extra"].get("validation", "none") == ("none" if "barrier" in r["benchmark"] else "Pass"), r
        assert len(r["rank_times"]["t"]) == nprocs
    sizes = {r["bytes"] for r in recs if r["benchmark"] == "allreduce_persistent"}
    assert sizes == {1, 2, 4, 8, 16, 32, 64}
    assert [r["bytes"] for r in recs if r["benchmark"] == "barrier"] == [0, 0]
    assert "# OSU MPI Allreduce Persistent Latency Test v7.4" in p.stdout
    assert "# OSU MPI All-to-Allw Personalized Exchange Latency Test v7.4" in p.stdout


@pytest.mark.parametrize("corrupt", [0, 1])
def test_validation_catches_a_corrupted_buffer(tmp_path, corrupt):
    """The corrupted rank's data reaches every collective's result that holds it."""
    out = tmp_path / "r.json"
    names = ["allreduce", "alltoall", "allgather", "reduce_scatter_block", "bcast_persistent", "gather"]
    p = mpiexec(2, "run", "--suite", "osu", *names, "-m", "4:16", "-i", "2", "-x", "1", "-c", "-T", "mpi_int",
                "-o", str(out), env={"COMMBENCH_FAULT_CORRUPT": str(corrupt)})
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    res = json.loads(out.read_text())
    verdicts = {(r["benchmark"], r["extra"]["validation"]) for r in res["records"]}
    silent = {"bcast_persistent"} if corrupt == 1 else set()  # only the root's data travels
    assert verdicts == {(b, "Pass" if b in silent else "Fail") for b in names}


def test_types_percentiles_and_the_osu_parser(tmp_path):
    p, res = run_json(tmp_path, 2, "--suite", "osu", "allreduce", "bcast", "-m", "4:32", "-i", "20", "-x", "2",
                      "-T", "mpi_float", "-z", timeout=120)
    assert all(r["mode"] == "MPI_FLOAT" and all(f"t_p{q}" in r["values"] for q in (50, 90, 99))
               for r in res["records"])
    rows = structure(p.stdout)
    assert [(r[0], r[2]) for r in rows] == [(b, s) for b in ("allreduce", "bcast") for s in (4, 8, 16, 32)]


REFS = ("allreduce", "bcast", "alltoall", "barrier", "allgatherv", "reduce_scatter", "alltoallw_persistent")


@pytest.mark.parametrize("variant", ["", "-c", "-f", "-z"])
def test_structure_is_that_of_the_binaries(tmp_path, variant):
    """tests/data/osu/ref/<name><variant>.txt (the OMB 7.4 binaries, 2 ranks, -m 4:32) and
    commbench's output read by the one OSU parser: same programs, types, sizes, columns."""
    names = [n for n in REFS if not (n == "barrier" and variant == "-c")]
    p, _ = run_json(tmp_path, 2, "--suite", "osu", *names, "-m", "4:32", "-i", "3", "-x", "1",
                    *([variant] if variant else []), timeout=180)
    got = structure(p.stdout)
    for n in names:
        ref = structure((REF / f"{n}{variant}.txt").read_text())
        assert ref, n
        assert [r for r in got if r[0] == ref[0][0]] == ref, (n, variant)


BAD = [(["allreduce", "-W", "8"], "-W: none of the benchmarks"), (["bcast", "-i", "0"], "-i must be >= 1"),
       (["alltoall", "-T", "mpi_double"], "-T must be one of"), (["reduce", "-m", "x"], "-m 'x'")]


@pytest.mark.parametrize("args,words", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_values_are_refused_with_status_2(tmp_path, args, words):
    p = commbench("run", "-n", "2", "--suite", "osu", *args, "-o", str(tmp_path / "r.json"), timeout=120)
    assert p.returncode == 2 and words in p.stderr and "Traceback" not in p.stderr, p.stderr[-1500:]
