"""The physical limits measured before the first row (commbench.harness.limits), on this
host with real MPI processes: the one-copy table and the cache-line floor in the metadata,
every row held against them in its record, the closing lines of the text. Across emulated
hosts (the link's line rate, --link-rate): tests/system/test_multihost.py."""

from __future__ import annotations

import json
import math

from commbench.models import limits
from tests.support.mpirun import FAST, commbench


def _run(tmp_path, np_: int, *args: str):
    out = tmp_path / f"r{np_}.json"
    p = commbench("run", "-n", str(np_), *FAST, "-o", str(out), *args)
    assert p.returncode == 0, p.stderr[-3000:]
    return p, json.loads(out.read_text())


def test_every_row_against_the_memory_of_its_host(tmp_path):
    p, doc = _run(tmp_path, 2, "PingPong", "Sendrecv", "-msglog", "0:22", "--alloc", "mmap")
    (host,) = doc["metadata"]["hosts"]
    mem = doc["metadata"]["limits"]["memory"][host]
    assert [x for x, _ in mem["copy"]] == [2**k for k in range(23)]
    assert all(rate > 0 for _, rate in mem["copy"]) and mem["alloc"] == "mmap, hugepages default"
    assert mem["floor_us"] > 0 and mem["ranks"] == [0, 1], mem  # 2 ranks, 2 cores: measured
    for r in doc["records"]:
        lim = r["extra"]["limit"]
        assert lim["of"] == "memory" and lim["host"] == host
        assert math.isclose(lim["multiple"], r["values"]["t_max"] / mem["floor_us"])
        if r["bytes"]:
            rate = limits.copy_rate(mem["copy"], r["bytes"])
            assert math.isclose(lim["bandwidth"], r["turnover"] * rate)
            assert math.isclose(lim["fraction"], r["values"]["bytes_per_sec"] / lim["bandwidth"])
    tail = p.stdout[p.stdout.index("# commbench: against the physical limit") :]
    assert (
        "# commbench:   PingPong np=2: 0 bytes at " in tail
        and "# commbench:   Sendrecv np=2: 0 bytes at " in tail
    )
    assert "4194304 bytes at " in tail


def test_oversubscribed_ranks_still_run_and_say_why_there_is_no_floor(tmp_path):
    """4 ranks on this machine's 2 cores: the floor's spinning pair may not have two cores;
    the probe gives up within its bound and says so, the run goes on."""
    _, doc = _run(tmp_path, 4, "Allreduce", "-msglog", "0:4", "--timeout", "120")
    (mem,) = doc["metadata"]["limits"]["memory"].values()
    assert mem["floor_us"] is None or mem["floor_us"] > 0
    assert (mem["floor_us"] is None) == ("do not each have a core" in mem["why"])
    assert all("fraction" in r["extra"]["limit"] for r in doc["records"] if r["bytes"])
