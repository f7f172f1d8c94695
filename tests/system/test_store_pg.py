"""The results store on a real PostgreSQL server (Debian's, started by tests/support/pgserver.py):
the same commands as on SQLite, concurrent writers, and the ways a server says no."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.support.mpirun import commbench

pytestmark = pytest.mark.needs("postgresql")

pytest_plugins = ["tests.support.pgserver"]  # its fixtures: pg_server, pg_url
DATA = Path(__file__).parents[1] / "data"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    d = tmp_path_factory.mktemp("pgruns")
    out = []
    for i in range(3):
        f = d / f"r{i}.json"
        p = commbench("run", "-n", "2", "PingPong", "-msglog", "0:6", "-iter", "200",
                      "--samples", "6", "--system", "lab", "-o", str(f))  # fmt: skip
        assert p.returncode == 0, p.stderr[-2000:]
        out.append(f)
    return out


def test_the_store_commands_work_the_same_on_postgresql(pg_url, runs, tmp_path):
    p = commbench("store", "add", *map(str, runs[:2]), "--store", pg_url, "--tag", "nightly")
    assert p.returncode == 0 and "stored as run 2" in p.stderr, p.stderr
    assert ":***@" in p.stderr and urlsplit(pg_url).password not in p.stderr
    listed = json.loads(commbench("store", "list", "--json", "--store", pg_url).stdout)
    assert [r["id"] for r in listed] == [2, 1] and listed[0]["tags"] == ["nightly"]
    # the baseline's choice by tag is under test, not the gate's power: two real runs of a
    # loaded machine may vary enough for a too-noisy refusal (as test_store.py's twin allows)
    p = commbench("compare", str(runs[2]), "--baseline", f"{pg_url}:tag=nightly",
                  "--threshold", "50%", "--json", "-", "--allow-noisy")  # fmt: skip
    verdict = json.loads(p.stdout)
    assert p.returncode in (0, 1) and verdict["baseline"]["runs"][0]["id"] == 2, p.stderr
    assert all(r["k_old"] == 2 for r in verdict["rows"])
    back = tmp_path / "back.json"
    assert commbench("store", "export", "id=1", "-o", str(back), "--store", pg_url).returncode == 0
    exported = json.loads(back.read_text())
    assert exported.pop("stored") == {"id": 1, "system": "lab", "tags": ["nightly"]}
    assert exported == json.loads(runs[0].read_text())
    p = commbench("store", "trend", "--store", pg_url)
    assert p.returncode == 0 and "PingPong np=2 bytes=64  [lab]" in p.stdout
    assert commbench("store", "rm", "id=1", "--store", pg_url).returncode == 0
    listed = json.loads(commbench("store", "list", "--json", "--store", pg_url).stdout)
    assert [r["id"] for r in listed] == [2]


def test_writers_at_once_on_a_new_database_lose_nothing(pg_url, runs):
    files = [*runs, DATA / "mpis" / "mpich.json", DATA / "mpis" / "openmpi.json"]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "commbench", "store", "add", str(f), "--store", pg_url],
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for f in files
    ]
    errs = [p.communicate(timeout=120)[1] for p in procs]
    assert all(p.returncode == 0 for p in procs), errs
    listed = json.loads(commbench("store", "list", "--json", "--store", pg_url).stdout)
    assert sorted(r["id"] for r in listed) == [1, 2, 3, 4, 5]


def _swap(url: str, **parts) -> str:
    u = urlsplit(url)
    user = parts.get("user", u.username)
    pw = parts.get("password", u.password)
    port = parts.get("port", u.port)
    return urlunsplit(u._replace(netloc=f"{user}:{pw}@{u.hostname}:{port}"))


def test_a_server_that_says_no_is_named_and_nothing_is_written(pg_url, runs):
    started = time.time()
    p = commbench("store", "add", str(runs[0]), "--store", _swap(pg_url, password="wrong"))
    assert p.returncode == 2 and "password authentication failed" in p.stderr
    assert "wrong" not in p.stderr  # the password is not echoed
    with socket.socket() as s:  # a port nothing answers on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = commbench("store", "list", "--store", _swap(pg_url, port=port))
    assert p.returncode == 2 and "Connection refused" in p.stderr
    assert time.time() - started < 30
    import psycopg

    with psycopg.connect(pg_url) as c:
        c.execute("create table invoices (id int)")
    p = commbench("store", "add", str(runs[0]), "--store", pg_url)
    assert p.returncode == 2 and "holds tables of something else (invoices)" in p.stderr
    with psycopg.connect(pg_url) as c:
        names = {
            r[0] for r in c.execute("select tablename from pg_tables where schemaname='public'")
        }
    assert names == {"invoices"}


def _leaks(secret: str, *texts: str) -> list[str]:
    return [t[max(0, t.find(secret) - 80) : t.find(secret) + 40] for t in texts if secret in t]


def test_no_password_is_printed_recorded_or_stored(pg_url, pg_server, tmp_path):
    """Every form a store URL carries its password in (userinfo, ?password=, a libpq keyword
    in the query) is hidden on stdout, stderr, in the results file, the IMB preamble and the
    stored document, also in errors (a database that is missing, a bad sslmode, the URL given
    as `--store URL` instead of `--store=URL`)."""
    u = urlsplit(pg_url)
    secret = u.password
    assert secret and len(secret) >= 12
    host = f"{u.hostname}:{u.port}"
    query = f"postgresql://{u.username}@{host}{u.path}?password={secret}"
    out = tmp_path / "r.json"
    p = commbench("run", "-n", "2", "PingPong", "-msglog", "0:2", "-iter", "20",
                  "-o", str(out), f"--store={query}")  # fmt: skip
    assert p.returncode == 0 and "stored as run 1" in p.stderr, p.stderr[-2000:]
    assert "password=***" in p.stderr
    back = tmp_path / "back.json"
    e = commbench("store", "export", "id=1", "-o", str(back), "--store", pg_url)
    assert e.returncode == 0, e.stderr
    stored = back.read_text()
    assert "password=***" in stored
    assert not _leaks(secret, p.stdout, p.stderr, out.read_text(), stored, e.stdout, e.stderr)
    wrong = [
        ["run", "-n", "2", "PingPong", "--store", pg_url],  # a space: the URL is a "benchmark"
        ["store", "list", "--store", f"postgresql://{u.username}:{secret}@{host}/nosuchdb"],
        ["store", "list", "--store", f"postgresql://{u.username}@{host}/nosuchdb?password={secret}"],
        ["store", "list", "--store", f"{query}&sslmode=bogus"],
        ["store", "list", "--store", f"postgresql://{host}{u.path}?user={u.username}&PGPASSWORD={secret}&sslpassword={secret}"],
        ["compare", str(out), "--baseline", f"postgresql://{u.username}:{secret}@{host}/nosuchdb"],
    ]  # fmt: skip
    for args in wrong:
        p = commbench(*args)
        assert p.returncode == 2, (args, p.stdout[-500:], p.stderr[-1500:])
        assert not _leaks(secret, p.stdout, p.stderr), (args, _leaks(secret, p.stdout, p.stderr))
