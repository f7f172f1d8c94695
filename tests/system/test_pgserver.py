"""The PostgreSQL test server of tests/support/pgserver.py, through real psycopg connections."""

from __future__ import annotations

import time
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.support.pgserver import PgServer

pytestmark = pytest.mark.needs("postgresql")

pytest_plugins = ["tests.support.pgserver"]  # its fixtures: pg_server, pg_url


def _connect(url: str, timeout: int = 5):
    import psycopg

    return psycopg.connect(url, connect_timeout=timeout)


def _with_password(url: str, password: str) -> str:
    u = urlsplit(url)
    return urlunsplit(u._replace(netloc=f"{u.username}:{password}@{u.hostname}:{u.port}"))


def test_right_password_connects(pg_server: PgServer, pg_url: str):
    with _connect(pg_server.url()) as c:
        assert c.execute("select 1").fetchone() == (1,)
    u = urlsplit(pg_url)
    assert (u.hostname, u.port) == ("127.0.0.1", pg_server.port)
    with _connect(pg_url) as c:
        row = c.execute("select current_user, current_database()").fetchone()
    assert row == (u.username, u.path.lstrip("/"))


def test_wrong_password_is_refused(pg_server: PgServer, pg_url: str):
    import psycopg

    for bad in (_with_password(pg_url, "wrong"), pg_server.url(password="wrong")):
        with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
            _connect(bad).close()


def test_stopped_server_refuses_then_restarts(pg_server: PgServer, pg_url: str):
    import psycopg

    with _connect(pg_url) as c:
        c.execute("create table kept (x int)")
        c.execute("insert into kept values (42)")
    pg_server.stop()
    try:
        t0 = time.monotonic()
        with pytest.raises(psycopg.OperationalError):
            _connect(pg_url, timeout=2).close()
        assert time.monotonic() - t0 < 3
    finally:
        pg_server.start()
    with _connect(pg_url) as c:
        assert c.execute("select x from kept").fetchall() == [(42,)]


def test_fresh_databases_are_independent(pg_server: PgServer):
    import psycopg

    a, b = pg_server.create_database(), pg_server.create_database()
    assert a != b
    with _connect(a) as c:
        c.execute("create table only_in_a (x int)")
    with _connect(b) as c:
        assert c.execute("select to_regclass('only_in_a')").fetchone() == (None,)
    b_with_a_role = urlsplit(a)._replace(path=urlsplit(b).path)
    with pytest.raises(psycopg.OperationalError, match="permission denied"):
        _connect(urlunsplit(b_with_a_role)).close()
    for url in (a, b):
        pg_server.drop_database(urlsplit(url).path.lstrip("/"))
