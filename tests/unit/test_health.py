"""`commbench health`'s verdict per host (commbench.models.health) on results documents built
here: the network's named host, memory against the other hosts (only on distinct machines,
and with at least two others), rows of one host that fail the site's expectations, a run
that did not finish. The whole command on a 4-node Slurm: tests/system/test_slurm_cluster.py."""

from __future__ import annotations

from commbench import records
from commbench.models import expectations as ex
from commbench.models import health
from commbench.views import health_text

COPY = [[1, 1e9], [2**20, 20e9]]


def _doc(hosts, copies=None, machines=None, verdicts=(), complete=True):
    mem = {
        h: {"copy": c, "machine": m}
        for h, c, m in zip(hosts, copies or [COPY] * len(hosts), machines or hosts)
    }
    return {
        "complete": complete,
        "metadata": {"hosts": hosts, "rank_hosts": list(hosts), "limits": {"memory": mem}},
        "verdicts": list(verdicts),
        "summary": {} if complete else {"interrupted": "rank 3 died"},
    }


def test_every_host_good_when_nothing_is_shown():
    got = health.judge(_doc(["a", "b", "c"]), [], 0.3)
    assert got == {h: {"verdict": "good", "evidence": [], "figures": []} for h in "abc"}
    assert health.exit_status(got) == 0


def test_the_host_the_network_names_is_slow_with_its_evidence():
    named = {"kind": "host", "hosts": ["b"], "text": "host b: AllPairs bandwidth 25 MB/s ..."}
    link = {"kind": "link", "hosts": ["a", "c"], "text": "link a-c: ..."}  # no host accused
    got = health.judge(_doc(["a", "b", "c"], verdicts=[named, link]), [], 0.3)
    assert got["b"]["verdict"] == "slow" and got["b"]["evidence"] == ["network: " + named["text"]]
    assert got["a"]["verdict"] == got["c"]["verdict"] == "good"
    assert health.exit_status(got) == 1
    assert health.reason(got["b"]["evidence"], 40) == "commbench: slow: network: host b: All..."


def test_memory_against_the_other_hosts_only_where_it_can_be_told():
    slow = [[1, 1e9], [2**20, 9e9]]
    notes: list[str] = []
    got = health.judge(_doc(["a", "b", "c"], [COPY, slow, COPY]), [], 0.3, notes=notes)
    assert got["b"]["verdict"] == "slow" and "(0.45x)" in got["b"]["evidence"][0]
    assert [got[h]["verdict"] for h in "ac"] == ["good", "good"]
    assert notes == ["shared memory not measured: one rank a host (run two or more a host)"]
    notes.clear()
    # two hosts: which of them is slow cannot be told
    got = health.judge(_doc(["a", "b"], [COPY, slow]), [], 0.3, notes=notes)
    assert {v["verdict"] for v in got.values()} == {"good"}
    assert "memory not compared: fewer than 3 hosts measured it" in notes
    # one machine (namespaces, containers): the copies ran on the same memory at once
    notes.clear()
    doc = _doc(["a", "b", "c"], [COPY, slow, COPY], machines=["m", "m", "m"])
    assert {v["verdict"] for v in health.judge(doc, [], 0.3, notes=notes).values()} == {"good"}
    assert any(n.startswith("memory not compared: hosts share a machine") for n in notes)


def test_a_row_of_one_host_that_fails_the_expectations_accuses_that_host():
    doc = _doc(["a", "b", "c"])
    doc["metadata"]["rank_hosts"] = ["a", "a", "b", "c"]
    one = records.Measurement("PingPong", "mpi1", "single", 2, "", 0, 10, groups=[[0, 1]],
                              values={"t_max": 9.0})  # fmt: skip
    across = records.Measurement("PingPong", "mpi1", "single", 2, "", 8, 10, groups=[[1, 2]],
                                 values={"t_max": 9.0})  # fmt: skip
    rules = ex.parse('[[expect]]\nbenchmark = "PingPong"\nt = "<= 2 us"\n', "site.toml")
    verdicts = ex.judge(rules, "r.json", [], [one, across])
    assert [v.verdict for v in verdicts] == ["fail", "fail"]
    got = health.judge(doc, [one, across], 0.3, verdicts)
    assert got["a"]["verdict"] == "slow" and "site.toml:1" in got["a"]["evidence"][0]
    assert got["b"]["verdict"] == got["c"]["verdict"] == "good"  # across hosts: nobody


def test_a_run_that_did_not_finish_proves_nothing_slow():
    named = {"kind": "host", "hosts": ["b"], "text": "host b: ..."}
    got = health.judge(_doc(["a", "b"], verdicts=[named], complete=False), [], 0.3)
    assert got == {h: {"verdict": "failed to run", "evidence": ["rank 3 died"]} for h in "ab"}
    assert health.exit_status(got) == 2
    lines = health_text.lines(got, [], ["x"])
    assert lines[0] == "commbench health: 2 hosts: 0 good, 0 slow, 2 failed to run"
    assert lines[-1] == "  note: x"


def _intra(host: str, metric: str, median: float, ci: tuple[float, float]):
    x = 8 if metric == "latency" else 2**20
    return records.Measurement(
        "AllPairs", "net", "single", 6, f"{metric} {host}->{host}", x, 40,
        extra={"metric": metric, "intra": True, "src_host": host, "dst_host": host,
               "stats": {"n": 40, "median": median, "ci95": list(ci)}},
    )  # fmt: skip


def test_shared_memory_pairs_against_the_other_hosts_and_the_limits():
    doc = _doc(["a", "b", "c"])
    for m in doc["metadata"]["limits"]["memory"].values():
        m["floor_us"] = 0.1
    recs = [
        _intra(h, "latency", t, (t * 0.9, t * 1.1)) for h, t in (("a", 1), ("b", 3), ("c", 1.1))
    ]
    recs += [_intra(h, "bandwidth", 10e9, (9e9, 11e9)) for h in "abc"]
    notes: list[str] = []
    got = health.judge(doc, recs, 0.3, notes=notes)
    assert [got[h]["verdict"] for h in "abc"] == ["good", "slow", "good"] and notes == []
    assert got["b"]["evidence"][0].startswith("shared memory: latency 3 us (95% CI 2.7..3.3)")
    assert got["a"]["figures"] == [
        "shared memory: 1 us between two ranks (10.0x its 0.1 us floor); "
        "10 GB/s at 1048576 bytes (0.50 of one copy)"
    ]
    # one machine: figures, no verdict; one rank a host: nothing to measure, said
    same = _doc(["a", "b", "c"], machines=["m", "m", "m"])
    assert {v["verdict"] for v in health.judge(same, recs, 0.3).values()} == {"good"}
    health.judge(_doc(["a", "b", "c"]), [], 0.3, notes=notes)
    assert notes[0].startswith("shared memory not measured: one rank a host")
