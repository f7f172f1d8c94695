"""The osu family's blocking and persistent collectives (issue 14): allreduce …
scatterv and their _persistent forms, in real MPI processes at 2 and 4 ranks.

OSU's layout is checked against the binaries' real outputs (tests/data/osu/ref/)
with one parser (commbench's OSU importer), OSU's arithmetic over ranks against the
binaries run under a made-up clock (tests/data/osu/wtime_ranks.c), -c against
COMMBENCH_FAULT_CORRUPT. The programs' names, without MPI: tests/unit/test_osu_coll.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commbench.importers import osu as osu_import
from commbench.importers.common import Log
from commbench.suites.osu import collectives
from tests.support.mpirun import commbench, mpiexec, run_json
from tests.support.osu_common import REFS, assert_refused, library

DATA = Path(__file__).parents[1] / "data" / "osu"
REF = DATA / "ref"
# OMB 7.4's programs (commbench's own, scan …, only by name: tests/mpi/test_scan.py)
NAMES = [b.name for b in collectives.BENCHMARKS if b.default]
CHECKED = [n for n in NAMES if not n.startswith("barrier")]
SIZES = [1, 2, 4, 8, 16]


def parse(text: str) -> list:
    log = Log(path="-", index=0)
    osu_import.read(log, text.splitlines())
    return log.records


def structure(text: str) -> list[tuple]:
    """(program, datatype, size, value keys) of every row, read by the OSU importer."""
    return [
        (r.benchmark, r.mode, r.bytes, tuple(sorted(r.values)), r.repetitions) for r in parse(text)
    ]


def headers(text: str) -> list[str]:
    return [
        line
        for line in text.splitlines()
        if line.startswith("# ") and not line.startswith("# commbench")
    ]


def verdicts(res: dict) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for r in res["records"]:
        out.setdefault(r["benchmark"], set()).add(r["extra"]["check"])
    return out


@pytest.mark.parametrize("nprocs,engine,dtype", [(2, "both", "all"), (4, "native", "mpi_float")])
def test_every_collective_runs_and_validates(tmp_path, nprocs, engine, dtype):
    _, res = run_json(
        tmp_path,
        nprocs,
        "--suite",
        "osu",
        *NAMES,
        "-m",
        "1:16",
        "-i",
        "4",
        "-x",
        "1",
        "-c",
        "-f",
        "-T",
        dtype,
        "--engine",
        engine,
        timeout=600,
    )
    recs = res["records"]
    engines = ("native", "mpi4py") if engine == "both" else ("native",)
    types = ("MPI_CHAR", "MPI_INT", "MPI_FLOAT") if dtype == "all" else ("MPI_FLOAT",)
    for name in NAMES:
        for e in engines:
            mine = [r for r in recs if r["benchmark"] == name and r["extra"]["engine"] == e]
            if name.startswith("barrier"):
                assert [(r["bytes"], r["kind"]) for r in mine] == [(0, "sync")], (name, e)
                assert mine[0]["extra"]["check"] == "not checked"
            else:
                want = [(t, s) for t in types for s in SIZES if s >= (1 if t == "MPI_CHAR" else 4)]
                assert [(r["mode"], r["bytes"]) for r in mine] == want, (name, e)
                assert {r["extra"]["check"] for r in mine} == {"successful"}, (name, e)
                assert {r["kind"] for r in mine} == {"collective"}
            for r in mine:
                v = r["values"]
                assert r["status"] == "ok" and r["np"] == nprocs and r["repetitions"] == 4
                assert (
                    0 < v["t_min"] <= v["t"] <= v["t_max"] and len(r["rank_times"]["t"]) == nprocs
                )
                assert r["extra"]["warmup_iterations"] == 1 and r["extra"]["full"] is True


def test_layout_is_osus_for_every_program(tmp_path):
    """One run of the 29 with the options of ref/<program>-f-z(-c).txt: the same '#' lines
    and rows (programs, datatypes, sizes, columns, iterations) as the binaries' outputs
    read by the one OSU parser. (OSU's own osu_allreduce_persistent -c says Fail and
    stops after its first row: that program is compared without -c below.)"""
    p, _ = run_json(
        tmp_path,
        2,
        "--suite",
        "osu",
        *NAMES,
        "-m",
        "1:64",
        "-i",
        "20",
        "-x",
        "2",
        "-f",
        "-z",
        "-c",
        timeout=600,
    )
    ours = p.stdout.split("\n# OSU ")
    for name in NAMES:
        ref = (REF / f"{name}-f-z{'' if name.startswith('barrier') else '-c'}.txt").read_text()
        text = "\n# OSU " + next(t for t in ours if t.startswith(f"MPI {bench_title(name)} Test"))
        if name == "allreduce_persistent":
            assert "Fail" in ref and "DATA VALIDATION ERROR" in ref
            assert headers(text) == headers(ref) and structure(text)[:1] == structure(ref)
            continue
        assert headers(text) == headers(ref), name
        assert structure(text) == structure(ref), name
        rows = [line for line in text.splitlines() if line[:1] in "0123456789 " and line.strip()]
        assert all("Pass" in line for line in rows) or name.startswith("barrier")


def bench_title(name: str) -> str:
    return next(b.title for b in collectives.BENCHMARKS if b.name == name).removeprefix("MPI ")


LAYOUTS4 = {
    k: v for k, v in REFS.items() if k.endswith("-np4")
}  # collect.py runs these at 4 processes


@pytest.mark.parametrize("ref", list(LAYOUTS4))
def test_layout_at_4_processes(tmp_path, ref):
    p, _ = run_json(
        tmp_path, 4, "--suite", "osu", ref.split("-")[0], *LAYOUTS4[ref].split(), timeout=300
    )
    text = (REF / f"{ref}.txt").read_text()
    assert headers(p.stdout) == headers(text)
    assert structure(p.stdout) == structure(text)


@pytest.mark.parametrize("nprocs", [2, 3])
def test_osus_arithmetic_over_ranks_under_a_made_up_clock(tmp_path, nprocs):
    """MPI_Wtime advancing (rank + 1) us a call: every round lasts r + 1 us on rank r. The
    binaries print avg (P + 1)/2, min 1, max P and -z values (P + 1)/2 (the rounds' times
    averaged over the ranks, not pooled: ref/coll-ranks.txt); commbench's rows, on both
    engines, too."""
    env = {"LD_PRELOAD": str(library(tmp_path, "wtime_ranks.c"))}
    p = mpiexec(
        nprocs,
        "run",
        "--suite",
        "osu",
        "allreduce",
        "alltoallv_persistent",
        "barrier",
        "-m",
        "1:2",
        "-i",
        "4",
        "-x",
        "1",
        "-f",
        "-z",
        "--engine",
        "both",
        "-o",
        str(tmp_path / "r.json"),
        env=env,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    rows = {
        (r.benchmark, r.bytes, tuple(sorted(r.values.items())))
        for r in parse(p.stdout.split("\n#---")[0])
    }

    def want(n: int) -> tuple:
        mid = (n + 1) / 2
        return tuple(
            sorted(
                {
                    "t": mid,
                    "t_avg": mid,
                    "t_min": 1.0,
                    "t_max": float(n),
                    "t_p50": mid,
                    "t_p90": mid,
                    "t_p99": mid,
                }.items()
            )
        )

    assert rows == {
        (b, s, want(nprocs))
        for b, s in (
            ("allreduce", 1),
            ("allreduce", 2),
            ("alltoallv_persistent", 1),
            ("alltoallv_persistent", 2),
            ("barrier", None),
        )
    }
    ref = parse((REF / "coll-ranks.txt").read_text())  # the binaries at 2, then 3 processes
    assert [tuple(sorted(r.values.items())) for r in ref] == [want(2)] * 5 + [want(3)] * 5


@pytest.mark.parametrize("corrupt", [0, 1])
def test_validation_catches_a_corrupted_buffer(tmp_path, corrupt):
    """COMMBENCH_FAULT_CORRUPT=<rank> spoils the first byte that rank sends (its block for
    rank 0): every collective whose result holds that rank's data fails, and the run exits 1.
    Rank 1 sends nothing in bcast and scatter(v) (root 0's data only): those pass."""
    out = tmp_path / "r.json"
    p = mpiexec(
        2,
        "run",
        "--suite",
        "osu",
        *CHECKED,
        "-m",
        "4:16",
        "-i",
        "2",
        "-x",
        "1",
        "-c",
        "-T",
        "mpi_int",
        "-o",
        str(out),
        env={"COMMBENCH_FAULT_CORRUPT": str(corrupt)},
        timeout=300,
    )
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    got = verdicts(json.loads(out.read_text()))
    silent = (
        {n for n in CHECKED if n.split("_persistent")[0] in ("bcast", "scatter", "scatterv")}
        if corrupt
        else set()
    )
    # reduce_scatter_block's 4 bytes at 2 ranks are 0 elements a rank: nothing to spoil there
    want = {n: {"successful"} if n in silent else {"failed"} for n in CHECKED}
    want["reduce_scatter_block"] = {"successful", "failed"}
    assert got == want
    assert "Fail" in p.stdout


def test_memory_limit_is_osus(tmp_path):
    """-M (at least 1 MiB, as OSU): the programs with P blocks stop at M / P bytes, the
    others at M (what the binaries print with -M 1000 at 2 processes)."""
    _, res = run_json(
        tmp_path,
        3,
        "--suite",
        "osu",
        "alltoall",
        "allreduce",
        "gather_persistent",
        "ialltoall",
        "iallreduce",
        "neighbor_alltoall",
        "-m",
        "131072:4194304",
        "-M",
        "1000",
        "-i",
        "2",
        "-x",
        "0",
        timeout=300,
    )
    got = {}
    for r in res["records"]:
        got.setdefault(r["benchmark"], []).append(r["bytes"])
        assert r["extra"]["mem_limit"] == 1 << 20
    per_rank, whole = [131072, 262144], [131072, 262144, 524288, 1048576]  # M / 3 and M
    assert got == {
        "alltoall": per_rank,
        "allreduce": whole,
        "gather_persistent": per_rank,
        "ialltoall": per_rank,
        "iallreduce": whole,
        "neighbor_alltoall": per_rank,
    }


BAD = [
    (["allreduce", "-M", "0"], "-M must be >= 1"),
    (["allreduce", "-M", "x"], "-M needs an integer"),
    (["barrier", "-c"], "-c: none of the benchmarks"),
    (["barrier", "-T", "mpi_int"], "-T: none of the benchmarks"),
    (["barrier_persistent", "-W", "8"], "-W: none of the benchmarks"),
    (["allreduce", "-W", "8"], "-W: none"),
    (["bcast", "-T", "mpi_double"], "-T must be one of"),
    (["gather", "-m", "128:64"], "no message size"),
    (["alltoall", "-i", "0"], "-i must be >= 1"),
    (["scatter", "-x", "-1"], "-x"),
    (["allreduce_persistent", "-p", "2"], "-p: none"),
    (["reduce_scatter_block_persistent"], "invalid benchmark"),
    # -M leaves no size: the refusal names -M (OSU's limit / P), not -m
    (
        ["alltoall", "-M", "1", "-m", "1048576:"],
        "-M 1: alltoall measures at most 524288 bytes at 2 processes",
    ),
    # sizes past a C int are refused (OMB 7.4 measures none); the pre-flight's P blocks:
    # test_osu_limits.py
    (
        ["alltoall", "-m", "17179869184:17179869184", "-M", "99999999999"],
        "sizes past 2147483647 bytes",
    ),
]


@pytest.mark.parametrize("args,words", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_values_are_refused_with_status_2(tmp_path, args, words):
    assert_refused(tmp_path, args, words)


def test_list_shows_them():
    p = commbench("list", "osu", timeout=60)
    assert p.returncode == 0 and all(f"  {n} " in p.stdout for n in NAMES), p.stdout
