"""The osu family's one-sided programs (issue 14): put_latency, get_latency, put_bw,
get_bw, put_bibw, acc_latency, get_acc_latency, fop_latency, cas_latency, with every
window kind and synchronization the OMB 7.4 binaries accept, in real MPI processes.

OSU's layout is checked against the binaries' real outputs (tests/data/osu/ref/)
with one parser (commbench's OSU importer), and OSU's arithmetic against the
binaries run under a made-up clock (tests/data/osu/wtime_steps.c)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commbench.importers import osu as osu_import
from commbench.importers.common import Log
from commbench.suites.osu import onesided
from tests.support.mpirun import commbench, mpiexec, run_json
from tests.support.osu_common import REFS, assert_refused, library

DATA = Path(__file__).parents[1] / "data" / "osu"
REF = DATA / "ref"
ALL = [
    "put_latency",
    "get_latency",
    "put_bw",
    "get_bw",
    "put_bibw",
    "acc_latency",
    "get_acc_latency",
    "fop_latency",
    "cas_latency",
]
WINDOWS = {
    "create": "MPI_Win_create",
    "allocate": "MPI_Win_allocate",
    "dynamic": "MPI_Win_create_dynamic",
}
SYNCS = {
    "lock": "MPI_Win_lock/unlock",
    "flush": "MPI_Win_flush",
    "flush_local": "MPI_Win_flush_local",
    "lock_all": "MPI_Win_lock_all/unlock_all",
    "pscw": "MPI_Win_post/start/complete/wait",
    "fence": "MPI_Win_fence",
}
ATOMIC = ("acc_latency", "fop_latency", "cas_latency")


def parse(text: str) -> list:
    log = Log(path="-", index=0)
    osu_import.read(log, text.splitlines())
    return log.records


def structure(text: str) -> list[tuple]:
    """(program, datatype/window/sync, size, value keys, validation) of every row."""
    return [
        (r.benchmark, r.mode, r.bytes, tuple(sorted(r.values)), r.extra.get("check"))
        for r in parse(text)
    ]


def headers(text: str) -> list[str]:
    return [
        line
        for line in text.splitlines()
        if line.startswith("# ") and not line.startswith("# commbench")
    ]


@pytest.mark.parametrize("win", list(WINDOWS))
@pytest.mark.parametrize("sync", list(SYNCS))
def test_every_program_with_every_window_and_sync(tmp_path, win, sync):
    """Each binary takes every -w and every -s but put_bibw's (pscw, fence only): all of
    them run here on both engines, with OSU's settings lines and sizes."""
    names = [n for n in ALL if n != "put_bibw" or sync in ("pscw", "fence")]
    p, res = run_json(
        tmp_path,
        2,
        "--suite",
        "osu",
        *names,
        "-m",
        "1:8",
        "-i",
        "10",
        "-x",
        "2",
        "-W",
        "4",
        "-w",
        win,
        "-s",
        sync,
        "--engine",
        "both",
    )
    for name in names:
        for engine in ("native", "mpi4py"):
            recs = [
                r
                for r in res["records"]
                if r["benchmark"] == name and r["extra"]["engine"] == engine
            ]
            sizes = [1] if name in ("fop_latency", "cas_latency") else [1, 2, 4, 8]
            assert [r["bytes"] for r in recs] == sizes, (name, engine)
            key = "bytes_per_sec" if "bw" in name else "t"
            assert all(r["status"] == "ok" and r["values"][key] > 0 for r in recs), (name, engine)
            assert all(
                r["repetitions"] == 10 and r["extra"]["warmup_iterations"] == 2 for r in recs
            )
            assert all(
                (r["extra"]["rma_window"], r["extra"]["rma_sync"]) == (win, sync) for r in recs
            )
    osu_text = p.stdout.split("\n#---")[
        0
    ]  # --engine both then adds a table of the binding overhead
    got = {r.benchmark: r.mode for r in parse(osu_text)}
    assert set(got) == set(names)
    for name, mode in got.items():
        assert mode.endswith(f"{WINDOWS[win]}, {SYNCS[sync]}"), (name, mode)
    assert p.stdout.count(f"# Synchronization: {SYNCS[sync]}") == 2 * len(names)


# The binaries' outputs in tests/data/osu/ref/ and their options (collect.py's REFS).
LAYOUTS = {
    k: v for k, v in REFS.items() if k.split("-")[0] in {b.name for b in onesided.BENCHMARKS}
}


@pytest.mark.parametrize("ref", list(LAYOUTS))
def test_layout_is_osus(tmp_path, ref):
    """Same '#' lines as the binary's output (title, window, sync, datatype, columns),
    and the same rows read by one parser (OSU's fop -c row says passed although its
    own report after the table says FAILED: the parser skips that report)."""
    prog = ref.split("-")[0]
    p, _ = run_json(tmp_path, 2, "--suite", "osu", prog, *LAYOUTS[ref].split())
    text = (REF / f"{ref}.txt").read_text()
    assert headers(p.stdout) == headers(text)
    assert structure(p.stdout) == structure(text)


@pytest.mark.parametrize("engine", ["native", "mpi4py"])
def test_osus_arithmetic_under_a_made_up_clock(tmp_path, engine):
    """With MPI_Wtime returning k us at its k-th call, the binaries print total/n (lock,
    flush …) or total/2n (pscw, fence) from the whole loop, -z values per iteration
    (halved for put/get/get_acc under pscw and fence only) and bandwidths from the whole
    loop (ref/rma-steps.txt); commbench's rows are the same numbers."""
    env = {"LD_PRELOAD": str(library(tmp_path, "wtime_steps.c"))}
    want = sorted(
        (r.benchmark, r.mode, r.bytes, r.values) for r in parse((REF / "rma-steps.txt").read_text())
    )
    got = []
    runs = [(s, [n for n in ALL if n != "put_bibw"]) for s in ("flush", "pscw", "fence")]
    runs += [(s, ["put_bibw"]) for s in ("pscw", "fence")]
    for sync, names in runs:
        p = mpiexec(
            2,
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
            "-z",
            "-s",
            sync,
            "--engine",
            engine,
            "-o",
            str(tmp_path / "r.json"),
            env=env,
        )
        assert p.returncode == 0, p.stderr[-2000:]
        got += [(r.benchmark, r.mode, r.bytes, r.values) for r in parse(p.stdout)]
    assert sorted(got) == want and len(want) == 46


def verdicts(path: Path) -> set[tuple[str, str]]:
    return {(r["benchmark"], r["extra"]["check"]) for r in json.loads(path.read_text())["records"]}


@pytest.mark.parametrize("sync", ["flush", "fence"])
@pytest.mark.parametrize("corrupt", [None, 0, 1])
def test_validation_checks_the_windows(tmp_path, sync, corrupt):
    """-c (acc, fop, cas): the target's window and the fetched values are checked after
    one more iteration. COMMBENCH_FAULT_CORRUPT=<rank> spoils that rank's origin data:
    caught when that rank is an origin (rank 0 always; rank 1 under pscw and fence)."""
    out = tmp_path / "r.json"
    env = {} if corrupt is None else {"COMMBENCH_FAULT_CORRUPT": str(corrupt)}
    p = mpiexec(
        2,
        "run",
        "--suite",
        "osu",
        *ATOMIC,
        "-m",
        "1:64",
        "-i",
        "10",
        "-x",
        "2",
        "-c",
        "-s",
        sync,
        "-T",
        "mpi_char" if corrupt is None else "mpi_int",
        "--engine",
        "both",
        "-o",
        str(out),
        env=env,
    )
    caught = corrupt == 0 or (corrupt == 1 and sync == "fence")
    assert p.returncode == (1 if caught else 0), p.stdout[-2000:] + p.stderr[-2000:]
    verdict = "failed" if caught else "successful"
    assert verdicts(out) == {(b, verdict) for b in ATOMIC}
    rows = [
        line.split()
        for line in p.stdout.splitlines()
        if line[:1].isdigit() and len(line.split()) == 3
    ]
    sizes = 7 if corrupt is None else 5  # MPI_INT: 4 … 64
    assert len(rows) == 2 * (sizes + 1 + 1) and {r[2] for r in rows} == {
        "failed" if caught else "passed"
    }


@pytest.mark.parametrize("sync", ["pscw", "lock"])
def test_validation_of_every_type(tmp_path, sync):
    """MPI_CHAR, MPI_INT, MPI_FLOAT (cas: no MPI_FLOAT, refused below) on both engines."""
    _, res = run_json(
        tmp_path,
        2,
        "--suite",
        "osu",
        "acc_latency",
        "fop_latency",
        "-m",
        "1:64",
        "-i",
        "10",
        "-x",
        "2",
        "-c",
        "-T",
        "all",
        "-s",
        sync,
        "-w",
        "create",
        "--engine",
        "both",
    )
    recs = res["records"]
    assert {r["extra"]["check"] for r in recs} == {"successful"}
    assert {(r["benchmark"], r["mode"], r["extra"]["engine"]) for r in recs} == {
        (b, t, e)
        for b in ("acc_latency", "fop_latency")
        for t in ("MPI_CHAR", "MPI_INT", "MPI_FLOAT")
        for e in ("native", "mpi4py")
    }


def test_other_programs_are_not_checked_in_a_run_with_c(tmp_path):
    _, res = run_json(
        tmp_path,
        2,
        "--suite",
        "osu",
        "put_latency",
        "acc_latency",
        "-m",
        "1:4",
        "-i",
        "10",
        "-x",
        "2",
        "-c",
    )
    assert {(r["benchmark"], r["extra"]["check"]) for r in res["records"]} == {
        ("put_latency", "not checked"),
        ("acc_latency", "successful"),
    }


BAD = [
    (["put_bibw", "-s", "lock"], "-s lock: osu_put_bibw takes -s pscw or fence only"),
    (["put_bibw", "-s", "flush"], "-s flush: osu_put_bibw takes -s pscw or fence only"),
    (["put_latency", "-s", "nosuch"], "-s must be one of"),
    (["put_latency", "-w", "shared"], "-w must be one of"),
    (["put_latency", "-c"], "-c: none of the benchmarks"),
    (["get_acc_latency", "-T", "mpi_int"], "-T: none"),
    (["put_latency", "acc_latency", "-T", "mpi_int"], "-T mpi_int: osu_put_latency takes no -T"),
    (["cas_latency", "-T", "mpi_float"], "MPI_Compare_and_swap takes no MPI_FLOAT"),
    (["cas_latency", "-T", "all"], "MPI_Compare_and_swap takes no MPI_FLOAT"),
    (["put_latency", "-W", "8"], "-W: none of the benchmarks"),
    (["put_bw", "-W", "0"], "-W must be >= 1"),
    (["acc_latency", "-m", "16:4"], "no message size"),
    (["get_bw", "-f"], "-f: none"),
]


@pytest.mark.parametrize("args,words", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_values_are_refused_with_status_2(tmp_path, args, words):
    assert_refused(tmp_path, args, words)


def test_two_processes_only():
    p = commbench(
        "run", "-n", "3", "--suite", "osu", "put_latency", "get_bw", "-o", "-", timeout=120
    )
    assert (
        p.returncode == 2 and "put_latency: This test requires exactly two processes" in p.stderr
    ), p.stderr


def test_list_shows_them():
    p = commbench("list", "osu", timeout=60)
    assert p.returncode == 0 and all(f"  {n} " in p.stdout for n in ALL), p.stdout
