"""One measurement loop for every family (commbench.harness.rows): the procedure families
(osu, p2p, mt, msgrate) take --samples, --precision and --shuffle as the IMB ones do, and
`commbench compare` gates their runs. Real MPI runs; the slowdown of the gate test is a real
rate-limited link between two emulated hosts (tests/support/netns.py).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from tests.support import netns
from tests.support.load import QUIET, cpu_share, said
from tests.support.mpirun import commbench, mpiexec

ROOT = str(Path(__file__).resolve().parents[2])
WHY_NOT = netns.available()
OSU = ["--suite", "osu", "latency", "bw", "allreduce", "-m", "1:256", "-i", "200", "-x", "20"]


def run(out: Path, *args: str, np_: int = 2) -> dict:
    p = mpiexec(np_, "run", *args, "-o", str(out))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    return json.loads(out.read_text())


def gate(*args) -> tuple[int, dict]:
    p = commbench("compare", *map(str, args), "--json", "-")
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    return p.returncode, json.loads(p.stdout)


@pytest.fixture(scope="module")
def osu_sampled(tmp_path_factory) -> tuple[Path, dict, float]:
    """The run, and the share of a core a spinning probe got before or after it (the lower)."""
    out = tmp_path_factory.mktemp("osu") / "a.json"
    share = cpu_share()
    doc = run(out, *OSU, "--samples", "12")
    return out, doc, min(share, cpu_share())


def test_osu_samples_are_kept_and_gated(osu_sampled, tmp_path, measured):
    """Every row: 12 samples of the compared time, its CI, the row itself the median sample.
    The even and the odd samples pass the gate on a quiet machine. With the cores busy with
    other work, one burst can move a 6-sample median past 10 % (a run beside two busy loops
    flagged 1 of 27 rows, issue 45; the gate's noise is issue 49): there at most 3 of 27 may
    be flagged, and the count is printed either way."""
    path, doc, share = osu_sampled
    recs = doc["records"]
    assert {r["benchmark"] for r in recs} == {"latency", "bw", "allreduce"} and len(recs) == 27
    for r in recs:
        st = r["extra"]["samples"]
        assert st["k"] == 12 and len(st["t_max_samples"]) == 12 and st["quantity"] == "t_max"
        lo, hi = st["t_max_median_ci95"]
        assert lo <= st["t_max_median"] <= hi
        at = [abs(v / r["values"]["t_max"] - 1) < 1e-9 for v in sorted(st["t_max_samples"])]
        assert at.index(True) == 5  # the published row is the lower median of its 12 samples
    text = commbench("report", str(path))
    assert text.returncode == 0 and "# OSU MPI Latency Test v7.4" in text.stdout
    rc, verdict = gate(path, path, "--allow-noisy")  # the rows decide: nothing is slower
    assert rc == 0 and verdict["summary"]["tested"] == 27 and verdict["verdict"] != "refused"
    # the even and the odd samples of one run: the same conditions by construction
    # (tests/system/test_gate.py)
    halves = []
    for start in (0, 1):
        half = json.loads(path.read_text())
        for r in half["records"]:
            r["extra"]["samples"]["t_max_samples"] = r["extra"]["samples"]["t_max_samples"][
                start::2
            ]
        halves.append(tmp_path / f"half{start}.json")
        halves[-1].write_text(json.dumps(half))
    # --allow-noisy: 6 samples a side make a wide test ("too noisy" where a burst widens it
    # further); what this asks is that the rows call nothing
    rc, verdict = gate(*halves, "--threshold", "10%", "--allow-noisy")
    flagged = verdict["regressions"]
    measured(f"even against odd samples: {len(flagged)} of 27 rows flagged; {said(share)}")
    if share >= QUIET:
        assert rc == 0 and verdict["verdict"] == "pass", flagged
    else:
        assert rc in (0, 1) and len(flagged) <= 3 and verdict["summary"]["tested"] == 27, flagged
    assert all(r["k_old"] == r["k_new"] == 6 for r in verdict["rows"])


def test_without_samples_the_rows_are_the_familys_own(tmp_path):
    """No --samples: one measurement a row, no samples key, the row as the family builds it."""
    doc = run(
        tmp_path / "p.json", "--suite", "osu", "latency", "-m", "1:8", "-i", "100", "-x", "10"
    )
    assert [r["bytes"] for r in doc["records"]] == [1, 2, 4, 8]
    assert all("samples" not in r["extra"] and "position" not in r["extra"] for r in doc["records"])


@pytest.mark.parametrize(
    "suite",
    [
        ["--suite", "osu", "latency", "allreduce", "-m", "1:64", "-i", "200", "-x", "20"],
        ["--suite", "p2p", "PingPong", "Birandom", "-msglog", "0:3", "-iter", "200"],
    ],
)
def test_precision_and_shuffle(suite, tmp_path):
    """--precision: every row says how its samples ended; --shuffle: the rows' order is drawn
    from the seed (the same seed, the same order) and every record has its place in it."""
    doc = run(
        tmp_path / "a.json",
        *suite,
        "--precision",
        "20%",
        "--precision-budget",
        "1,40",
        "--shuffle",
        "7",
        np_=2 if suite[1] == "osu" else 4,
    )
    recs = doc["records"]
    for r in recs:
        p = r["extra"]["precision"]
        assert (
            p["stopped"] in ("reached", "time budget", "sample budget")
            and p["k"] == r["extra"]["samples"]["k"]
        )
        assert (p["k"] >= 6 or p["stopped"] == "time budget") and (
            not p["reached"] or p["achieved"] <= 0.2
        )
    assert sorted(r["extra"]["position"] for r in recs) == list(range(len(recs)))
    by_bench: dict = {}
    for r in sorted(recs, key=lambda r: r["extra"]["position"]):
        by_bench.setdefault(r["benchmark"], []).append(r["bytes"])
    assert any(b != sorted(b) for b in by_bench.values()), by_bench  # not the ascending order
    again = run(tmp_path / "b.json", *suite, "--shuffle", "7", np_=2 if suite[1] == "osu" else 4)
    order = [
        (r["benchmark"], r["bytes"])
        for r in sorted(again["records"], key=lambda r: r["extra"]["position"])
    ]
    assert order == [
        (r["benchmark"], r["bytes"]) for r in sorted(recs, key=lambda r: r["extra"]["position"])
    ]


def test_msgrate_and_mt_take_samples(tmp_path):
    doc = run(
        tmp_path / "m.json",
        "--suite",
        "msgrate",
        "pair_based",
        "--iters",
        "5",
        "--peers",
        "2",
        "--samples",
        "3",
        np_=4,
    )
    (r,) = doc["records"]
    assert r["extra"]["samples"]["k"] == 3 and r["values"]["t_max"] == pytest.approx(
        sorted(r["extra"]["samples"]["t_max_samples"])[1]
    )
    doc = run(
        tmp_path / "t.json",
        "--suite",
        "mt",
        "PingPongMT",
        "-count",
        "1,64",
        "-repeat",
        "50",
        "--mt-threads",
        "2",
        "--samples",
        "3",
    )
    assert [r["extra"]["samples"]["k"] for r in doc["records"]] == [3, 3]


def test_a_check_failure_in_any_sample_is_the_row_published(tmp_path):
    """-c with --samples: the corrupted sender spoils every sample; the row says Fail, exit 1."""
    out = tmp_path / "c.json"
    p = mpiexec(
        2,
        "run",
        "--suite",
        "osu",
        "latency",
        "-m",
        "1:4",
        "-i",
        "20",
        "-x",
        "2",
        "-c",
        "--samples",
        "3",
        "-o",
        str(out),
        env={"COMMBENCH_FAULT_CORRUPT": "0"},
    )
    assert p.returncode == 1, p.stderr[-2000:]
    recs = json.loads(out.read_text())["records"]
    assert recs and all(
        r["extra"]["validation"] == "Fail" and r["extra"]["samples"]["k"] == 3 for r in recs
    )


def emulated(c: netns.Cluster, out: Path) -> Path:
    p = c.mpiexec(
        [
            "-n",
            "2",
            "-ppn",
            "1",
            sys.executable,
            "-m",
            "commbench",
            "run",
            "--suite",
            "osu",
            "latency",
            "bw",
            "-m",
            "8192:65536",
            "-i",
            "10",
            "-x",
            "2",
            "-W",
            "4",
            "--samples",
            "10",
            "--timeout",
            "120",
            "-o",
            str(out),
        ],
        netmod="ofi",
        timeout=300,
        env={"PYTHONPATH": ROOT},
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    return out


@pytest.mark.skipif(WHY_NOT is not None, reason=f"emulated hosts unavailable: {WHY_NOT}")
def test_a_rate_limited_link_is_an_osu_regression(tmp_path):
    """h1's link at 100 Mbit/s: OSU's latency and bandwidth rows of 8-64 KiB are named slower."""
    with netns.Cluster(2) as c:
        base = emulated(c, tmp_path / "base.json")
        c.limit("h1", 100)
        slow = emulated(c, tmp_path / "slow.json")
    rc, doc = gate(base, slow, "--threshold", "10%")
    assert rc == 1 and doc["verdict"] == "regression"
    named = {
        f"{b} np=2 mode=MPI_CHAR bytes={x}"
        for b in ("latency", "bw")
        for x in (8192, 16384, 32768, 65536)
    }
    assert named <= set(doc["regressions"]), doc["regressions"]


def test_a_stopped_osu_row_keeps_every_completed_sample(tmp_path):
    """SIGTERM in the middle of --samples rounds of OSU's latency: every row so far is one
    record (status interrupted) in the sweep's order, its median sample, every completed
    sample kept, no row more than one round ahead of another."""
    import os
    import subprocess

    from tests.support.mpirun import ENV, terminate

    out = tmp_path / "stop.json"
    cmd = [
        sys.executable,
        "-m",
        "commbench",
        "run",
        "-n",
        "2",
        "--suite",
        "osu",
        "latency",
        "-m",
        "1:2",
        "-i",
        "2000",
        "-x",
        "10",
        "--samples",
        "100000",
        "-time",
        "1000",
        "-o",
        str(out),
    ]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, **ENV),
    )
    try:
        time.sleep(3)  # a few hundred rounds (a row's -time: 1000 s)
        assert proc.poll() is None
    finally:
        _, err = terminate(proc)
    doc = json.loads(out.read_text())
    assert doc["complete"] is False, err[-2000:]
    recs = doc["records"]
    assert [(r["status"], r["bytes"]) for r in recs] == [("interrupted", 1), ("interrupted", 2)]
    ks = [r["extra"]["samples"]["k"] for r in recs]
    assert min(ks) >= 2 and max(ks) - min(ks) <= 1, ks
    for r in recs:
        st = r["extra"]["samples"]
        assert st["k"] == len(st["t_max_samples"]) and st["taken"] == "rounds"
        assert "every completed sample is kept" in r["message"]
        t = sorted(st["t_max_samples"])[(st["k"] - 1) // 2]
        assert r["values"]["t_max"] == pytest.approx(t)


@pytest.mark.parametrize(
    "suite, np_",
    [
        (["--suite", "osu", "latency", "-m", "1:8", "-i", "100", "-x", "10"], 2),
        (["--suite", "p2p", "PingPong", "-msglog", "0:2", "-iter", "100"], 2),
        (["--suite", "msgrate", "pair_based", "--iters", "5", "--peers", "2"], 4),
    ],
)
def test_the_text_says_how_rows_were_measured(suite, np_, tmp_path):
    """--precision and --shuffle in the text of every procedure family, as in the IMB text:
    the target and the order in the preamble, the rows that reached it at the end; and
    `commbench report` prints the same again from the results file."""
    out = tmp_path / "r.json"
    p = mpiexec(
        np_,
        "run",
        *suite,
        "--precision",
        "40%",
        "--precision-budget",
        "1,20",
        "--shuffle",
        "5",
        "-o",
        str(out),
    )
    assert p.returncode == 0, p.stderr[-2000:]
    rows = len(json.loads(out.read_text())["records"])
    for text in (p.stdout, commbench("report", str(out)).stdout):
        assert "# Precision target               :   +-40% (95% CI of the median t_max)" in text
        assert "# Order                          :   shuffled, seed 5" in text
        assert (
            "rows reached +-40% (95% CI of the median t_max)" in text and f" of {rows} rows" in text
        )
