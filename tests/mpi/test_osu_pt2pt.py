"""The rest of the osu family's point-to-point (issue 14): latency_persistent,
bw_persistent, bibw_persistent, mbw_mr, multi_lat, latency_mp, latency_mt,
bw_fan_in, bw_fan_out, and init, in real MPI processes at 2 and 4 ranks.

OSU's layout is checked against the binaries' real outputs (tests/data/osu/ref/)
with one parser (commbench's OSU importer); OSU's arithmetic against the binaries
run under made-up clocks (ref/pt2pt-steps.txt: tests/data/osu/wtime_steps.c and,
for the multi-pair programs at 4 ranks, wtime_rank_steps.c)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commbench.importers import osu as osu_import
from commbench.importers.common import Log
from tests.support.mpirun import commbench, mpiexec, run_json
from tests.support.osu_common import assert_refused, library

DATA = Path(__file__).parents[1] / "data" / "osu"
REF = DATA / "ref"
TABLES = [
    "latency_persistent",
    "bw_persistent",
    "bibw_persistent",
    "mbw_mr",
    "multi_lat",
    "latency_mp",
    "latency_mt",
]
FAN = ["bw_fan_in", "bw_fan_out"]


def parse(text: str) -> list:
    log = Log(path="-", index=0)
    osu_import.read(log, text.splitlines())
    return log.records


def shape(text: str) -> list[tuple]:
    """(program, datatype, size, value keys) of every row, read by the OSU importer."""
    return [(r.benchmark, r.mode, r.bytes, tuple(sorted(r.values))) for r in parse(text)]


def heads(text: str) -> list[str]:
    """The '#' lines but commbench's own, OSU's thread/process lines included."""
    return [
        ln.rstrip("\n") for ln in text.splitlines() if ln.startswith("#") and "commbench" not in ln
    ]


def blocks(text: str) -> dict[str, str]:
    """A multi-program stdout cut at each title: {program title line: its text}."""
    out, key = {}, None
    for ln in text.splitlines():
        if ln.startswith("# OSU "):
            key = ln
        if key:
            out[key] = out.get(key, "") + ln + "\n"
    return out


def test_layouts_are_osus(tmp_path):
    """One run of the seven table programs: every one reads like the binary's own log
    (programs, datatypes, sizes, columns) and prints the same '#' lines (latency_mt's
    thread lines, latency_mp's process lines, mbw_mr's pairs line)."""
    p, res = run_json(tmp_path, 2, "--suite", "osu", *TABLES, "-m", "1:4096", "-i", "20", "-x", "2")
    got = shape(p.stdout)
    for name in TABLES:
        ref = (REF / f"{name}.txt").read_text()
        assert [r for r in got if r[0] == name] == shape(ref), name
    lines = heads(p.stdout)
    for name in TABLES:
        want = heads((REF / f"{name}.txt").read_text())
        start = lines.index(want[0])
        assert lines[start : start + len(want)] == want, name
    recs = res["records"]
    assert {r["benchmark"] for r in recs} == set(TABLES) and all(r["status"] == "ok" for r in recs)
    assert all(r["values"]["t"] > 0 for r in recs)
    mbw = [r for r in recs if r["benchmark"] == "mbw_mr"]
    assert all(
        r["kind"] == "rate" and r["extra"]["pairs"] == 1 and r["repetitions"] == 20 for r in mbw
    )
    assert all(
        r["values"]["msgs_per_sec"] == pytest.approx(r["values"]["bytes_per_sec"] / r["bytes"])
        for r in mbw
    )


@pytest.mark.parametrize(
    "ref,args",
    [
        ("bw_persistent-c-z", ["bw_persistent", "-m", "1:64", "-c", "-z"]),
        ("mbw_mr-W8-z", ["mbw_mr", "-m", "1:64", "-W", "8", "-z"]),
        ("latency_mt-t-3-z", ["latency_mt", "-m", "1:64", "-t", "3", "-z"]),
        ("latency_mp-t-4-6", ["latency_mp", "-m", "1:64", "-t", "4:6"]),
    ],
)
def test_options_print_osus_columns(tmp_path, ref, args):
    p, _ = run_json(tmp_path, 2, "--suite", "osu", *args, "-i", "20", "-x", "2")
    text = (REF / f"{ref}.txt").read_text()
    assert heads(p.stdout) == heads(text)
    assert [r[:3] for r in shape(p.stdout)] == [r[:3] for r in shape(text)]


def steps_reference() -> dict[tuple[int, str], list[tuple]]:
    """ref/pt2pt-steps.txt: {(np, program): [(size, values)]} of the binaries under the made-up
    clocks."""
    out: dict = {}
    for part in (REF / "pt2pt-steps.txt").read_text().split("## ")[1:]:
        cmd, _, text = part.partition("\n")
        np_ = int(cmd.split()[2])
        for r in parse(text):
            out.setdefault((np_, r.benchmark), []).append((r.bytes, r.values))
    return out


@pytest.mark.parametrize("engine", ["native", "mpi4py"])
def test_osus_arithmetic_under_made_up_clocks(tmp_path, engine):
    """MPI_Wtime returning k us at its k-th call (k (r+1) us on rank r at 4 ranks): the
    binaries' rows (ref/pt2pt-steps.txt) and commbench's are the same numbers: latency is
    the iterations' mean / 2, bandwidth bytes / the summed iteration times, mbw_mr's the
    pairs' bytes over the senders' mean time, multi_lat the senders' mean. latency, bw and bibw
    (tests/mpi/test_osu.py's) too: bw's MB/s is size x W x iterations / the windows' summed time."""
    want = steps_reference()
    got: dict = {}
    runs = (
        (2, "wtime_steps.c", TABLES),
        (2, "wtime_steps.c", ["latency", "bw", "bibw"]),
        (4, "wtime_rank_steps.c", ["mbw_mr", "multi_lat"]),
    )
    for np_, lib, names in runs:
        env = {"LD_PRELOAD": str(library(tmp_path, lib))}
        p = mpiexec(
            np_,
            "run",
            "--suite",
            "osu",
            *names,
            "-m",
            "1:2",
            "-i",
            "3",
            "-x",
            "2",
            "--engine",
            engine,
            "-o",
            str(tmp_path / "r.json"),
            env=env,
        )
        assert p.returncode == 0, p.stderr[-2000:]
        for r in parse(p.stdout):
            got.setdefault((np_, r.benchmark), []).append((r.bytes, r.values))
    assert got == want and len(want) == 12


def test_four_ranks_pairs_fans_and_idle_ranks(tmp_path):
    """At 4 ranks: mbw_mr and multi_lat pair i with i + 2; bw_fan_in/out move 3 streams to or
    from rank 0; mbw_mr -p 1 leaves ranks 1 and 3 at the barriers only."""
    p, res = run_json(
        tmp_path,
        4,
        "--suite",
        "osu",
        "mbw_mr",
        "multi_lat",
        *FAN,
        "-m",
        "1:1024",
        "-i",
        "10",
        "-x",
        "2",
        "-c",
    )
    recs = res["records"]
    assert {r["benchmark"] for r in recs} == {"mbw_mr", "multi_lat", *FAN}
    assert all(r["status"] == "ok" and r["extra"]["check"] == "successful" for r in recs)
    assert all(r["extra"]["pairs"] == 2 for r in recs if r["benchmark"] == "mbw_mr")
    assert "# [ pairs: 2 ] [ window size: 64 ]" in p.stdout
    fans = [r for r in recs if r["benchmark"] in FAN]
    assert all(r["kind"] == "rate" and r["values"]["bytes_per_sec"] > 0 for r in fans)
    # OSU's bw_fan_* title and column ("MPI Bandwidth", "Avg Latency(us)") over MB/s: read so by the
    # importer
    assert sorted({r[0] for r in shape(p.stdout)}) == ["bw", "mbw_mr", "multi_lat"]
    p, res = run_json(
        tmp_path, 4, "--suite", "osu", "mbw_mr", "-m", "1:64", "-i", "10", "-x", "2", "-p", "1"
    )
    assert "# [ pairs: 1 ] [ window size: 64 ]" in p.stdout
    assert all(
        r["extra"]["pairs"] == 1 and r["values"]["bytes_per_sec"] > 0 for r in res["records"]
    )


def test_latency_mt_threads_on_both_engines(tmp_path):
    """-t 2:3: two sender threads on rank 0, three receiver threads on rank 1 (iteration tags),
    C threads and Python threads; the ranks got MPI_THREAD_MULTIPLE without being asked."""
    p, res = run_json(
        tmp_path,
        2,
        "--suite",
        "osu",
        "latency_mt",
        "-t",
        "2:3",
        "-m",
        "1:256",
        "-i",
        "40",
        "-x",
        "4",
        "--engine",
        "both",
        "-c",
    )
    recs = res["records"]
    assert [r["extra"]["engine"] for r in recs] == ["native"] * 9 + ["mpi4py"] * 9
    assert all(
        r["extra"]["sender_threads"] == 2 and r["extra"]["receiver_threads"] == 3 for r in recs
    )
    assert all(r["extra"]["check"] == "successful" and r["values"]["t"] > 0 for r in recs)
    assert p.stdout.count("# Number of Sender threads: 2 ") == 2


def verdicts(path: Path) -> dict[str, str]:
    return {r["benchmark"]: r["extra"]["check"] for r in json.loads(path.read_text())["records"]}


@pytest.mark.parametrize("corrupt", [0, 1])
def test_validation_catches_a_corrupted_buffer(tmp_path, corrupt):
    """COMMBENCH_FAULT_CORRUPT=<rank> spoils that rank's data: caught wherever that rank's data
    is received (bw_persistent, mbw_mr, bw_fan_out: rank 1 sends only acks; bw_fan_in: rank 0
    only acks)."""
    out = tmp_path / "r.json"
    names = [*TABLES, *FAN]
    p = mpiexec(
        2,
        "run",
        "--suite",
        "osu",
        *names,
        "-m",
        "1:64",
        "-i",
        "10",
        "-x",
        "2",
        "-c",
        "-o",
        str(out),
        env={"COMMBENCH_FAULT_CORRUPT": str(corrupt)},
    )
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    silent = {"bw_fan_in"} if corrupt == 0 else {"bw_persistent", "mbw_mr", "bw_fan_out"}
    assert verdicts(out) == {n: "successful" if n in silent else "failed" for n in names}
    assert "Fail" in p.stdout


def test_init_times_mpi_init_in_a_fresh_job(tmp_path):
    """init: one row, OSU's line (read by the importer like the binary's), min <= avg <= max;
    -I initialises with MPI sessions."""
    for extra in ([], ["-I"]):
        p, res = run_json(tmp_path, 2, "--suite", "osu", "init", *extra)
        (rec,) = res["records"]
        v = rec["values"]
        assert rec["kind"] == "sync" and 0 < v["t_min"] <= v["t_avg"] <= v["t_max"] < 60e6
        assert rec["extra"]["session_init"] == bool(extra)
        (mine,) = parse(p.stdout)
        (theirs,) = parse((REF / f"init{'-I' if extra else ''}.txt").read_text())
        assert (mine.benchmark, mine.np, sorted(mine.values)) == (
            theirs.benchmark,
            theirs.np,
            sorted(theirs.values),
        )


BAD = [
    (["mbw_mr", "-p", "2"], "-p 2: 2 pairs need 4 processes"),
    (["latency_persistent", "-p", "1"], "-p: none"),
    (["mbw_mr", "-t", "2"], "-t: none"),
    (["latency_mt", "-t", "129"], "-t 129: latency_mt and latency_mp take"),
    (["latency_mt", "-t", "2:"], "-t '2:'"),
    (["latency_mp", "-t", "0"], "-t 0: latency_mt and latency_mp take"),
    (["latency_persistent", "-I"], "-I: none"),
    (["init", "-m", "4"], "-m: none"),
    (["init", "-z"], "-z: none"),
    (["multi_lat", "-W", "4"], "-W: none"),
]


@pytest.mark.parametrize("args,words", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_values_are_refused_with_status_2(tmp_path, args, words):
    assert_refused(tmp_path, args, words)


def test_process_counts(tmp_path):
    p = commbench(
        "run",
        "-n",
        "3",
        "--suite",
        "osu",
        "latency_mt",
        "latency_persistent",
        "-o",
        "-",
        timeout=120,
    )
    assert (
        p.returncode == 2 and "latency_mt: This test requires exactly two processes" in p.stderr
    ), p.stderr
    p, res = run_json(
        tmp_path, 3, "--suite", "osu", "mbw_mr", "multi_lat", "-m", "1:8", "-i", "5", "-x", "1"
    )
    status = {r["benchmark"]: r["status"] for r in res["records"]}
    assert status == {"mbw_mr": "ok", "multi_lat": "invalid"}  # mbw_mr: 1 pair, rank 2 idle
    assert "Multi Latency Test v7.4: not run: commbench: needs an even number" in p.stdout
