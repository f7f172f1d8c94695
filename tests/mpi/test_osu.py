"""The osu family (issue 14, first part): latency, bw, bibw with OSU's options,
procedure and output, in real MPI processes.

OSU's layout is checked by one parser for both outputs: commbench's importer of
OSU logs (commbench/importers/osu.py, written from OSU 7.4's real output) reads
the logs of the binaries in tests/data/osu/ref/ and commbench's stdout, and the
structure (programs, datatypes, columns, sizes) must be the same. The names, OSU's counts
and its percentile rule, without MPI: tests/unit/test_osu.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commbench.importers import osu as osu_import
from commbench.importers.common import Log
from tests.support.mpirun import commbench, mpiexec, run_json
from tests.support.osu_common import assert_refused

REF = Path(__file__).parents[1] / "data" / "osu" / "ref"
SMALL = ["-m", "1:4096", "-i", "100", "-x", "10"]


def structure(text: str) -> list[tuple]:
    """(program, datatype, size, value keys, validation) of every row, read by the OSU importer."""
    log = Log(path="-", index=0)
    osu_import.read(log, text.splitlines())
    return [
        (r.benchmark, r.mode, r.bytes, tuple(sorted(r.values)), r.extra.get("check"))
        for r in log.records
    ]


def shape(rows: list[tuple]) -> list[tuple]:
    """The structure without the validation verdicts (Pass here, whatever there)."""
    return [r[:4] for r in rows]


def osu_run(tmp_path: Path, *args: str, **kw) -> tuple[str, dict]:
    p, res = run_json(tmp_path, 2, "--suite", "osu", *args, **kw)
    return p.stdout, res


def test_the_three_run_with_osus_layout_and_rows(tmp_path):
    out, res = osu_run(tmp_path, "latency", "bw", "bibw", *SMALL)
    sizes = [2**k for k in range(13)]
    got = structure(out)
    for name in ("latency", "bw", "bibw"):
        ref = structure((REF / f"{name}.txt").read_text())
        assert shape([r for r in got if r[0] == name]) == shape(ref), name
        recs = [r for r in res["records"] if r["benchmark"] == name]
        assert [r["bytes"] for r in recs] == sizes
        key = "t" if name == "latency" else "bytes_per_sec"
        assert all(r["values"][key] > 0 and r["status"] == "ok" for r in recs), name
        assert all(r["repetitions"] == 100 and r["extra"]["warmup_iterations"] == 10 for r in recs)
        assert all(r["extra"]["engine"] == "native" and r["extra"]["alloc"] == "mmap" for r in recs)
    assert res["config"]["params"]["osu_message_size"] == [1, 4096]


def column_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("# Size")]


def test_tail_and_validation_columns_as_osu_prints_them(tmp_path):
    out, res = osu_run(
        tmp_path, "latency", "bw", "bibw", "-m", "1:64", "-i", "100", "-x", "10", "-c", "-z"
    )
    lat = out[: out.index("# OSU MPI Bandwidth")]
    ref = structure((REF / "latency-c-z.txt").read_text())
    assert shape(structure(lat)) == shape(ref) and {r[4] for r in structure(lat)} == {"successful"}
    # The importer splits headings at 2+ spaces; OSU's own bandwidth -c -z line has one
    # ("Validation P50 Tail BW(MB/s)"): the lines are compared as text.
    refs = [
        column_lines((REF / f"{n}.txt").read_text())[0]
        for n in ("latency-c-z", "bw-c-z", "bibw-c-z")
    ]
    assert column_lines(out) == refs
    for r in res["records"]:
        p = "t_p" if r["benchmark"] == "latency" else "bw_p"
        assert all(r["values"][f"{p}{q}"] > 0 for q in (50, 90, 99))
        assert r["extra"]["check"] == "successful" and r["extra"]["validation"] == "Pass"
    rows = [line.split() for line in out.splitlines() if line[:1].isdigit()]
    assert len(rows) == 3 * 7 and all(len(r) == 6 and r[2] == "Pass" for r in rows)


def test_percentile_lists_as_osu_prints_them(tmp_path):
    """-z<list> glued to the letter (getopt's optional argument), in its order, P100's heading one
    wider as OSU's; OSU's own logs of the same options (ref/*-z-list.txt) give the same lines."""
    out, res = osu_run(tmp_path, "latency", "-m", "1:64", "-i", "100", "-x", "10", "-z5,50,100")
    theirs = (REF / "latency-z-list.txt").read_text()
    assert column_lines(out) == column_lines(theirs) and shape(structure(out)) == shape(
        structure(theirs)
    )
    lat = res["records"]
    assert all(
        r["values"]["t_p5"]
        <= r["values"]["t_p50"]
        <= r["values"]["t_p100"]
        == r["values"]["iter_max"]
        for r in lat
    )
    assert all(r["extra"]["percentiles"] == [5, 50, 100] for r in res["records"])
    out, res = osu_run(tmp_path, "bw", "-m", "1:64", "-i", "20", "-x", "2", "-c", "-z99,100")
    theirs = (REF / "bw-c-z-list.txt").read_text()
    assert column_lines(out) == column_lines(theirs) and shape(structure(out)) == shape(
        structure(theirs)
    )


def test_types_and_size_ranges_as_osu(tmp_path):
    out, _ = osu_run(tmp_path, "latency", "-m", "1:16", "-i", "100", "-x", "10", "-T", "all")
    assert shape(structure(out)) == shape(structure((REF / "latency-T-all.txt").read_text()))
    out, _ = osu_run(
        tmp_path, "latency", "-m", "3:100", "-i", "20", "-x", "2", "--engine", "mpi4py"
    )
    assert shape(structure(out)) == shape(structure((REF / "latency-m-3-100.txt").read_text()))


def test_engines_mpi4py_and_both(tmp_path):
    out, res = osu_run(
        tmp_path, "bw", "bibw", "-m", "1:1024", "-i", "20", "-x", "2", "-W", "8", "--engine", "both"
    )
    engines = [(r["benchmark"], r["extra"]["engine"]) for r in res["records"]]
    assert engines == [
        (b, e) for b in ("bw", "bibw") for e in ("native", "mpi4py") for _ in range(11)
    ]
    assert all(
        r["extra"]["window_size"] == 8 and r["values"]["bytes_per_sec"] > 0 for r in res["records"]
    )
    assert out.count("# commbench engine: mpi4py") == 2


@pytest.mark.parametrize("corrupt", [0, 1])
def test_validation_catches_a_corrupted_buffer(tmp_path, corrupt):
    """COMMBENCH_FAULT_CORRUPT=<rank>: that rank's data is spoilt; -c reports Fail and the
    run exits 1. bw's rank 1 sends only the ack, so its corruption is not seen there."""
    out = tmp_path / "r.json"
    p = mpiexec(
        2,
        "run",
        "--suite",
        "osu",
        "latency",
        "bw",
        "bibw",
        "-m",
        "1:64",
        "-i",
        "20",
        "-x",
        "2",
        "-c",
        "-o",
        str(out),
        env={"COMMBENCH_FAULT_CORRUPT": str(corrupt)},
    )
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    res = json.loads(out.read_text())
    verdicts = {(r["benchmark"], r["extra"]["check"]) for r in res["records"]}
    silent = {"bw"} if corrupt == 1 else set()
    assert verdicts == {
        (b, "successful" if b in silent else "failed") for b in ("latency", "bw", "bibw")
    }
    assert "Fail" in p.stdout


def test_the_whole_default_list_runs_and_validates(tmp_path):
    """`--suite osu` without names: OMB 7.4's 76 programs (commbench's own collectives, such as
    scan, only by name), each with rows or OSU's reason (the neighbourhoods need 3 ranks;
    latency_mt needs naming, which asks for MPI_THREAD_MULTIPLE)."""
    from commbench.suites.osu import BENCHMARKS

    omb = [b for b in BENCHMARKS if b.default]
    _, res = osu_run(tmp_path, "-m", "1:8", "-i", "3", "-x", "1", "-c", timeout=600)
    recs = res["records"]
    assert len(omb) == 76 and {b.name for b in BENCHMARKS if not b.default} >= {"scan", "iexscan"}
    assert res["complete"] and {r["benchmark"] for r in recs} == {b.name for b in omb}
    skipped = {r["benchmark"]: r["message"] for r in recs if r["status"] != "ok"}
    assert set(skipped) == {"latency_mt"} | {b.name for b in omb if "neighbor" in b.name}
    assert "name it on the command line" in skipped["latency_mt"]
    assert {r["extra"]["check"] for r in recs if r["status"] == "ok"} <= {
        "successful",
        "not checked",
    }


def test_validation_checks_every_round_as_osu(tmp_path):
    """-c is OSU's procedure: each warm-up and timed round on fresh data, -u untimed
    repetitions (default 5) before the timed one, then checked. A spoilt sender's byte is
    counted once per round (2 warm-up + 10 timed = 12), not once per size."""
    out = tmp_path / "r.json"
    p = mpiexec(
        2,
        "run",
        "--suite",
        "osu",
        "latency",
        "allreduce",
        "-m",
        "4:4",
        "-i",
        "10",
        "-x",
        "2",
        "-c",
        "-u",
        "2",
        "-o",
        str(out),
        env={"COMMBENCH_FAULT_CORRUPT": "0"},
    )
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    recs = {r["benchmark"]: r for r in json.loads(out.read_text())["records"]}
    assert (
        recs["latency"]["defects"] == 12
        and recs["allreduce"]["defects"] % 12 == 0 < recs["allreduce"]["defects"]
    )
    assert all(
        r["extra"]["validated_rounds"] == 12 and r["extra"]["validation_warmup"] == 2
        for r in recs.values()
    )
    _, res = osu_run(tmp_path, "bw", "-m", "1:8", "-i", "5", "-x", "1", "-c")
    assert {
        (r["extra"]["validation"], r["extra"]["validation_warmup"]) for r in res["records"]
    } == {("Pass", 5)}


BAD = [
    (["latency", "-m", "abc"], "-m 'abc'"),
    (["latency", "-m", "16:4"], "no message size"),
    (["latency", "-m", "-3"], "-m"),
    (["latency", "-i", "0"], "-i must be >= 1"),
    (["latency", "-x", "-1"], "-x"),
    (["bw", "-W", "0"], "-W must be >= 1"),
    (["latency", "-W", "8"], "-W: none of the benchmarks"),
    (["latency", "-f"], "-f: none of the benchmarks"),
    (["latency", "-T", "mpi_double"], "-T must be one of"),
    (["bw", "-p", "2"], "-p: none"),
    (["bw", "-p", "x"], "-p needs an integer"),
    (["bw", "-t", "x1"], "-t 'x1': not a count"),
    (["bw", "-t", "2"], "-t: none"),
    (["latency", "-w", "create"], "-w: none"),
    (["latency", "-w", "x"], "-w must"),
    (["latency", "-s", "lock"], "-s: none"),
    (["latency", "-s", "x"], "-s must"),
    (["latency", "-I"], "-I: none"),
    (["latency", "-M", "1000"], "-M: none"),
    (["latency", "-M", "0"], "-M must be >= 1"),
    (["latency", "-msglog", "4"], "-msglog: the osu family does not use it"),
    (["latency", "-check"], "-check: the osu family does not use it"),
    (["latency", "-iter", "10"], "-iter: the osu family does not use it"),
    (["nosuch"], "invalid benchmark name"),
    (["latency", "-z0"], "-z0: accepted"),
    (["latency", "-z50,101"], "up to 5"),
    (["latency", "-z1,2,3,4,5,6"], "up to 5"),
    (["latency", "-zx"], "-zx"),
    (["latency", "-clog:/tmp/v"], "validation log"),
    (["latency", "-N", "cart:1:1"], "-N: none of the benchmarks"),
    # OMB 7.4's options commbench does not offer: refused with the reason, never an unknown word
    (["latency", "-G", "tty"], "-G: OSU's graphs (-G) are not drawn"),
    (["allreduce", "-l"], "-l: MPI_IN_PLACE"),
    (["latency", "-u", "5"], "-u: OSU's validation warm-up"),
    (["latency", "-c", "-u", "11"], "-u 11: at most 10"),
    (["acc_latency", "-c", "-u", "2"], "-u: none of the benchmarks"),
    (["gather", "-k", "1"], "another root than rank 0"),
    (["mbw_mr", "-V"], "-V: mbw_mr's varied windows"),
    (["latency", "-D", "cont:4"], "derived datatypes"),
]


@pytest.mark.parametrize("args,words", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_values_are_refused_with_status_2(tmp_path, args, words):
    assert_refused(tmp_path, args, words)


def test_process_count_is_osus_rule(tmp_path):
    p = commbench("run", "-n", "3", "--suite", "osu", "latency", "-o", "-", timeout=120)
    assert p.returncode == 2 and "latency: This test requires exactly two processes" in p.stderr, (
        p.stderr
    )


def test_list_shows_them():
    p = commbench("list", "osu", timeout=60)
    assert p.returncode == 0 and all(f"  {n} " in p.stdout for n in ("latency", "bw", "bibw")), (
        p.stdout
    )
