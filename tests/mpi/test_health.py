"""`commbench health` on this one host with real MPI processes: the curated net run, a
verdict for the host, the results file's "health"; bad input refused before measuring. The
verdicts that name and drain a slow node: tests/system/test_slurm_cluster.py."""

from __future__ import annotations

import json

import pytest

from tests.support.mpirun import commbench


def test_one_host_is_good_and_the_results_file_says_so(tmp_path):
    out, js = tmp_path / "h.json", tmp_path / "v.json"
    p = commbench("health", "-n", "2", "-o", str(out), "--json", str(js), "--timeout", "120")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    doc = json.loads(out.read_text())
    (host,) = doc["metadata"]["hosts"]
    assert doc["family"]["name"] == "net" and doc["complete"]
    (v,) = doc["health"]["verdicts"].values()
    assert list(doc["health"]["verdicts"]) == [host] and (v["verdict"], v["evidence"]) == (
        "good",
        [],
    )
    # its two ranks' shared memory, against its limits
    assert v["figures"][0].startswith("shared memory: ") and " of one copy)" in v["figures"][0]
    assert doc["health"]["notes"] == ["memory not compared: fewer than 3 hosts measured it"]
    assert json.loads(js.read_text())["exit_status"] == 0
    assert f"commbench health: 1 hosts: 1 good, 0 slow, 0 failed to run\n  {host}" in p.stdout


@pytest.mark.parametrize(
    "args,said",
    [
        (["--suite", "osu"], "health runs the net family: it takes no --suite"),
        (["--threshold", "2"], "--threshold '2': a fraction between 0 and 1"),
        (["--expect", "RULES"], "bad.toml:1: "),
    ],
)
def test_bad_input_is_refused_before_measuring(tmp_path, args, said):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[expect]]\nbenchmark = "NoSuch"\nt = "<= 1 us"\n')
    args = [str(bad) if a == "RULES" else a for a in args]
    out = tmp_path / "h.json"
    p = commbench("health", "-n", "2", *args, "-o", str(out))
    assert p.returncode == 2 and said in p.stderr, p.stderr
    assert not out.exists() and "Benchmarking" not in p.stdout
