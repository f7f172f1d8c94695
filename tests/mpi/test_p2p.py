"""The p2p family (IMB-P2P) in real MPI processes: every benchmark at 2 and 4
ranks, its records (IMB-P2P's repetition rule, message counts, the random
partners), the text against IMB-P2P 2021.11's own output (tests/data/imb-p2p/,
made by the real binary) read by one parser, `report`, the mapping of the
shared options, and bad values. The grids, and the sizes and iterations the parser makes of the
options, without MPI: tests/unit/test_p2p.py."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from commbench.suites.p2p.driver import repetitions
from commbench.suites.p2p.patterns import random_pairs
from commbench.suites.p2p.spec import grid2d, grid3d
from tests.support.mpirun import commbench, run_json

DATA = Path(__file__).parents[1] / "data" / "imb-p2p"
P2P = ["--suite", "p2p", "-pause", "0"]
ALL = [
    "PingPong",
    "PingPing",
    "Unirandom",
    "Birandom",
    "Corandom",
    "Stencil2D",
    "Stencil3D",
    "SendRecv_Replace",
]


def blocks(text: str) -> list[dict]:
    """IMB-P2P's text: one dict per '# Benchmarking' block or '# !! … invalid' line."""
    out: list[dict] = []
    for line in text.splitlines():
        if m := re.fullmatch(r"# Benchmarking (\S+)(?: \(([\d x]+)\))?", line):
            out.append({"name": m[1], "grid": m[2], "procs": None, "columns": None, "rows": []})
        elif m := re.fullmatch(r"# !! Benchmark (\S+) (.*) !!", line):
            out.append({"name": m[1], "invalid": m[2]})
        elif not out or "invalid" in out[-1]:
            continue
        elif m := re.fullmatch(r"# #processes = (\d+)", line):
            out[-1]["procs"] = int(m[1])
        elif line.strip().startswith("#bytes") and not line.startswith("#"):
            out[-1]["columns"] = [line[i : i + 13].strip() for i in range(0, len(line), 13)]
        elif line.startswith(" ") and line.strip() and out[-1]["columns"]:
            out[-1]["rows"].append([line[i : i + 13].strip() for i in range(0, len(line), 13)])
    return out


def structure(text: str) -> list[tuple]:
    """What a parser reads besides the timings: names, grids, process counts, columns,
    the #bytes and #repetitions of every row, and the invalid lines."""
    return [
        (b["name"], b["invalid"])
        if "invalid" in b
        else (
            b["name"],
            b["grid"],
            b["procs"],
            tuple(b["columns"]),
            tuple((r[0], r[1]) for r in b["rows"]),
            tuple(len(r) for r in b["rows"]),
        )
        for b in blocks(text)
    ]


def _check_records(doc: dict, np_: int, sizes: list[int], cap: int, names: list[str] = ALL) -> None:
    recs = doc["records"]
    assert doc["family"]["name"] == "p2p" and doc["config"]["params"]["p2p_sizes"] == sizes
    for r in recs:
        assert r["family"] == "p2p" and r["np"] == np_, r
        if r["status"] == "invalid":
            assert r["benchmark"] in ("Stencil2D", "Stencil3D") and r["message"].startswith(
                "# !! Benchmark"
            ), r
            continue
        n = repetitions(r["bytes"], cap, 800 * 2**20)[0]
        x, v, e = r["bytes"], r["values"], r["extra"]
        assert r["status"] == "ok" and r["repetitions"] == n, r
        assert e["messages"] == sum(e["rank_messages"]) // 2 and e["messages"] > 0, e
        assert math.isclose(v["msgs_per_sec"], e["messages"] / e["max_time_s"]), v
        assert math.isclose(v["bytes_per_sec"], e["messages"] * x / e["max_time_s"]), v
        assert math.isclose(v["t"], 1e6 * e["sum_time_s"] / e["latency_divisor"]), v
        assert 0 < v["t_min"] <= v["t_avg"] <= v["t_max"], v
        assert e["rank_messages"] == _expected_counts(r["benchmark"], np_, n), r
    got = [r["benchmark"] for r in recs]
    assert got == [b for b in names for _ in (sizes if b not in _invalid(np_) else [None])], got


def _invalid(np_: int) -> set[str]:
    return {b for b, g in (("Stencil2D", grid2d), ("Stencil3D", grid3d)) if g(np_) is None}


def _expected_counts(name: str, np_: int, n: int) -> list[int]:
    """Messages sent + received per rank, as IMB-P2P counts them; the random ones from
    the generator (seed 0): a rank counts the pairs it is in."""
    if name in ("Unirandom", "Birandom"):
        a, b = random_pairs(np_, np_ * n)
        per = 1 if name == "Unirandom" else 2
        return [per * int(((a == r) | (b == r)).sum()) for r in range(np_)]
    per_rep = {"Stencil2D": 8, "Stencil3D": 12}.get(name, 2)
    return [per_rep * n] * np_


def test_every_benchmark_at_2_ranks_matches_imb_p2p_text(tmp_path):
    p, doc = run_json(tmp_path, 2, *P2P, "-msglog", "4", "-iter", "200")
    ref = (DATA / "np2.txt").read_text()
    assert structure(p.stdout) == structure(ref)
    assert [b["name"] for b in blocks(p.stdout)] == ALL
    assert _lengths(p.stdout) == _lengths(ref) and _listed(p.stdout) == _listed(ref) == ALL
    assert "#    commbench" in p.stdout and "IMB-P2P part" in p.stdout
    assert p.stdout.rstrip().endswith("# All processes entering MPI_Finalize")
    _check_records(doc, 2, [0, 1, 2, 4, 8, 16], 200)
    assert {r["extra"].get("engine") for r in doc["records"] if r["status"] == "ok"} == {"native"}
    assert "loops: C (commbench/native/p2p.c)" in p.stdout


def test_stencil3d_at_8_ranks_matches_imb_p2p_text(tmp_path):
    p, doc = run_json(
        tmp_path, 8, *P2P, "Stencil3D", "Stencil2D", "Corandom", "-msglog", "2:3", "-iter", "20"
    )
    assert structure(p.stdout) == structure((DATA / "np8.txt").read_text())
    _check_records(doc, 8, [4, 8], 20, ["Stencil3D", "Stencil2D", "Corandom"])
    grids = {r["benchmark"]: r["extra"].get("grid") for r in doc["records"]}
    assert grids == {"Stencil3D": [2, 2, 2], "Stencil2D": [2, 4], "Corandom": None}


def test_both_engines_make_the_same_calls(tmp_path):
    """--engine both: p2p.c's loops, then mpi4py's, with the same partners and message counts
    (the random patterns included), each engine's blocks marked."""
    p, doc = run_json(tmp_path, 4, *P2P, "--engine", "both", "-msglog", "2:3", "-iter", "30")
    ok = [r for r in doc["records"] if r["status"] == "ok"]
    by = {
        e: [
            (r["benchmark"], r["bytes"], r["repetitions"], r["extra"]["rank_messages"])
            for r in ok
            if r["extra"]["engine"] == e
        ]
        for e in ("native", "mpi4py")
    }
    assert by["native"] and by["native"] == by["mpi4py"], by
    engines = re.findall(r"#    ENGINE: (\S+)", p.stdout)
    assert engines == [e for b in ALL if b not in _invalid(4) for e in ("native", "mpi4py")], (
        engines
    )
    names = [b["name"] for b in blocks(p.stdout)]
    assert names == [b for b in ALL for _ in range(1 if b in _invalid(4) else 2)], names


def test_without_a_compiler_the_mpi4py_loops_run_and_say_so(tmp_path):
    env = {"COMMBENCH_MPICC": "/nonexistent/mpicc", "COMMBENCH_CACHE_DIR": str(tmp_path / "cache")}
    p, doc = run_json(tmp_path, 2, *P2P, "PingPong", "-msglog", "1", "-iter", "20", env=env)
    assert (
        "native p2p engine unavailable (COMMBENCH_MPICC='/nonexistent/mpicc' not found)" in p.stderr
    )
    assert "#    ENGINE: mpi4py (the native p2p engine was unavailable)" in p.stdout
    assert {r["extra"]["engine"] for r in doc["records"]} == {"mpi4py"}


def test_every_benchmark_at_4_ranks_matches_imb_p2p_text(tmp_path):
    p, doc = run_json(tmp_path, 4, *P2P, "-msglog", "2:4", "-iter", "100")
    ref = (DATA / "np4.txt").read_text()
    assert structure(p.stdout) == structure(ref)
    assert _lengths(p.stdout) == _lengths(ref)
    _check_records(doc, 4, [4, 8, 16], 100)
    stencil = next(r for r in doc["records"] if r["benchmark"] == "Stencil2D")
    assert stencil["extra"]["grid"] == [2, 2] and "(2 x 2)" in p.stdout


def test_msgsz_and_report_print_the_same_blocks(tmp_path):
    p, doc = run_json(
        tmp_path,
        2,
        *P2P,
        "PingPong",
        "SendRecv_Replace",
        "-msgsz",
        "3,1k",
        "-iter",
        "50",
        "-msgwr",
        "off",
        "-msgrd",
        "no",
        "--mib",
    )
    assert structure(p.stdout) == structure((DATA / "np2-msgsz.txt").read_text())
    _check_records(doc, 2, [3, 1024], 50, ["PingPong", "SendRecv_Replace"])
    params = doc["config"]["params"]
    assert (
        params["p2p_msgwr"] is False and params["p2p_msgrd"] is False and params["p2p_pause"] == 0
    )
    again = commbench("report", str(tmp_path / "r2.json"))
    assert again.returncode == 0, again.stderr
    assert again.stdout == p.stdout
    row = blocks(p.stdout)[0]["rows"][1]
    rec = doc["records"][1]
    assert float(row[3]) == pytest.approx(rec["values"]["bytes_per_sec"] / 2**20, abs=0.01)  # --mib


def _lengths(text: str) -> list[str]:
    return [
        ln
        for ln in text.splitlines()
        if ln.startswith(("# Minimum message length", "# Maximum message"))
    ]


def _listed(text: str) -> list[str]:
    lines = text.splitlines()
    i = lines.index("# List of Benchmarks to run:") + 2
    out = []
    while lines[i] != "#":
        out.append(lines[i][2:])
        i += 1
    return out


def test_repetition_rule():
    assert repetitions(0, 100000, 800 * 2**20) == (100000, 10000)
    assert repetitions(4 * 2**20, 100000, 800 * 2**20) == (200, 20)
    assert repetitions(100000, 1000, 2**20) == (10, 1)  # round(10.49)
    assert repetitions(2**20 * 3 // 2, 1000, 2**20) == (1, 0)  # round(0.67) = 1, no warm-up


@pytest.mark.parametrize(
    "bad, words",
    [
        (["-msgwr", "maybe"], "-msgwr must be one of"),
        (["-pause", "-2"], "-pause must be >= -1"),
        (["-msgsz", "4,x"], "-msgsz '4,x'"),
        (["-msgsz", "1", "-msgsz", "2"], "-msgsz given twice"),
        (["-msgsz", "1", "-msgsz", "1"], "-msgsz given more than once"),
        (["-iter", "10,5,3"], "IMB-P2P takes a maximum and a numerator only"),
        (["-iter", "0"], "counts must be positive"),
        (["-msglen", str(DATA / "README.md")], "is not a byte count"),
        (["-time", "3"], "-time: the p2p family takes -time only with --samples K or --precision"),
        (["-mem", "1"], "-mem: the p2p family does not use it"),
        (["-check"], "-check: the p2p family does not use it"),
        (["Stencil3D"], "nothing to measure with 2 processes"),
        (
            ["-msgsz", "2g"],
            "a message of 2147483648 bytes: the C loops of the p2p family count bytes in a C int",
        ),
        (["-msgsz", "5g", "-msglog", "3"], "a message of 5368709120 bytes"),
        (
            ["-iter", "3000000000"],
            "-iter '3000000000': counts must be at most 2147483647",  # one rule, every family
        ),
    ],
)
def test_bad_values_exit_2_with_one_line(bad, words):
    base = P2P[:2] if bad[0] == P2P[2] else P2P  # -pause once: given twice it is refused as such
    p = commbench("run", "-n", "2", *base, *bad, "-o", "-")
    assert p.returncode == 2 and p.stdout == "", p.stdout + p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "accepted" in lines[0], p.stderr
