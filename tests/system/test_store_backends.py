"""The same store cases on SQLite and on a real PostgreSQL server (Debian's,
tests/support/pgserver.py): what a selector matches, what a tag may be, what rm refuses, what a
selector value may hold, must not depend on the back end (issue 46: a 10,000-character tag
stored on SQLite and failed on PostgreSQL after the run; family=MPI1 matched on one only; mpi=%
matched every run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.mpirun import commbench

pytestmark = pytest.mark.needs("postgresql")

pytest_plugins = ["tests.support.pgserver"]  # its fixtures: pg_server, pg_url
DATA = Path(__file__).parents[1] / "data"
FILES = [DATA / "mpis" / "mpich.json", DATA / "mpis" / "openmpi.json"]


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path) -> str:
    """A new empty store of each back end (PostgreSQL: a database of this test's own)."""
    if request.param == "sqlite":
        return str(tmp_path / "s.db")
    return request.getfixturevalue("pg_url")


def _ids(store: str, sel: str) -> list[int]:
    p = commbench("store", "list", sel, "--json", "--store", store)
    assert p.returncode == 0, p.stderr
    return [r["id"] for r in json.loads(p.stdout)]


def test_selectors_match_alike_on_both_back_ends(store, tmp_path):
    for i, f in enumerate(FILES):
        system = "local:default" if i == 0 else "lab@site/b"
        p = commbench("store", "add", str(f), "--system", system, "--tag", "v1.2/rc,n_1",
                      "--store", store)  # fmt: skip
        assert p.returncode == 0, p.stderr
    assert _ids(store, "family=MPI1") == _ids(store, "family=mpi1") == [2, 1]
    assert _ids(store, "benchmark=pingpong") == _ids(store, "benchmark=PingPong") == [2, 1]
    assert _ids(store, "system=LOCAL:default") == [1] and _ids(store, "system=lab@site/b") == [2]
    assert _ids(store, "mpi=%") == _ids(store, "mpi=_") == _ids(store, "family=%") == []
    assert _ids(store, "tag=v1.2/rc") == [2, 1] and _ids(store, "tag=n%1") == []
    assert _ids(store, "mpi=open mpi") == [2] and _ids(store, "id=1,id=2") == [2, 1]
    # a selector after the store whose value holds ":", "/" or "@" is the selector
    p = commbench("compare", str(FILES[0]), "--baseline", f"{store}:system=local:default",
                  "--json", "-")  # fmt: skip
    assert "no such store" not in p.stderr and "matching system=local:default" in p.stderr, p.stderr
    for bad in ["last=2,last=3", "id=99999999999999999999999", "since=99999999d"]:
        p = commbench("store", "list", bad, "--store", store)
        assert p.returncode == 2 and "internal error" not in p.stderr, (bad, p.stderr)


def test_a_tag_the_store_cannot_keep_is_refused_before_anything_on_both(store, tmp_path):
    long = "x" * 10_000
    p = commbench("store", "add", str(FILES[0]), "--tag", long, "--store", store)
    assert p.returncode == 2 and "1 to 200 printable characters" in p.stderr, p.stderr
    out = tmp_path / "r.json"
    p = commbench("run", "-n", "2", "PingPong", "-o", str(out), f"--store={store}", "--tag", long)
    assert p.returncode == 2 and "--tag" in p.stderr and not out.exists(), p.stderr[-800:]
    p = commbench("store", "add", str(FILES[0]), "--tag", "t" * 200, "--store", store)
    assert p.returncode == 0, p.stderr
    assert _ids(store, "tag=" + "t" * 200) == [1]


def test_rm_refuses_to_empty_either_back_end(store, tmp_path):
    for f in FILES:
        assert commbench("store", "add", str(f), "--store", store).returncode == 0
    for sel in ["", " ", "family=mpi1"]:
        p = commbench("store", "rm", sel, "--store", store)
        assert p.returncode == 2 and "nothing removed" in p.stderr, (sel, p.stderr)
    assert _ids(store, "") == [2, 1]
    p = commbench("store", "rm", "mpi=open", "--store", store)
    assert p.returncode == 0 and "removing 1 runs (2)" in p.stderr and _ids(store, "") == [1]
