"""The gpcnet family (GPCNeT 1.3's network tests and congestion): its rules without MPI,
its eight tests on one host and on emulated hosts (tests/support/netns.py), GPCNeT's table layout
read back by the parser of GPCNeT's own output (tests/support/gpcnet_table.py), and Congestion on
5 emulated hosts where one victim host's link is rate-limited only while the congestors
run: its impact factors exceed the others' and the verdict names it. Real MPI processes
throughout; the side-by-side with GPCNeT's binaries is benchmarks/gpcnet_side_by_side.py."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from commbench.suites.gpcnet import stats, topology
from commbench.suites.gpcnet.loadverdicts import factor_ci
from tests.support import gpcnet_table, netns
from tests.support.mpirun import ENV, MPIEXEC, commbench, records_in, terminate, wait_for_records

ROOT = str(Path(__file__).resolve().parents[2])
WHY_NOT = netns.available()
needs_hosts = pytest.mark.skipif(WHY_NOT is not None, reason=f"no emulated hosts: {WHY_NOT}")
TESTS = {
    "RRTwoSidedLat",
    "RRGetLat",
    "RRTwoSidedBW",
    "RRPutBW",
    "RRTwoSidedBWSync",
    "NatTwoSidedBW",
    "MultipleAllreduce",
    "MultipleAlltoall",
}


# -- rules, no MPI ------------------------------------------------------------------------
def test_split_is_by_host_with_gpcnets_share_and_names_what_it_left_out():
    hosts = [f"n{i:02d}" for i in range(10)]
    s = topology.split(hosts, 0.2, ["alltoall", "incast", "putincast", "getbcast"], 5)
    assert len(s.victims) == 2 and sum(len(v) for v in s.groups.values()) == 8
    assert all(len(v) == 2 for v in s.groups.values()) and not s.left_out
    assert sorted(s.victims + [h for v in s.groups.values() for h in v]) == hosts
    assert topology.split(hosts, 0.2, ["alltoall"], 5) == topology.split(
        hosts, 0.2, ["alltoall"], 5
    )  # seeded: the same roles again
    few = topology.split(hosts[:5], 3, ["alltoall", "incast", "putincast", "getbcast"], 1)
    assert len(few.victims) == 3 and list(few.groups) == ["alltoall"]
    assert few.left_out == ["incast", "putincast", "getbcast"]
    assert [topology.n_victims(n, 0.2) for n in (10, 11, 12, 16, 21, 3)] == [2, 3, 3, 4, 5, 2]


def test_rings_are_single_cycles_and_the_natural_ring_is_host_order():
    for n in (2, 3, 7, 16):
        for order in topology.rings(n, 30, 8675309, natural=False):
            seen, at = {0}, order[0]
            nxt = {order[i]: order[(i + 1) % n] for i in range(n)}
            while nxt[at] != order[0]:
                at = nxt[at]
                seen.add(at)
            assert sorted(order) == list(range(n))
    assert topology.rings(5, 3, 1, natural=True) == [list(range(5))] * 3


def test_gpcnets_percentile_counts_from_the_bottom_for_latency_from_the_top_for_bandwidth():
    x = np.arange(1, 1001, dtype=float)  # 1..1000
    lo, hi = x.min(), x.max()
    d = (hi - lo) / (stats.BUCKETS - 1)
    hist = np.bincount(((x - lo) / d).astype(np.int64), minlength=stats.BUCKETS)
    assert stats.from_histogram(hist, lo, d, 0.99, lat=True) == pytest.approx(990, abs=0.02)
    assert stats.from_histogram(hist, lo, d, 0.99, lat=False) == pytest.approx(11, abs=0.02)
    a, b = stats.percentile_ci(hist, lo, d, 0.99, lat=True)
    assert a < 990 < b and b - a < 20
    assert factor_ci([10, 12], [20, 30], lat=True) == [20 / 12, 30 / 10]
    assert factor_ci([100, 120], [50, 60], lat=False) == [100 / 60, 120 / 50]


# -- one host -----------------------------------------------------------------------------
def test_every_test_on_one_host_in_both_layouts(tmp_path):
    out = tmp_path / "g.json"
    p = commbench("run", "-n", "2", "--suite", "gpcnet", "-time", "0.2", "-o", str(out))
    assert p.returncode == 0, p.stderr[-3000:]
    doc = json.loads(out.read_text())
    recs = {r["benchmark"]: r for r in doc["records"]}
    assert set(recs) == TESTS and doc["complete"] is True
    for r in recs.values():
        g, st = r["extra"]["gpcnet"], r["extra"]["stats"]
        assert g["avg"] > 0 and g["p99"] > 0 and st["samples"] > 0 and st["measurements"] >= 1
        key = "t" if g["units"] == "usec" else "bytes_per_sec"
        assert r["values"][key] == pytest.approx(g["avg"] * (1 if key == "t" else 2**20))
        assert st["avg_ci"] is None or st["avg_ci"][0] <= g["avg"] <= st["avg_ci"][1]
    assert "ONE HOST: every rank stands in for a host" in p.stdout
    lay = commbench(
        "run",
        "-n",
        "2",
        "--suite",
        "gpcnet",
        "RRTwoSidedLat",
        "MultipleAlltoall",
        "-time",
        "0.2",
        "--gpcnet-layout",
        "-o",
        str(tmp_path / "l.json"),
    )
    assert lay.returncode == 0, lay.stderr[-3000:]
    got = gpcnet_table.parse(lay.stdout)
    rows = got["tables"]["Isolated Network Tests"]
    assert set(rows) == {"RR Two-sided Lat (8 B)", "Multiple Alltoall (4096 B)"}
    assert rows["RR Two-sided Lat (8 B)"]["units"] == "usec"
    assert all(len(x) == 80 for x in lay.stdout.splitlines() if x[:1] in ("+", "|"))
    verbose = commbench(
        "run",
        "-n",
        "2",
        "--suite",
        "gpcnet",
        "RRTwoSidedLat",
        "-time",
        "0.2",
        "--gpcnet-layout",
        "--gpcnet-verbose",
        "-o",
        "-",
    )
    assert verbose.returncode == 0, verbose.stderr[-3000:]
    tables = [x for x in verbose.stdout.splitlines() if x[:1] in ("+", "|")]
    assert tables and all(len(x) == 140 for x in tables)
    v = gpcnet_table.parse(verbose.stdout)["tables"]["Isolated Network Tests"]
    row = v["RR Two-sided Lat (8 B)"]
    assert row["min"] <= row["avg"] <= row["max"] and row["p99"] <= row["p999"]


ENGINES = ("native", "mpi4py")


def test_both_engines_make_gpcnets_calls_and_agree(tmp_path):
    """--engine both: every test from the C loops (commbench/native/gpcnet.c) and from the
    mpi4py loops, the same rows; a PMPI log (benchmarks/c/calls_trace.c) of the C loop's RR
    Two-sided Lat has GPCNeT's iteration: two MPI_Irecv and two MPI_Isend of 1 double, then
    MPI_Waitall of the four (random_ring.c's p2p_latency), 200 warm-up and 200 timed a ring."""
    out = tmp_path / "g.json"
    p = commbench("run", "-n", "2", "--suite", "gpcnet", "--engine", "both", "-time", "0.1",
                  "-o", str(out))  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    recs = json.loads(out.read_text())["records"]
    by = {e: {r["benchmark"] for r in recs if r["extra"]["engine"] == e} for e in ENGINES}
    assert by["native"] == by["mpi4py"] == TESTS
    lib = tmp_path / "libtrace.so"
    src = Path(ROOT) / "benchmarks" / "c" / "calls_trace.c"
    from commbench.native.extension import find_mpicc

    subprocess.run([find_mpicc(), "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    env = {"LD_PRELOAD": str(lib), "CALLS_TRACE_DIR": str(tmp_path)}
    t = commbench("run", "-n", "2", "--suite", "gpcnet", "RRTwoSidedLat", "--gpcnet-rings", "1",
                  "-time", "0.01", "-o", "-", env=env)  # fmt: skip
    assert t.returncode == 0, t.stderr[-3000:]
    (log,) = tmp_path.glob("calls.0.*")
    calls = [line.split()[:3] for line in log.read_text().splitlines()]
    it = [["Irecv", "1"], ["Irecv", "1"], ["Isend", "1"], ["Isend", "1"], ["Waitall", "4"]]
    shapes = [[c[0], c[1]] for c in calls]
    starts = [i for i in range(len(shapes)) if shapes[i : i + 5] == it]
    rings = [1]  # iterations back to back, a ring each (a measurement of -time 0.01 may be more)
    for a, b in zip(starts, starts[1:]):
        rings[-1:] = [rings[-1] + 1] if b - a == 5 else [rings[-1], 1]
    assert starts and set(rings) == {400}, (rings, starts[:5])


def test_congestion_without_a_congestor_is_not_run_and_says_why(tmp_path):
    """2 or 3 hosts (ranks standing in for hosts here): the victims take 2 and no congestor
    kind gets its 2 hosts, so nothing would congest. Congestion is a row `not run` with the
    reason, no loaded phase, no impact factors; the other tests run."""
    kinds = ["alltoall", "incast", "putincast", "getbcast"]
    for hosts in (2, 3):
        assert "leave no congestor" in topology.no_congestor(hosts, 0.2, kinds)
    assert topology.no_congestor(4, 0.2, kinds) is None
    assert "victim hosts asked of 4" in topology.no_congestor(4, 5, kinds)
    out = tmp_path / "c.json"
    p = commbench("run", "-n", "2", "--suite", "gpcnet", "Congestion", "RRTwoSidedLat",
                  "-time", "0.05", "-o", str(out))  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    recs = json.loads(out.read_text())["records"]
    assert [(r["benchmark"], r["status"]) for r in recs] == [
        ("Congestion", "invalid"), ("RRTwoSidedLat", "ok")]  # fmt: skip
    assert "2 hosts leave no congestor" in recs[0]["message"]
    assert "2 hosts leave no congestor" in p.stdout and "Congestion Tests" not in p.stdout


def test_congestion_options_are_refused_without_congestion():
    p = commbench("run", "-n", "2", "--suite", "gpcnet", "--gpcnet-victims", "3", "-o", "-")
    assert p.returncode == 2 and "--gpcnet-victims" in p.stderr
    p = commbench(
        "run", "-n", "2", "--suite", "gpcnet", "Congestion", "--gpcnet-victims", "1", "-o", "-"
    )
    assert p.returncode == 2 and "--gpcnet-victims" in p.stderr


def test_sigterm_in_the_loaded_phase_keeps_the_isolated_records(tmp_path):
    out = tmp_path / "s.json"
    cmd = [
        sys.executable,
        "-m",
        "commbench",
        "run",
        "-n",
        "4",
        "--suite",
        "gpcnet",
        "Congestion",
        "-time",
        "3",
        "-o",
        str(out),
    ]
    proc = subprocess.Popen(
        cmd, env=os.environ | ENV, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert wait_for_records(out, 6, 120, proc) >= 6  # roles, 4 isolated, a loaded one
    so, se = terminate(proc)
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and "SIGTERM" in doc["summary"]["interrupted"]
    modes = [r["mode"] for r in doc["records"]]
    assert modes[:5] == ["roles"] + ["isolated"] * 4 and "impact" not in modes


def test_incast_put_incast_and_get_bcast_congest_with_their_bandwidth_recorded(tmp_path):
    """8 ranks on one host standing in for 8 hosts: 2 victims, three congestor groups of 2."""
    out = tmp_path / "k.json"
    p = commbench(
        "run",
        "-n",
        "8",
        "--suite",
        "gpcnet",
        "Congestion",
        "--gpcnet-congestors",
        "incast,putincast,getbcast",
        "-time",
        "0.1",
        "--gpcnet-rings",
        "1",
        "-o",
        str(out),
    )
    assert p.returncode == 0, p.stderr[-3000:]
    recs = json.loads(out.read_text())["records"]
    assert set(recs[0]["extra"]["congestors"]) == {"incast", "putincast", "getbcast"}
    for r in recs:
        if r["mode"] == "loaded" and r["benchmark"] != "Links":
            bw = r["extra"]["stats"]["congestors"]
            assert set(bw) == {"incast", "putincast", "getbcast"}, bw
            assert all(v["MiB/s/rank"] > 0 for v in bw.values()), bw


# -- emulated hosts -----------------------------------------------------------------------
def start(c: netns.Cluster, args: list[str], ranks: list[int] | None = None) -> subprocess.Popen:
    """commbench across the cluster's hosts (one rank each, or ranks[i] on host i), running
    in the background."""
    ranks = ranks or [1] * len(c.hosts)
    cmd = [
        netns.find_mpiexec(),
        "-launcher",
        "ssh",
        "-launcher-exec",
        str(c.script),
        "-hosts",
        ",".join(f"{h}:{k}" for h, k in zip(c.hosts, ranks)),
        "-n",
        str(sum(ranks)),
        sys.executable,
        "-m",
        "commbench",
        "run",
        *args,
    ]
    env = c.env("ofi") | {"PYTHONPATH": ROOT}
    return subprocess.Popen(
        c.argv("h0", "exec " + shlex.join(cmd)),
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@needs_hosts
def test_eight_tests_on_four_hosts(tmp_path):
    out = tmp_path / "g.json"
    with netns.Cluster(4) as c:
        proc = start(
            c,
            [
                "--suite",
                "gpcnet",
                "--gpcnet-rings",
                "3",
                "-time",
                "0.5",
                "--timeout",
                "120",
                "--gpcnet-layout",
                "-o",
                str(out),
            ],
        )
        so, se = proc.communicate(timeout=400)
    assert proc.returncode == 0, so[-2000:] + se[-3000:]
    doc = json.loads(out.read_text())
    assert {r["benchmark"] for r in doc["records"]} == TESTS
    for r in doc["records"]:
        st = r["extra"]["stats"]
        assert st["hosts"] == 4 and set(st["per_host"]) == {"h0", "h1", "h2", "h3"}
    got = gpcnet_table.parse(so)["tables"]["Isolated Network Tests"]
    assert len(got) == 8 and "ONE HOST" not in so


@needs_hosts
def test_congestion_names_the_victim_host_whose_link_degrades_under_load(tmp_path):
    """5 hosts, 3 victims; once the isolated records are in, a victim host's link gets a
    tbf limit (as a link that gives way under congestion would): its links' factors, and
    no other host's, stand out and the verdict names it."""
    out = tmp_path / "c.json"
    with netns.Cluster(5) as c:
        proc = start(
            c,
            [
                "--suite",
                "gpcnet",
                "Congestion",
                "-time",
                "1",
                "--timeout",
                "120",
                "--gpcnet-victims",
                "3",
                "-o",
                str(out),
            ],
        )
        try:
            assert wait_for_records(out, 1, 120, proc) >= 1, proc.stderr.read()[-3000:]
            roles = json.loads(out.read_text())["records"][0]["extra"]
            slow = roles["victims"][1]
            assert wait_for_records(out, 5, 200, proc) >= 5  # roles + 4 isolated
            # 200 Mbit: the slow host's links 2.0-2.1x the next host's in two runs (100: 1.9x
            # and a congested phase of 51 s instead of 27; 400: 1.45x in one of two)
            c.limit(slow, 200)
            so, se = proc.communicate(timeout=300)
        finally:
            proc.kill()
    assert proc.returncode == 0, so[-2000:] + se[-3000:]
    doc = json.loads(out.read_text())
    assert roles["congestors"] == {"alltoall": sorted(set(c.hosts) - set(roles["victims"]))}
    assert roles["left_out"] == ["incast", "putincast", "getbcast"]
    imp = next(r["extra"] for r in doc["records"] if r["mode"] == "impact")
    mine = imp["per_host"][slow]["Links"]
    others = [f["Links"] for h, f in imp["per_host"].items() if h != slow]
    # every link of the slow host is slow; another host's are half its, half not
    assert mine > max(others), imp["per_host"]
    hosts = {v["hosts"][0] for v in doc["verdicts"] if v["kind"] == "host"}
    assert hosts == {slow}, [v["text"] for v in doc["verdicts"]]
    assert f"host {slow}" in so
    for t in ("RRTwoSidedLat", "RRTwoSidedBWSync", "MultipleAllreduce"):
        assert imp["tests"][t]["avg"] > 0 and imp["tests"][t]["gpcnet"]["avg"] is not None


@needs_hosts
def test_a_congestor_that_stops_answering_ends_at_timeout_with_the_records_kept(tmp_path):
    """SIGSTOP on a congestor host's rank during the loaded phase: the watchdog ends the run
    at --timeout, naming where it was, and the isolated records stay in the file."""
    out = tmp_path / "t.json"
    with netns.Cluster(4) as c:
        proc = start(
            c,
            ["--suite", "gpcnet", "Congestion", "-time", "0.5", "--timeout", "10", "-o", str(out)],
        )
        try:
            assert wait_for_records(out, 1, 120, proc) >= 1
            roles = json.loads(out.read_text())["records"][0]["extra"]
            host = next(h for h in roles["congestors"]["alltoall"] if h != "h0")  # not rank 0
            assert wait_for_records(out, 5, 200, proc) >= 5
            pids = [
                p
                for p in c.pids(host)
                if Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")[1:4]
                == [b"-m", b"commbench", b"run"]
            ]
            for p in pids:
                os.kill(p, signal.SIGSTOP)
            t0 = time.time()
            while time.time() - t0 < 120 and "no progress" not in out.read_text():
                time.sleep(0.5)  # the watchdog ends the run and writes what it has
            took = time.time() - t0
            for p in pids:  # a stopped process ignores the ending signal: as a dead node
                os.kill(p, signal.SIGKILL)
            so, se = proc.communicate(timeout=120)
        finally:
            proc.kill()
    assert took < 60, took
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and records_in(out) >= 5
    why = doc["summary"]["interrupted"]
    assert "no progress for 10 s" in why and f"ranks not answering: 1 on {host}" in why, why
    assert "did not answer" in se and "every record measured so far is kept" in se, se[-3000:]


@needs_hosts
def test_hosts_with_unequal_ranks_run_every_slice_without_a_hang(tmp_path):
    """h0 has two ranks, h1-h3 one: the second slice is h0's second rank alone (GPCNeT runs
    such a slice too); the link steps and the alltoall of a one-rank slice must not stall the
    others, nor count as network figures. h0 is a victim (the seed's split, found here), h2
    and h3 congest: Congestion needs a congestor, two hosts besides the victims."""
    kinds = ["alltoall", "incast", "putincast", "getbcast"]
    hosts = ["h0", "h1", "h2", "h3"]
    seed = next(s for s in range(100) if "h0" in topology.split(hosts, 2, kinds, s).victims)
    out = tmp_path / "u.json"
    with netns.Cluster(4) as c:
        args = ["--suite", "gpcnet", "MultipleAlltoall", "Congestion", "-time", "0.3"]
        args += ["--gpcnet-rings", "2", "--gpcnet-victims", "2", "--gpcnet-seed", str(seed)]
        proc = start(c, [*args, "--timeout", "60", "-o", str(out)], ranks=[2, 1, 1, 1])
        so, se = proc.communicate(timeout=300)
    assert proc.returncode == 0, so[-2000:] + se[-3000:]
    recs = json.loads(out.read_text())["records"]
    a2a = next(r["extra"]["stats"] for r in recs if r["benchmark"] == "MultipleAlltoall")
    assert a2a["p99"] > 0 and a2a["min"] > 0 and set(a2a["per_host"]) == set(hosts)
    victims = next(r["extra"]["victims"] for r in recs if r["mode"] == "roles")
    imp = next(r["extra"] for r in recs if r["mode"] == "impact")
    assert "h0" in victims and len(imp["links"]) == 2 and set(imp["per_host"]) == set(victims)


def test_statistics_reduced_to_rank_0_equal_those_of_every_rank_s_slots():
    """stats.summarise reduces slot by slot (rank 0 holds O(slots), not P x slots): its Avg,
    interval, min, max, worst, per-host means and totals equal the direct computation over
    every rank's slots, with a rank taking no part, a slot <= 0 and a longer rank."""
    p = subprocess.run(
        [
            MPIEXEC,
            "-n",
            "5",
            sys.executable,
            str(Path(__file__).parents[1] / "support" / "gpcnet_stats_job.py"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, **ENV),
        check=False,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    cases = json.loads(p.stdout.strip().splitlines()[-1])
    assert len(cases) == 4
    for name, c in cases.items():
        got, want = c["got"], c["want"]
        assert got["samples"] == 3 * 40 + 41 and got["p99"] is not None, name
        for k, v in want.items():
            assert got[k] == pytest.approx(v, rel=1e-12), (name, k)
