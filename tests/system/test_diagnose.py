"""The net family (cluster diagnosis, `--suite net`): its patterns' records, its text
again from `report`, its heatmaps from `plot`, and its verdicts on emulated hosts
(tests/support/netns.py): one host's link rate-limited by tbf is named, with its links and
nothing else, and its values as evidence; with uniform links nobody is named. Real MPI
processes throughout. The family at scale (plans, aggregates): tests/system/test_net_scale.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from commbench.suites.net.verdicts import named
from tests.support import netns
from tests.support.load import QUIET, cpu_share, said

ROOT = str(Path(__file__).resolve().parents[2])
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])),
}
WHY_NOT = netns.available()
needs_hosts = pytest.mark.skipif(
    WHY_NOT is not None, reason=f"emulated hosts unavailable: {WHY_NOT}"
)
SLOW_MBIT = 200  # tbf on h2's link: 25 MB/s against the veths' GB/s
PATTERNS = {"AllPairs", "Rings", "Bisection", "FanIn", "FanOut", "Verdicts"}


def commbench(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "commbench", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=ENV,
        cwd=ROOT,
        check=False,
    )


def check_png(path: Path) -> None:
    """The figure opens, has a sensible size and is not blank."""
    import matplotlib.image as mpimg

    img = mpimg.imread(str(path))
    h, w = img.shape[:2]
    assert w >= 600 and h >= 300, (w, h)
    rgb = img[..., :3]
    assert float(rgb.std()) > 0.05  # not one colour
    assert float((rgb.mean(axis=2) < 0.9).mean()) > 0.05  # a good part of it is drawn on


def test_four_ranks_every_pattern_text_report_csv_plot(tmp_path):
    out, csv, png = tmp_path / "net.json", tmp_path / "net.csv", tmp_path / "net.png"
    p = commbench(
        "run",
        "-n",
        "4",
        "--suite",
        "diagnose",
        "--net-samples",
        "5",
        "--net-rings",
        "2",
        "--net-rounds",
        "3",
        "-o",
        str(out),
        "--csv",
        str(csv),
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert doc["family"]["name"] == "net" and doc["complete"] is True
    assert doc["verdicts"] == []  # one host: nothing to name
    recs = doc["records"]
    assert {r["benchmark"] for r in recs} == PATTERNS
    shifts = [r for r in recs if r["benchmark"] == "AllPairs" and "shift" in r["extra"]]
    assert sorted((r["extra"]["metric"], r["extra"]["shift"]) for r in shifts) == sorted(
        (m, k) for m in ("latency", "bandwidth") for k in (1, 2, 3)
    )
    assert all(r["repetitions"] == 5 and len(r["extra"]["rank_samples_s"]) == 4 for r in shifts)
    mats = {r["extra"]["metric"]: r["extra"] for r in recs if "host_matrix" in r["extra"]}
    assert set(mats) == {"latency", "bandwidth"}
    for m in mats.values():
        assert len(m["rank_matrix"]) == 4 and m["rank_matrix"][0][0] is None
        assert all(
            v > 0 for i, row in enumerate(m["rank_matrix"]) for j, v in enumerate(row) if i != j
        )
        assert m["host_matrix"][0][0] > 0 and m["rank_hosts"] == doc["metadata"]["rank_hosts"]
        # 3 ranks <= 64: every shift (--net-shifts auto), the one host pair covered
        assert m["plan"]["rule"] == "all" and m["plan"]["shifts"] == [1, 2, 3]
        assert m["plan"]["covered"] == m["plan"]["host_pairs"] == 1
        assert m["aggregate"] == {"raw_up_to": 4096, "histogram_resolution": 0.005}
    pairs = [r["extra"]["stats"] for r in recs if "src_host" in r["extra"]]
    assert [st["n"] for st in pairs] == [60, 60] and all(st["exact"] for st in pairs)
    assert "all P-1 = 3 shift steps" in p.stdout
    rings = [r["mode"] for r in recs if r["benchmark"] == "Rings"]
    assert rings == [
        f"{m} {k}" for m in ("latency", "bandwidth") for k in ("natural", "random 1", "random 2")
    ]
    dist = [r for r in recs if r["mode"] == "bandwidth distribution"]
    assert len(dist) == 1 and dist[0]["extra"]["stats"]["n"] == 6  # 3 rounds x 2 pairs
    assert [r["benchmark"] for r in recs if r["benchmark"].startswith("Fan")] == ["FanIn", "FanOut"]
    assert "no host or link stands out" in p.stdout
    rows = csv.read_text().splitlines()
    assert {line.split(",")[1] for line in rows[1:]} == PATTERNS
    # report prints the run's text again, from the matrices to the verdicts
    rep = commbench("report", str(out))
    assert rep.returncode == 0, rep.stderr
    start = "# AllPairs latency"
    assert (
        rep.stdout[rep.stdout.index(start) :].strip() == p.stdout[p.stdout.index(start) :].strip()
    )
    pl = commbench("plot", str(out), "-o", str(png))
    assert pl.returncode == 0, pl.stderr
    check_png(png)
    assert commbench("plot", str(out), "-o", str(tmp_path / "net.svg")).returncode == 0


def test_net_options_refused_where_they_do_not_belong():
    p = commbench("run", "-n", "2", "--suite", "net", "--net-threshold", "0", "-o", "-")
    assert p.returncode == 2 and "--net-threshold" in p.stderr
    p = commbench("run", "-n", "2", "--suite", "net", "-msglog", "4", "-o", "-")
    assert p.returncode == 2 and "-msglog" in p.stderr


def emulated(c: netns.Cluster, out: Path, ppn: int, *args: str) -> dict:
    p = c.mpiexec(
        [
            "-n",
            str(len(c.hosts) * ppn),
            "-ppn",
            str(ppn),
            sys.executable,
            "-m",
            "commbench",
            "run",
            "--suite",
            "net",
            "--timeout",
            "60",
            "-o",
            str(out),
            *args,
        ],
        netmod="ofi",
        timeout=240,
        env={"PYTHONPATH": ENV["PYTHONPATH"]},
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    doc = json.loads(out.read_text())
    doc["_stdout"] = p.stdout
    return doc


def links_of(host: str, hosts: list[str]) -> set[tuple[str, ...]]:
    return {tuple(sorted((host, h))) for h in hosts if h != host}


@needs_hosts
def test_slow_host_is_named_with_its_links(tmp_path):
    """tbf on h2: every run names h2, and no other host; the links it names are h2's."""
    with netns.Cluster(4) as c:
        c.limit("h2", SLOW_MBIT)
        docs = [emulated(c, tmp_path / f"slow{i}.json", 1) for i in range(3)]
    for doc in docs:
        hosts, links = named(doc["verdicts"])
        assert hosts == {"h2"}, [v["text"] for v in doc["verdicts"]]
        assert links and links <= links_of("h2", c.hosts), [v["text"] for v in doc["verdicts"]]
        assert "SLOW host h2" in doc["_stdout"]
        for v in doc["verdicts"]:  # the evidence: the values themselves (under the cap)
            assert sorted(v["evidence"]["values"]) == v["evidence"]["values"]
            assert len(v["evidence"]["values"]) == v["value"]["n"] and v["value"]["exact"]
        m = next(r["extra"] for r in doc["records"] if r["mode"] == "bandwidth matrix")
        assert m["hosts"] == ["h0", "h1", "h2", "h3"]
        slow = [m["host_matrix"][2][j] for j in (0, 1, 3)] + [
            m["host_matrix"][i][2] for i in (0, 1, 3)
        ]
        assert max(slow) < 40e6  # 25 MB/s (tbf) plus its burst
    png = tmp_path / "slow.png"
    out = tmp_path / "slow0.json"
    pl = subprocess.run(
        [sys.executable, "-m", "commbench", "plot", str(out), "-o", str(png)],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert pl.returncode == 0, pl.stderr
    check_png(png)


@needs_hosts
def test_uniform_links_name_nobody(tmp_path, measured):
    """Uniform links: on a quiet machine at most 4 of 9 runs name anything. A run here names
    something at 1.5-3.6x now and then (2 cores shared by 4 ranks and the veths):
    benchmarks/uniform_links_rate.py measured 23 of 200 quiet runs (11.5 %, 95 % interval
    7.4-16.8 %; docs/diagnose.md). At the interval's upper end 4 of 9 passes 99.1 % of CI
    runs (3 of 9, the bound until then, 95.1 %). What 9 runs can tell: a rule naming
    something in 30 % of runs passes 90 % of the time, one naming in 80 % of runs 2 % (no
    bound of 40 runs or fewer tells 30 % from 17 % at 1 % false failures: that is the
    script's job, not CI's). With the cores kept busy by other work, a starved rank's
    links really are slower while they are measured: a full run beside two busy loops
    named something in 4 of 9 (issue 45); there the bound is 6 of 9. Busy means a spinning
    probe got less than 85 % of a core before or after the runs (the load average cannot
    tell: the test's own 4 ranks raise it). The count is printed either way."""
    share = cpu_share()
    named_runs = []
    with netns.Cluster(4) as c:
        for i in range(9):
            doc = emulated(c, tmp_path / f"even{i}.json", 1)
            named_runs += [[v["text"] for v in doc["verdicts"]]] if doc["verdicts"] else []
            if not doc["verdicts"]:
                assert "no host or link stands out" in doc["_stdout"]
    share = min(share, cpu_share())
    loaded = share < QUIET
    measured(f"uniform links: something named in {len(named_runs)} of 9 runs; {said(share)}")
    assert len(named_runs) <= (6 if loaded else 4), named_runs  # docs/diagnose.md


@needs_hosts
def test_two_ranks_per_host_keep_intra_host_pairs_apart(tmp_path):
    with netns.Cluster(4) as c:
        c.limit("h2", SLOW_MBIT)
        doc = emulated(c, tmp_path / "eight.json", 2, "AllPairs", "FanIn")
    assert doc["metadata"]["rank_hosts"] == ["h0", "h0", "h1", "h1", "h2", "h2", "h3", "h3"]
    hosts, links = named(doc["verdicts"])
    assert hosts == {"h2"} and links <= links_of("h2", ["h0", "h1", "h2", "h3"]), doc["verdicts"]
    pairs = [r for r in doc["records"] if r["benchmark"] == "AllPairs" and "src_host" in r["extra"]]
    intra = {r["extra"]["src_host"] for r in pairs if r["extra"]["intra"]}
    assert intra == {"h0", "h1", "h2", "h3"}
    m = next(r["extra"] for r in doc["records"] if r["mode"] == "bandwidth matrix")
    assert all(m["host_matrix"][i][i] is not None for i in range(4))  # the diagonal: within a host
    for v in doc["verdicts"]:  # populations are inter-host pairs only
        assert v["population"]["n"] > 0 and "within" not in v["against"]
