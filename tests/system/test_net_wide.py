"""The net family beyond --net-host-pairs hosts (suites/net/many_hosts.py) and --net-fans.

Without MPI: the wide fold judges exactly as the per-host-pair fold (allpairs.Fold) on the
same samples (the same verdicts, ratios and statistics to float32's rounding), in both of
a group's forms (raw values, and a histogram beyond aggregate.CAP), so a verdict does not
depend on which side of --net-host-pairs a run is; the sorted chunks give the same groups
whatever their size. With MPI: 4 emulated hosts of 2 ranks with a tbf-limited host, run
with --net-host-pairs 2 --net-fans 2: a record per host, the matrix record's worst pairs
and summary, the slow host named, two fan targets drawn and said.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from commbench.suites.net import plan
from commbench.suites.net.allpairs import Fold
from commbench.suites.net.many_hosts import Groups, Wide, fold, sorted_groups
from commbench.suites.net.verdicts import named
from tests.support import netns
from tests.support.mpirun import ENV
from tests.system.test_diagnose import SLOW_MBIT, emulated, links_of

STATS = ("n", "median", "min", "max", "p10", "p90")


def folds(hosts: int, ppn: int, metric: str, samples: int = 20, slow=(), links=(), seed=3):
    """(Fold, Wide) fed the same synthetic samples: lognormal, slow hosts and slow links
    (host index pairs, both ways) 5x slower."""
    rh = [f"h{r // ppn}" for r in range(hosts * ppn)]
    p, hid = len(rh), np.arange(hosts * ppn) // ppn
    pl = plan.make(rh, "all")
    cov = plan.statement(pl, rh)
    rng = np.random.default_rng(seed)
    pair = [Fold(metric, 2**18, rh, cov), Wide(metric, 2**18, rh, cov)]
    for k in pl.shifts:
        dst = hid[(np.arange(p) + k) % p]
        f = np.ones(p)
        for h in slow:
            f[(hid == h) | (dst == h)] *= 5.0
        for a, b in links:
            f[((hid == a) & (dst == b)) | ((hid == b) & (dst == a))] *= 5.0
        t = 1e-5 * f[:, None] * rng.lognormal(0, 0.2, (p, samples))
        for x in pair:
            x.add(k, t)
    return pair


def same(a: dict, b: dict) -> None:
    for key in STATS:
        assert b[key] == pytest.approx(a[key], rel=1e-6, abs=1e-12), key


@pytest.mark.parametrize(
    "hosts,ppn,metric,slow,links",
    [
        (8, 1, "bandwidth", (1,), ()),  # every group raw
        (20, 4, "bandwidth", (1,), ()),  # hosts beyond CAP: histograms
        (6, 3, "latency", (2,), ()),
        (9, 1, "bandwidth", (), ((2, 5),)),  # a link alone: twice the excess
        (7, 2, "latency", (), ()),  # nobody
    ],
)
def test_wide_judges_as_the_host_pair_fold(hosts, ppn, metric, slow, links):
    f, w = folds(hosts, ppn, metric, slow=slow, links=links)
    thr = 2.0 if metric == "latency" else 0.5
    a, b = f.verdicts(thr), w.verdicts(thr)
    assert [v["hosts"] for v in a] == [v["hosts"] for v in b]
    assert named(a)[0] == {f"h{h}" for h in slow}
    if links:
        assert named(a)[1] == {tuple(f"h{h}" for h in lk) for lk in links}
    for x, y in zip(a, b, strict=True):
        assert y["ratio"] == pytest.approx(x["ratio"], rel=1e-6)
        assert y["kind"] == x["kind"] and y.get("explained_by") == x.get("explained_by")
        assert y["evidence"].keys() == x["evidence"].keys()
        same(x["value"], y["value"])
        same(x["population"], y["population"])
        assert y["value"]["ci95"] == pytest.approx(x["value"]["ci95"], rel=1e-6)
    pairs = {r.mode: r for r in f.records()}
    wide = w.records()
    hosts_recs, matrix = wide[:-1], wide[-1].extra
    assert [r.extra["host"] for r in hosts_recs] == [f"h{i}" for i in range(hosts)]
    assert matrix["records_per"] == "host"
    for i, row in enumerate(matrix["host_matrix"]):  # each host pair's median, as Fold's
        for j, m in enumerate(row):
            rec = pairs.get(f"{metric} h{i}->h{j}")
            assert (m is None) == (rec is None), (i, j)  # one rank per host: no diagonal
            assert rec is None or m == pytest.approx(rec.extra["stats"]["median"], rel=1e-6)
    inter = [r for r in pairs.values() if not r.extra.get("intra", True)]
    between = matrix["summary"]["between hosts"]
    assert between["host_pairs"] == len(inter) == hosts * (hosts - 1)
    assert between["samples"] == sum(r.extra["stats"]["n"] for r in inter)
    worst = sorted((r.extra["stats"]["median"] for r in inter), reverse=metric == "latency")[
        : len(matrix["worst_pairs"])
    ]
    assert [c["median"] for c in matrix["worst_pairs"]] == pytest.approx(worst, rel=1e-6)
    for r in hosts_recs:  # within a host: its own pairs' statistics, as Fold's record of them
        h = r.extra["host"]
        if ppn > 1:
            same(pairs[f"{metric} {h}->{h}"].extra["stats"], r.extra["within"])
        else:
            assert r.extra["within"] is None
        assert r.extra["stats"]["n"] == sum(
            q.extra["stats"]["n"] for q in inter if h in (q.extra["src_host"], q.extra["dst_host"])
        )


def test_sorted_groups_in_chunks_give_the_same_groups():
    rng = np.random.default_rng(1)
    items = [
        (rng.integers(-1, 50, 200), rng.lognormal(0, 1, (200, s)).astype(np.float32))
        for s in (3, 5, 0, 7)
    ]
    whole = list(sorted_groups(items, limit=1 << 30))
    parts = list(sorted_groups(items, limit=40))
    assert len(whole) == 1 and len(parts) > 5
    k = np.concatenate([k for k, _ in parts])
    v = np.concatenate([v for _, v in parts])
    assert (k == whole[0][0]).all() and (v == whole[0][1]).all()
    g = Groups(k, v)
    for i, key in enumerate(g.key.tolist()):  # each group: its values, sorted
        want = np.sort(np.concatenate([vs[ks == key].ravel() for ks, vs in items if vs.size]))
        assert (g.values(i) == want).all()
        assert g.median[i] == pytest.approx(float(np.median(want.astype(float))))


def test_which_fold_and_the_fan_targets():
    rh = [f"n{r}" for r in range(70)]
    cov = plan.statement(plan.make(rh, "auto"), rh)
    assert type(fold("latency", 8, rh, cov, 64)) is Wide
    assert type(fold("latency", 8, rh, cov, 70)) is Fold
    assert type(fold("latency", 8, rh, cov, 0)) is Fold  # all: always per host pair
    rh = [f"n{r // 2}" for r in range(20)]
    t, st = plan.fan_targets(rh, 0, 1)
    assert t == {f"n{i}": 2 * i for i in range(10)} and st["rule"] == "all"
    t, st = plan.fan_targets(rh, 4, 1)
    assert len(t) == 4 and st["rule"] == "sampled" and st["of"] == 10
    assert all(r == 2 * int(h[1:]) for h, r in t.items())
    assert plan.fan_targets(rh, 4, 1)[0] == t and plan.fan_targets(rh, 4, 2)[0] != t
    assert "4 of 10 hosts" in st["text"]


@pytest.mark.skipif(netns.available() is not None, reason=f"no emulated hosts: {netns.available()}")
def test_per_host_records_name_the_slow_host(tmp_path):
    """4 emulated hosts x 2 ranks, h2 limited by tbf, --net-host-pairs 2 --net-fans 2."""
    with netns.Cluster(4) as c:
        c.limit("h2", SLOW_MBIT)
        doc = emulated(
            c,
            tmp_path / "wide.json",
            2,
            "AllPairs",
            "FanIn",
            "--net-host-pairs",
            "2",
            "--net-fans",
            "2",
        )
    hosts, links = named(doc["verdicts"])
    assert hosts == {"h2"} and links <= links_of("h2", c.hosts), doc["verdicts"]
    recs = [r for r in doc["records"] if r["benchmark"] == "AllPairs" and "shift" not in r["extra"]]
    assert not [r for r in recs if "src_host" in r["extra"]]
    for metric in ("latency", "bandwidth"):
        per_host = [r for r in recs if r["extra"].get("host") and r["extra"]["metric"] == metric]
        assert [r["extra"]["host"] for r in per_host] == c.hosts
        assert all(r["extra"]["within"]["n"] > 0 and r["repetitions"] > 0 for r in per_host)
        m = next(r["extra"] for r in recs if r["mode"] == f"{metric} matrix")
        assert m["records_per"] == "host" and m["summary"]["between hosts"]["host_pairs"] == 12
        assert m["summary"]["within hosts"]["host_pairs"] == 4
        assert all(m["host_matrix"][i][i] is not None for i in range(4))
        assert len(m["worst_pairs"]) == 12
    bw = {
        r["extra"]["host"]: r["values"]["bytes_per_sec"]
        for r in recs
        if r["extra"].get("host") and r["extra"]["metric"] == "bandwidth"
    }
    m = next(r["extra"] for r in recs if r["mode"] == "bandwidth matrix")
    assert all("h2" in (w["src"], w["dst"]) for w in m["worst_pairs"][:6])  # h2's 6 pairs
    assert bw["h2"] < 0.67 * min(v for h, v in bw.items() if h != "h2")
    fans = [r for r in doc["records"] if r["benchmark"] == "FanIn"]
    assert len(fans) == 2 and all(r["extra"]["targets"]["rule"] == "sampled" for r in fans)
    out = doc["_stdout"]
    assert "a record per host" in out and "targets: 2 of 4 hosts" in out
    assert "SLOW host h2" in out
    rep = subprocess.run(
        [sys.executable, "-m", "commbench", "report", str(tmp_path / "wide.json")],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
        check=False,
    )
    assert rep.returncode == 0 and "a record per host" in rep.stdout, rep.stderr
    saved = json.loads((tmp_path / "wide.json").read_text())
    assert saved["verdicts"] == doc["verdicts"]
