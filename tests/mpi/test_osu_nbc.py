"""The osu family's nonblocking (osu_i*) and neighborhood collectives in real MPI
processes: every one at 2 and 4 ranks, OSU's overlap columns (and -f's), -t, -c
(passes, and catches COMMBENCH_FAULT_CORRUPT), bad values, and the layout of
OMB 7.4's own output (tests/data/osu/ref/nbc-*.txt) read by the one OSU parser
(commbench/importers/osu.py) next to commbench's. OSU's counts and the topologies'
neighbours, without MPI: tests/unit/test_osu_nbc.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from commbench.importers import osu as osu_import
from commbench.importers.common import Log
from commbench.suites.osu import neighbor, nonblocking
from tests.support.mpirun import commbench, mpiexec, run_json
from tests.support.osu_common import assert_refused

REF = Path(__file__).parents[1] / "data" / "osu" / "ref"
GRAPH = REF.parent / "graph3.txt"
NBC = [b.name for b in nonblocking.BENCHMARKS]
NBR = [b.name for b in neighbor.BENCHMARKS]
SMALL = ["-m", "1:16", "-i", "3", "-x", "1"]


def structure(text: str) -> list[tuple]:
    """(program, datatype, size, value keys, kind) of every row, read by the OSU importer."""
    log = Log(path="-", index=0)
    osu_import.read(log, text.splitlines())
    return [(r.benchmark, r.mode, r.bytes, tuple(sorted(r.values)), r.kind) for r in log.records]


def column_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith(("# Size", "# Overall(us)"))]


def osu(tmp_path, np_, *args, **kw):
    p, res = run_json(tmp_path, np_, "--suite", "osu", *args, timeout=400, **kw)
    return p.stdout, res


def check_rows(recs, names, reps):
    assert {r["benchmark"] for r in recs} == set(names)
    for r in recs:
        v = r["values"]
        assert r["status"] == "ok" and r["repetitions"] == reps, r
        assert r["extra"]["check"] in ("successful", "not checked"), r
        if r["kind"].startswith("overlap"):
            assert (
                v["t_ovrl"] > 0 and v["t_pure"] > 0 and v["t_cpu"] > 0 and 0 <= v["overlap"] <= 100
            ), r
            assert v["t_cpu"] >= 0.9 * v["t_pure_min"], (
                r
            )  # the computation lasts the pure communication
            assert v["t_pure_min"] <= v["t_pure"] <= v["t_pure_max"], r
        else:
            assert v["t_min"] <= v["t"] <= v["t_max"] and v["t"] > 0, r


def test_every_one_at_4_ranks_with_validation_and_tests(tmp_path):
    out, res = osu(tmp_path, 4, *NBC, *NBR, *SMALL, "-c", "-t", "2")
    recs = res["records"]
    check_rows(recs, NBC + NBR, 3)
    checked = {r["benchmark"] for r in recs if r["extra"]["check"] == "successful"}
    assert checked == set(NBC + NBR) - {"ibarrier"}
    assert all(r["extra"]["test_calls"] == 2 for r in recs if r["kind"].startswith("overlap"))
    assert [r["bytes"] for r in recs if r["benchmark"] == "ialltoallw"] == [1, 2, 4, 8, 16]
    assert [r["bytes"] for r in recs if r["benchmark"] == "ibarrier"] == [0]
    assert (
        out.count("Dimensions size = 4 ") == len(NBR)
        and out.count("Time took to create topology graph:") == 10
    )
    got = structure(out)  # the OSU parser reads all of it, the topology lines included
    assert len(got) == len(recs)


def test_every_one_at_2_ranks_and_the_neighborhood_rule(tmp_path):
    out, res = osu(tmp_path, 2, *NBC, *NBR, "-m", "1:4", "-i", "2", "-x", "1", "-c")
    ok = [r for r in res["records"] if r["status"] == "ok"]
    check_rows(ok, NBC, 2)
    refused = {r["benchmark"]: r["message"] for r in res["records"] if r["status"] != "ok"}
    assert set(refused) == set(NBR)
    assert all(
        "neighborhood radius (r = 1) is greater than the half of the minimum dimension size 2" in m
        for m in refused.values()
    )
    p = commbench("run", "-n", "2", "--suite", "osu", "neighbor_allgather", "-o", "-", timeout=120)
    assert p.returncode == 2 and "neighborhood radius" in p.stderr and "Traceback" not in p.stderr


# (reference file, processes, commbench's arguments for the same run)
LAYOUTS = [
    (
        "nbc-ialltoall-np2-f-z-c",
        2,
        ["ialltoall", "-m", "1:64", "-i", "20", "-x", "2", "-f", "-z", "-c"],
    ),
    ("nbc-ibarrier-np2-f-z", 2, ["ibarrier", "-i", "20", "-x", "2", "-f", "-z"]),
    (
        "nbc-ibcast-np2-Tall-c",
        2,
        ["ibcast", "-m", "1:16", "-i", "20", "-x", "2", "-T", "all", "-c"],
    ),
    ("nbc-iallreduce-np2-t10", 2, ["iallreduce", "-m", "1:64", "-i", "20", "-x", "2", "-t", "10"]),
    (
        "nbc-neighbor_allgather-np3-f-z-c",
        3,
        ["neighbor_allgather", "-m", "1:64", "-i", "20", "-x", "2", "-f", "-z", "-c"],
    ),
    (
        "nbc-ineighbor_alltoallv-np3-c",
        3,
        ["ineighbor_alltoallv", "-m", "1:64", "-i", "20", "-x", "2", "-c"],
    ),
    ("nbc-neighbor_alltoallw-np3", 3, ["neighbor_alltoallw", "-m", "1:64", "-i", "20", "-x", "2"]),
    # -N: a graph file (a duplicate edge; tests/data/osu/graph3.txt) and a radius-2 ring
    (
        "nbc-neighbor_alltoallv-np3-graph-c",
        3,
        ["neighbor_alltoallv", "-m", "1:64", "-i", "20", "-x", "2", "-c", "-N", f"graph:{GRAPH}"],
    ),
    (
        "nbc-ineighbor_allgather-np3-graph-c",
        3,
        ["ineighbor_allgather", "-m", "1:64", "-i", "20", "-x", "2", "-c", "-N", f"graph:{GRAPH}"],
    ),
    (
        "nbc-neighbor_allgather-np5-cart-1-2-c",
        5,
        ["neighbor_allgather", "-m", "1:64", "-i", "20", "-x", "2", "-c", "-N", "cart:1:2"],
    ),
]


@pytest.mark.parametrize("ref,np_,args", LAYOUTS, ids=[x[0] for x in LAYOUTS])
def test_osus_layout_read_by_one_parser(tmp_path, ref, np_, args):
    """OMB 7.4's output and commbench's: the same rows, keys and kinds through the importer,
    and the same column lines character for character (ibarrier's size-less one too)."""
    theirs = (REF / f"{ref}.txt").read_text()
    out, res = osu(tmp_path, np_, *args)
    assert structure(out) == structure(theirs)
    assert column_lines(out) == column_lines(theirs)
    mine = [ln for ln in out.splitlines() if ln.startswith("# OSU") or ln.startswith("# Overall =")]
    assert mine == [
        ln for ln in theirs.splitlines() if ln.startswith("# OSU") or ln.startswith("# Overall =")
    ]
    if "neighbor" in ref:  # cart: the grid line first; graph: the topology time first
        first = out.splitlines()[0]
        assert first.split(":")[0] == theirs.splitlines()[0].split(":")[0] and not first.startswith(
            "#"
        )
        assert out.splitlines()[0] == theirs.splitlines()[0] or "graph" in ref
    widths = {len(ln) for ln in out.splitlines() if ln[:1].isdigit() or ln.startswith("     ")}
    assert widths == {
        len(ln) for ln in theirs.splitlines() if ln[:1].isdigit() or ln.startswith("     ")
    }


def test_overlap_arithmetic_and_columns_of_full(tmp_path):
    out, res = osu(tmp_path, 2, "iallreduce", "ineighbor_allgather", *SMALL, "-f", "-t", "3", "-z")
    for r in (r for r in res["records"] if r["status"] == "ok"):
        v = r["values"]
        want = max(0.0, 100 - 100 * (v["t_ovrl"] - v["t_cpu"]) / v["t_pure"])
        assert v["overlap"] == pytest.approx(want)
        assert v["t_test"] > 0 and v["t_wait"] >= 0 and v["t_init"] > 0
        assert v["t_ovrl"] >= v["t_cpu"] and set(r["extra"]["percentiles"]) == {50, 90, 99}
        assert v["t_p50"] <= v["t_p90"] <= v["t_p99"]
    heads = re.split(r"\s{2,}", column_lines(out)[0])
    assert heads[1:10] == [
        "Overall(us)",
        "Compute(us)",
        "Coll. Init(us)",
        "MPI_Test(us)",
        "MPI_Wait(us)",
        "Pure Comm.(us)",
        "Min Comm.(us)",
        "Max Comm.(us)",
        "Overlap(%)",
    ]


@pytest.mark.parametrize("np_", [2, 4])
def test_validation_catches_a_corrupted_buffer(tmp_path, np_):
    """COMMBENCH_FAULT_CORRUPT=0: rank 0 (every call's root) sends a spoilt first byte;
    -c says Fail, exit 1."""
    names = [n for n in NBC if n != "ibarrier"] + (NBR if np_ > 2 else [])
    out = tmp_path / "r.json"
    p = mpiexec(
        np_,
        "run",
        "--suite",
        "osu",
        *names,
        "-m",
        "16:32",
        "-i",
        "2",
        "-x",
        "1",
        "-c",
        "-T",
        "mpi_int",
        "-o",
        str(out),
        env={"COMMBENCH_FAULT_CORRUPT": "0"},
        timeout=400,
    )
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    res = json.loads(out.read_text())
    failed = {r["benchmark"] for r in res["records"] if r["extra"]["check"] == "failed"}
    # 16 bytes: 4 ints, so that ireduce_scatter_block moves count / 4 >= 1 of them per rank at 4
    # ranks
    assert failed == set(names), set(names) - failed
    assert "Fail" in p.stdout


def test_both_engines_run_the_same_procedure(tmp_path):
    """--engine both: the C loops (osu_nonblocking.c, osu_neighbor.c) and the mpi4py ones
    give a row each, validated, with the overlap columns' arithmetic; C is the default."""
    names = [
        "iallreduce",
        "ialltoallw",
        "ireduce_scatter",
        "ibarrier",
        "neighbor_alltoallw",
        "ineighbor_allgatherv",
    ]
    out, res = osu(
        tmp_path, 3, *names, "-m", "1:8", "-i", "5", "-x", "1", "-c", "-t", "2", "--engine", "both"
    )
    recs = res["records"]
    assert {(r["benchmark"], r["extra"]["engine"]) for r in recs} == {
        (n, e) for n in names for e in ("native", "mpi4py")
    }
    check_rows(recs, names, 5)
    assert {r["extra"]["check"] for r in recs if r["benchmark"] != "ibarrier"} == {"successful"}
    assert "the native osu engine was unavailable" not in out
    _, res = osu(tmp_path, 3, "iallgather", "-m", "4:4", "-i", "3", "-x", "1")
    assert res["records"][0]["extra"]["engine"] == "native"


def test_validation_checks_every_pure_and_overlap_round(tmp_path):
    """-c is OSU's: each of the 2 + 10 pure-communication rounds and of the 2 + 10 overlap
    rounds on fresh data after -u untimed calls, then checked: a spoilt root counts in all 24."""
    out = tmp_path / "r.json"
    p = mpiexec(
        2,
        "run",
        "--suite",
        "osu",
        "iallreduce",
        "ibcast",
        "-m",
        "4:4",
        "-i",
        "10",
        "-x",
        "2",
        "-c",
        "-u",
        "1",
        "-o",
        str(out),
        env={"COMMBENCH_FAULT_CORRUPT": "0"},
        timeout=300,
    )
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    recs = {r["benchmark"]: r for r in json.loads(out.read_text())["records"]}
    for r in recs.values():
        assert r["extra"]["validated_rounds"] == 24 and r["extra"]["validation_warmup"] == 1
        assert r["defects"] > 0 and r["defects"] % 24 == 0, r["defects"]
        assert r["values"]["t_pure"] > 0 and r["values"]["t_cpu"] > 0
    _, res = osu(
        tmp_path,
        3,
        "ialltoallv",
        "ineighbor_allgather",
        "neighbor_alltoall",
        "-m",
        "1:8",
        "-i",
        "4",
        "-x",
        "1",
        "-c",
        "--engine",
        "both",
    )
    assert {r["extra"]["check"] for r in res["records"]} == {"successful"}


def test_a_graph_file_validates_and_catches_a_corrupted_buffer(tmp_path):
    """-N graph:<file> with a duplicate edge: every neighborhood program passes -c at 3 ranks; with
    rank 0's data spoilt every one fails (rank 0 sends to 1 and 2 in each), exit 1."""
    args = [
        "--suite",
        "osu",
        *NBR,
        "-m",
        "4:8",
        "-i",
        "2",
        "-x",
        "1",
        "-c",
        "-N",
        f"graph:{GRAPH}",
        "-T",
        "mpi_int",
    ]
    for corrupt, status, verdict in ((None, 0, "successful"), ("0", 1, "failed")):
        out = tmp_path / f"g{corrupt}.json"
        env = {"COMMBENCH_FAULT_CORRUPT": corrupt} if corrupt else None
        p = mpiexec(3, "run", *args, "-o", str(out), env=env, timeout=400)
        assert p.returncode == status, p.stdout[-2000:] + p.stderr[-2000:]
        recs = json.loads(out.read_text())["records"]
        assert {r["extra"]["check"] for r in recs} == {verdict} and {
            r["benchmark"] for r in recs
        } == set(NBR)
        assert all(r["extra"]["topology"] == f"graph:{GRAPH}" for r in recs)


BAD = [
    (["neighbor_allgather", "-N", "cart:0:1"], "-N 'cart:0:1'"),
    (["neighbor_allgather", "-N", "torus:1"], "-N"),
    (["neighbor_allgather", "-N", "graph:/nonexistent/g"], "cannot read"),
    (["neighbor_allgather", "-N", f"graph:{REF / 'latency.txt'}"], "is not 'source,destination'"),
    (
        ["neighbor_allgather", "-N", f"graph:{GRAPH}"],
        "Number of processes is less than graph nodes",
    ),
    (["neighbor_allgather", "-N", "cart:2:1"], "radius (r = 1)"),
    (["iallreduce", "-t", "2147483648"], "-t '2147483648': not a count"),
    (
        ["iallreduce", "-t", "2:3"],
        "-t 2:3 is a SEND:RECV pair, latency_mt's and latency_mp's form; the nonblocking",
    ),
    (["ibarrier", "-T", "mpi_int"], "-T: none of the benchmarks"),
    (["ibarrier", "-c", "-u", "2"], "-c: none"),
    (["ibarrier", "-c"], "-c: none of the benchmarks"),
    (["neighbor_allgather", "-t", "4"], "-t: none of the benchmarks"),
    (["iallreduce", "-W", "4"], "-W: none"),
    (["iallreduce", "-m", "8:2"], "no message size"),
    (["ialltoall", "-i", "0"], "-i must be >= 1"),
]


@pytest.mark.parametrize("args,words", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_values_are_refused_with_status_2(tmp_path, args, words):
    assert_refused(tmp_path, args, words)
