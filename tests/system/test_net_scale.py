"""The net family at scale (issue 35): host-pair aggregates that stay small (exact up to a cap,
a log histogram beyond), AllPairs' shift plan (every host pair covered; sampled, and said so,
when over its budget), verdicts from aggregates, and real MPI runs of 16 ranks whose records
show the plan and the host-pair statistics (one machine; and 4 emulated hosts in network
namespaces where they can be built, tests/support/netns.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from commbench.option_types import ConfigError
from commbench.suites.net import plan
from commbench.suites.net.aggregate import CAP, RESOLUTION, Agg, Pool, stats
from commbench.suites.net.allpairs import Fold
from commbench.suites.net.settings import AUTO_STEPS, shifts_option
from commbench.suites.net.verdicts import named, pair_verdicts
from tests.support import mpirun, netns

ROOT = str(Path(__file__).resolve().parents[2])
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])),
    "MPIR_CVAR_CH4_PROGRESS_THROTTLE": "1",
    "MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT": "64",
}
KEYS = ("median", "min", "p10", "p90", "max")


def exact(st: dict) -> dict:
    return {k: v for k, v in st.items() if k not in ("exact", "resolution")}


def near(got: dict, want: dict) -> None:
    """Histogram statistics within one bucket's width of the exact ones."""
    assert got["n"] == want["n"] and got["exact"] is False
    assert got["resolution"] == RESOLUTION
    for k in KEYS:
        assert abs(got[k] / want[k] - 1) <= RESOLUTION, (k, got[k], want[k])
    for g, w in zip(got["ci95"], want["ci95"]):
        assert abs(g / w - 1) <= RESOLUTION, (got["ci95"], want["ci95"])


def test_aggregate_is_exact_up_to_the_cap():
    rng = np.random.default_rng(1)
    for n in (1, 2, 5, 6, 7, 20, 121, CAP):
        v = rng.lognormal(0, 0.5, n)
        a = Agg()
        for part in np.array_split(v, 3):  # arriving step by step
            a.add(part)
        st = a.stats()
        assert a.exact and st["exact"] is True
        assert exact(st) == stats(v.tolist())  # the same numbers as the list's, to the bit
        assert a.evidence() == {"values": sorted(v.tolist())}


def test_aggregate_beyond_the_cap_is_a_histogram_within_its_resolution():
    rng = np.random.default_rng(2)
    for scale, sigma in ((1e9, 0.3), (12.5, 1.5), (3e-6, 0.05)):
        v = scale * rng.lognormal(0, sigma, 30_000)
        v[:7] = 0.0  # a bandwidth of 0 (no time): counted apart, below every bucket
        a = Agg()
        for part in np.array_split(v, 40):
            a.add(part)
        assert not a.exact and a.n == v.size and a.zeros == 7
        assert a.idx.size < 3000  # buckets, not values
        st, want = a.stats(), stats(v.tolist())
        assert st["min"] == 0.0 and st["max"] == want["max"]
        want["min"] = st["min"] = 1.0  # (0 / 0: the ratio check below)
        near(st, want)
        h = a.evidence()["histogram"]
        assert sum(h["count"]) + h["zeros"] == v.size and h["resolution"] == RESOLUTION


def test_pool_combines_aggregates_exactly_then_by_adding_histograms():
    rng = np.random.default_rng(3)
    small = {k: Agg(rng.lognormal(0, 0.3, 50)) for k in "abcd"}
    pool = Pool(small, {"ab": ["a", "b"]})
    joined = np.concatenate([small["a"].raw, small["b"].raw])
    assert exact(pool.group("ab").stats()) == stats(joined.tolist())
    rest = np.concatenate([small["c"].raw, small["d"].raw])
    assert exact(pool.rest("ab").stats()) == stats(rest.tolist())
    big = {k: Agg(rng.lognormal(i, 0.3, 3000)) for i, k in enumerate("abcde")}  # 15000 > CAP
    pool = Pool(big, {"ab": ["a", "b"]})
    values = {k: a.raw for k, a in big.items()}
    for view, keys in ((pool.group("ab"), "ab"), (pool.rest("ab"), "cde")):
        want = stats(np.concatenate([values[k] for k in keys]).tolist())
        near(view.stats(), want)
    one = pool.group("x", ["a", "c"])  # a group given by keys: histograms added on demand
    assert one.n == 6000 and one.stats()["exact"] is False
    total = Pool(big).rest("none", [])  # everything: the pool's total histogram
    assert total.n == 15000 and int(total.cnt.sum()) == 15000


def slow_host_aggs(values_per_pair: int, slow: str = "h2", hosts: int = 4) -> dict:
    rng = np.random.default_rng(4)
    names = [f"h{i}" for i in range(hosts)]
    out = {}
    for a in names:
        for c in names:
            f = 0.2 if slow in (a, c) and a != c else 1.0
            out[(a, c)] = Agg(1e9 * f * rng.lognormal(0, 0.1, values_per_pair))
    return out


def test_verdicts_from_aggregates_name_the_slow_host_with_evidence():
    for per_pair, raw in ((20, True), (3000, False)):
        aggs = slow_host_aggs(per_pair)
        found = pair_verdicts(aggs, "bandwidth", 0.5)
        hosts, links = named(found)
        assert hosts == {"h2"} and links == {("h0", "h2"), ("h1", "h2"), ("h2", "h3")}
        host = found[0]
        mine = [v for k, a in aggs.items() if "h2" in k and k[0] != k[1] for v in a.raw]
        if raw:  # 120 values: exact statistics, the values themselves as evidence
            assert exact(host["value"]) == stats(mine)
            assert sorted(host["evidence"]["values"]) == sorted(mine)
        else:  # 18000 values: the histogram
            near(host["value"], stats(mine))
            assert "histogram" in host["evidence"]
        assert all(v["explained_by"] == ["h2"] for v in found if v["kind"] == "link")
        assert host["population"]["n"] == 6 * per_pair  # the inter-host pairs without h2


def test_uniform_aggregates_name_nobody():
    aggs = slow_host_aggs(200, slow="nobody")
    assert pair_verdicts(aggs, "latency", 2.0) == [] == pair_verdicts(aggs, "bandwidth", 0.5)


def blocks(hosts: int, per_host: int) -> list[str]:
    return [f"n{r // per_host}" for r in range(hosts * per_host)]


@pytest.mark.parametrize("hosts,per_host", [(4, 16), (16, 8), (100, 2), (7, 3), (2, 64)])
def test_cover_reaches_every_host_pair_in_about_hosts_steps(hosts, per_host):
    rank_hosts = blocks(hosts, per_host)
    hid, order = plan.host_ids(rank_hosts)
    shifts = plan.cover(hid, len(order))
    assert shifts == [1] + [m * per_host for m in range(1, hosts)]  # blocks: 1, R, 2R, ...
    assert plan.coverage(shifts, hid, hosts).all()


def test_cover_holds_for_any_placement():
    rng = np.random.default_rng(5)
    layouts = {
        "round robin": [f"n{r % 6}" for r in range(48)],
        "uneven blocks": [f"n{h}" for h, n in enumerate([1, 5, 2, 9, 3, 1, 7]) for _ in range(n)],
        "shuffled": [f"n{h}" for h in rng.permutation(np.arange(60) % 10)],
    }
    for name, rank_hosts in layouts.items():
        hid, order = plan.host_ids(rank_hosts)
        shifts = plan.cover(hid, len(order))
        need = plan.needed(hid, len(order))
        assert (plan.coverage(shifts, hid, len(order)) | ~need).all(), name
        assert len(shifts) < len(rank_hosts) - 1, name


def test_plan_rules_and_the_sampling_statement():
    small = plan.make(blocks(4, 16), "auto")  # P-1 = 63: every shift
    assert small.rule == "all" and small.shifts == tuple(range(1, 64))
    big = blocks(16, 8)  # P-1 = 127 > 64: the cover, 16 steps
    auto = plan.make(big, "auto")
    assert auto.rule == "cover" and len(auto.shifts) == 16
    st = plan.statement(auto, big)
    assert st["uncovered"] == 0 and st["covered"] == st["host_pairs"] == 16 * 16
    more = plan.make(big, "40", seed=3)
    assert more.rule == "cover+random" and len(more.shifts) == 40
    assert set(auto.shifts) <= set(more.shifts)
    assert plan.make(big, "127").rule == "all" == plan.make(big, "all").rule
    sampled = plan.make(big, "5", seed=9)
    st = plan.statement(sampled, big)
    assert sampled.rule == "sampled" and len(sampled.shifts) == 5
    assert set(sampled.shifts) <= set(auto.shifts)
    assert st["uncovered"] == st["host_pairs"] - st["covered"] > 0
    assert len(st["uncovered_pairs"]) == min(st["uncovered"], plan.LISTED)
    assert "SAMPLED" in st["text"] and "5 of P-1 = 127" in st["text"]
    assert plan.make(big, "5", seed=9) == sampled  # the seed decides
    draws = {plan.make(big, "5", seed=s).shifts for s in range(6)}
    assert len(draws) > 1
    wide = [f"n{r}" for r in range(1000)]  # one rank per host: the cover is every shift
    p = plan.make(wide, "auto")
    assert p.rule == "sampled" and len(p.shifts) == AUTO_STEPS and p.cover == 999
    st = plan.statement(p, wide)
    assert st["covered"] == AUTO_STEPS * 1000 and st["uncovered"] == 999 * 1000 - st["covered"]


def test_net_shifts_option():
    assert [shifts_option(s) for s in ("auto", "ALL", "12")] == ["auto", "all", "12"]
    for bad in ("0", "-3", "some", ""):
        with pytest.raises(ConfigError, match="accepted"):
            shifts_option(bad)


def test_fold_keeps_host_pairs_not_samples():
    rank_hosts = blocks(4, 4)
    p = plan.make(rank_hosts, "all")
    cov = plan.statement(p, rank_hosts)
    fold = Fold("latency", 8, rank_hosts, cov, cap=64)
    rng = np.random.default_rng(6)
    every: dict = {}
    for k in p.shifts:
        t = rng.lognormal(-11, 0.2, (16, 5))
        rec = fold.add(k, t)
        assert rec.extra["shift"] == k and len(rec.rank_times["t"]) == 16
        assert rec.rank_times["t"] == np.median(t / 2, axis=1).tolist()
        for src in range(16):
            key = (rank_hosts[src], rank_hosts[(src + k) % 16])
            every.setdefault(key, []).extend((t[src] / 2 * 1e6).tolist())
    recs = fold.records()
    assert fold.aggs == {}  # gone as their records were made
    pairs, matrix = recs[:-1], recs[-1]
    assert len(pairs) == 16 and matrix.extra["plan"] == cov
    for r in pairs:
        vals = every[(r.extra["src_host"], r.extra["dst_host"])]
        st = r.extra["stats"]
        assert "values" not in st and st["n"] == len(vals)
        if len(vals) <= 64:
            assert exact(st) == stats(vals)
        else:
            near(st, stats(vals))
    assert matrix.extra["aggregate"] == {"raw_up_to": 64, "histogram_resolution": RESOLUTION}
    assert len(matrix.extra["rank_matrix"]) == 16


def commbench(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return mpirun.commbench(*args, timeout=timeout, env={"PYTHONPATH": ENV["PYTHONPATH"]}, cwd=ROOT)


def test_sixteen_ranks_every_pattern_with_a_plan(tmp_path):
    """16 real ranks (one machine): every pattern; AllPairs on --net-shifts 4 (one host: the
    cover is shift 1, three more drawn), its records say so."""
    out = tmp_path / "net16.json"
    p = commbench(
        "run",
        "-n",
        "16",
        "--suite",
        "net",
        "-time",
        "0.05",
        "--net-samples",
        "3",
        "--net-rings",
        "1",
        "--net-rounds",
        "2",
        "--net-shifts",
        "4",
        "-o",
        str(out),
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    doc = json.loads(out.read_text())
    recs = doc["records"]
    mats = {r["extra"]["metric"]: r["extra"] for r in recs if "host_matrix" in r["extra"]}
    pl = mats["latency"]["plan"]
    assert pl["rule"] == "cover+random" and pl["steps"] == 4 and pl["of"] == 15
    assert 1 in pl["shifts"] and pl["uncovered"] == 0
    shifts = sorted(
        r["extra"]["shift"] for r in recs if "shift" in r["extra"] and r["mode"].startswith("lat")
    )
    assert shifts == pl["shifts"]
    pairs = [r for r in recs if "src_host" in r["extra"]]
    assert len(pairs) == 2 and all(r["extra"]["intra"] for r in pairs)
    for r in pairs:  # 16 rank pairs a shift x each shift's samples (3, or fewer within -time)
        metric = r["extra"]["metric"]
        taken = [s["repetitions"] for s in recs if s["mode"].startswith(f"{metric} shift")]
        st = r["extra"]["stats"]
        assert len(taken) == 4 and all(1 <= k <= 3 for k in taken)
        assert st["n"] == 16 * sum(taken) and st["exact"] and "values" not in st
    assert "4 of P-1 = 15 shifts" in p.stdout and "every one of the 1 host pairs" in p.stdout
    rep = commbench("report", str(out))
    assert rep.returncode == 0 and "4 of P-1 = 15 shifts" in rep.stdout


@pytest.mark.skipif(netns.available() is not None, reason=f"no emulated hosts: {netns.available()}")
def test_sixteen_ranks_on_four_hosts_sampled_plan(tmp_path):
    """4 emulated hosts x 4 ranks, --net-shifts 3: 3 of the cover's 4 shifts (1, 4, 8, 12);
    the records name the host pairs left unmeasured, the matrix leaves them empty."""
    out = tmp_path / "hosts16.json"
    with netns.Cluster(4) as c:
        run = c.mpiexec(
            [
                "-n",
                "16",
                "-ppn",
                "4",
                sys.executable,
                "-m",
                "commbench",
                "run",
                "--suite",
                "net",
                "AllPairs",
                "-time",
                "0.05",
                "--net-samples",
                "3",
                "--net-shifts",
                "3",
                "--timeout",
                "60",
                "-o",
                str(out),
            ],
            netmod="ofi",
            timeout=240,
            env={
                k: ENV[k]
                for k in (
                    "PYTHONPATH",
                    "MPIR_CVAR_CH4_PROGRESS_THROTTLE",
                    "MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT",
                )
            },
        )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    doc = json.loads(out.read_text())
    m = next(r["extra"] for r in doc["records"] if r["mode"] == "bandwidth matrix")
    pl = m["plan"]
    assert pl["rule"] == "sampled" and pl["cover"] == 4 and len(pl["shifts"]) == 3
    assert set(pl["shifts"]) <= {1, 4, 8, 12} and pl["host_pairs"] == 16
    assert pl["covered"] + pl["uncovered"] == 16 and pl["uncovered"] > 0
    gone = {tuple(x) for x in pl["uncovered_pairs"]}
    for i, a in enumerate(m["hosts"]):
        for j, b in enumerate(m["hosts"]):
            assert (m["host_matrix"][i][j] is None) == ((a, b) in gone)
    pairs = [r for r in doc["records"] if r["mode"].startswith("bandwidth h")]
    assert len(pairs) == pl["covered"] and all(r["extra"]["stats"]["n"] > 0 for r in pairs)
    assert "SAMPLED" in run.stdout and "NOT MEASURED" in run.stdout
