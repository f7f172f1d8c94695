"""A real PostgreSQL server for the tests: Debian's postgresql, a cluster of the tests' own.

    pytest_plugins = ["tests.support.pgserver"]  # in the test module: fixtures pg_server, pg_url

    def test_store(pg_url):        # a fresh empty database, owned by a password role:
        ...                        # postgresql://ROLE:PASSWORD@127.0.0.1:PORT/NAME

    def test_down(pg_server):      # the PgServer: url(), create_database(), stop(), start()
        ...

(`from tests.support.pgserver import pg_server, pg_url  # noqa: F401` works too, but ruff then
reports F811 at every test that takes them as arguments.)

ensure_installed() puts Debian's server binaries (/usr/lib/postgresql/*/bin) in place with
`apt-get install --no-install-recommends postgresql` (root only; apt-get update only when the
install fails, the lists being old or absent) and the psycopg 3 driver with pip; it returns
None when ready, else the reason to skip. The default cluster `main` (port 5432) that
Debian's postinst creates and may start is stopped after such an install and never used.

PgServer runs its own cluster in a temporary directory owned by the postgres system user
(commands through `runuser -u postgres --` when root): initdb with a random superuser
password, scram-sha-256 for every connection (a wrong password is refused), listening on a
free TCP port of 127.0.0.1 only, its unix socket in the directory, fsync off (a test's data
need not survive a crash of the machine). start() returns once a connection succeeds, or
raises with the tail of the server's log. close() stops it and removes the directory.

The fixtures share one server per pytest session, even when several test modules import
them (pytest makes one fixture definition per importing module); pg_url gives each test a
database of its own and drops it after the test (restarting the server if the test left it
stopped). PYTEST_DONT_REWRITE: a test module may import PgServer before pytest loads this
module as a plugin (pytest would warn that it cannot rewrite it).
"""

from __future__ import annotations

import itertools
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Self
from urllib.parse import quote

import pytest

from tests.support import apt
from tests.support.closing import Closing
from tests.support.once import once

PACKAGE = "postgresql"
DRIVER = "psycopg[binary]"
TOOLS = ("initdb", "pg_ctl", "postgres")
SUPERUSER = "postgres"  # the cluster's superuser role and the system user that runs it
HOST = "127.0.0.1"

SETTINGS = """
listen_addresses = '{host}'
port = {port}
unix_socket_directories = '{sockets}'
max_connections = 60
shared_buffers = 32MB
fsync = off
synchronous_commit = off
full_page_writes = off
password_encryption = 'scram-sha-256'
lc_messages = 'C'
"""


def _run(cmd: list[str], timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


def bindir() -> Path | None:
    """The newest /usr/lib/postgresql/VERSION/bin that has initdb, pg_ctl and postgres."""
    found = [
        b
        for b in Path("/usr/lib/postgresql").glob("*/bin")
        if all(os.access(b / t, os.X_OK) for t in TOOLS)
    ]

    def version(b: Path) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", b.parent.name)) or (0,)

    return max(found, key=version, default=None)


def _stop_default_clusters() -> None:
    """Stops the clusters Debian's postinst started (`main`, port 5432): never ours to use."""
    if not shutil.which("pg_lsclusters"):
        return
    out = _run(["pg_lsclusters", "--no-header"]).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 4 and f[3].startswith("online"):
            _run(["pg_ctlcluster", f[0], f[1], "stop", "-m", "fast"])


def _apt_install() -> str | None:
    why = apt.install([PACKAGE])
    if why:
        return why
    _stop_default_clusters()
    if bindir() is None:
        return f"apt-get install {PACKAGE} left no initdb/pg_ctl/postgres under /usr/lib/postgresql"
    return None


def _driver_importable() -> bool:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return False
    return True


def _pip_install_driver() -> str | None:
    p = _run([sys.executable, "-m", "pip", "install", "-q", DRIVER], timeout=600)
    if p.returncode != 0:
        return f"pip install {DRIVER} failed: {apt.last_line(p.stderr or p.stdout)}"
    import importlib

    importlib.invalidate_caches()
    if not _driver_importable():
        return f"pip installed {DRIVER} but psycopg still does not import"
    return None


@once
def ensure_installed() -> str | None:
    """None when the server binaries and psycopg are ready, else why they are not."""
    if bindir() is None:
        why = _apt_install()
        if why:
            return why
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SUPERUSER)
        except KeyError:
            return f"no system user {SUPERUSER!r} to run PostgreSQL as"
    if not _driver_importable():
        return _pip_install_driver()
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class PgServer(Closing):
    """One PostgreSQL cluster of the tests' own; start() creates it on first use."""

    def __init__(self, bin_dir: Path | None = None, password: str | None = None):
        found = bin_dir or bindir()
        if found is None:
            raise RuntimeError("no initdb/pg_ctl/postgres under /usr/lib/postgresql/*/bin")
        self.bin = Path(found)
        self.host = HOST
        self.port = _free_port()
        self.superuser = SUPERUSER
        self.password = password or os.urandom(12).hex()
        self.dir = Path(tempfile.mkdtemp(prefix="commbench-pg-"))
        self.data = self.dir / "data"
        self.sockets = self.dir / "sockets"
        self.log = self.dir / "server.log"
        self.running = False
        self._as_postgres = os.geteuid() == 0  # initdb and postgres refuse to run as root
        self._names = itertools.count(1)
        if self._as_postgres:
            pw = pwd.getpwnam(SUPERUSER)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)

    def _open(self) -> None:  # tests.support.closing.Closing: `with` builds it whole or not at all
        self.start()

    # -- addresses ---------------------------------------------------------------------------
    def url(self, database: str = "postgres", user: str | None = None, password: str | None = None):
        """postgresql://USER:PASSWORD@127.0.0.1:PORT/DATABASE; the superuser's by default."""
        if user is None:
            user = self.superuser
        if password is None and user == self.superuser:
            password = self.password
        auth = quote(user, safe="") + ("" if password is None else ":" + quote(password, safe=""))
        return f"postgresql://{auth}@{self.host}:{self.port}/{quote(database, safe='')}"

    # -- processes ---------------------------------------------------------------------------
    def _cmd(self, tool: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        argv = [str(self.bin / tool), *args]
        if self._as_postgres:
            if shutil.which("runuser"):
                argv = ["runuser", "-u", SUPERUSER, "--", *argv]
            else:
                argv = ["su", "-s", "/bin/sh", SUPERUSER, "-c", " ".join(map(_shell_quote, argv))]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env.update(LC_ALL="C", LANG="C")
        return _run(argv, timeout=timeout, cwd=self.dir, env=env)

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 25) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:]) or "(no server log)"

    def _initdb(self) -> None:
        pwfile = self.dir / "pwfile"
        pwfile.write_text(self.password + "\n")
        pwfile.chmod(0o600)
        self.sockets.mkdir(mode=0o700)
        if self._as_postgres:
            pw = pwd.getpwnam(SUPERUSER)
            for p in (pwfile, self.sockets):
                os.chown(p, pw.pw_uid, pw.pw_gid)
        p = self._cmd(
            "initdb",
            *("-D", str(self.data), "-U", SUPERUSER, f"--pwfile={pwfile}"),
            *("--auth-host=scram-sha-256", "--auth-local=scram-sha-256"),
            *("-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"),
        )
        pwfile.unlink()
        if p.returncode != 0:
            raise RuntimeError(f"initdb failed: {p.stderr.strip() or p.stdout.strip()}")
        conf = SETTINGS.format(host=self.host, port=self.port, sockets=self.sockets)
        with open(self.data / "postgresql.conf", "a") as f:  # appended: ownership unchanged
            f.write(conf)

    def start(self, timeout: float = 60) -> Self:
        """Starts the server (creating the cluster the first time); returns once it answers."""
        if self.running:
            return self
        first = not self.data.exists()
        if first:
            self._initdb()
        for attempt in range(3):
            logged = self.log.stat().st_size if self.log.exists() else 0
            p = self._cmd(
                "pg_ctl",
                *("start", "-D", str(self.data), "-l", str(self.log), "-w"),
                *("-t", str(int(timeout))),
                timeout=timeout + 15,
            )
            if p.returncode == 0:
                break
            lost_port = "Address already in use" in self.log_text()[logged:]
            if not (first and lost_port and attempt < 2):
                raise RuntimeError(
                    f"PostgreSQL did not start on {self.host}:{self.port} "
                    f"({apt.last_line(p.stderr or p.stdout)}); server log:\n{self.log_tail()}"
                )
            self.port = _free_port()  # taken since it was picked: another one (the last wins)
            with open(self.data / "postgresql.conf", "a") as f:
                f.write(f"port = {self.port}\n")
        self.running = True
        self._wait_ready(timeout)
        return self

    def _wait_ready(self, timeout: float) -> None:
        import psycopg

        deadline = time.monotonic() + timeout
        while True:
            try:
                with psycopg.connect(self.url(), connect_timeout=5) as c:
                    c.execute("select 1")
                return
            except psycopg.OperationalError as e:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"PostgreSQL on {self.host}:{self.port} accepts no connection after "
                        f"{timeout:.0f} s ({str(e).strip()}); server log:\n{self.log_tail()}"
                    ) from e
                time.sleep(0.1)

    def stop(self, mode: str = "fast") -> None:
        """Stops the server (connections are ended); start() brings it back on the same port."""
        if not self.data.exists():
            return
        p = self._cmd("pg_ctl", "stop", "-D", str(self.data), "-m", mode, "-w", "-t", "30")
        if p.returncode != 0 and self._postmaster_pid() is not None:
            self._kill()
        self.running = False

    def _postmaster_pid(self) -> int | None:
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def _kill(self) -> None:
        pid = self._postmaster_pid()
        if pid is None:
            return
        try:
            os.kill(pid, signal.SIGKILL)  # the postmaster's children end when it is gone
        except ProcessLookupError:
            return
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)

    def close(self) -> None:
        """Stops the server and removes its directory (idempotent)."""
        if self.dir.exists():
            try:
                self.stop(mode="immediate")
            finally:
                shutil.rmtree(self.dir, ignore_errors=True)
        self.running = False

    # -- databases ---------------------------------------------------------------------------
    def _admin(self, *statements) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True, connect_timeout=10) as c:
            for s in statements:
                c.execute(s)

    def create_database(self, name: str | None = None) -> str:
        """A fresh empty database NAME owned by a new login role NAME with a random password
        (only that role and the superuser may connect to it); returns the role's URL."""
        from psycopg import sql

        name = name or f"db{next(self._names)}"
        password = os.urandom(9).hex()
        ident = sql.Identifier(name)
        self._admin(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(ident, sql.Literal(password)),
            sql.SQL("CREATE DATABASE {} OWNER {}").format(ident, ident),
            sql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(ident),
        )
        return self.url(name, name, password)

    def drop_database(self, name: str) -> None:
        """Drops database NAME (ending its connections) and its role."""
        from psycopg import sql

        ident = sql.Identifier(name)
        self._admin(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident),
            sql.SQL("DROP ROLE IF EXISTS {}").format(ident),
        )


def _shell_quote(s: str) -> str:
    return "'" + s.replace("'", "'\"'\"'") + "'"


# -- pytest fixtures --------------------------------------------------------------------------
_session: dict[str, object] = {}  # "server": the PgServer, or "skip": the reason


@pytest.fixture(scope="session")
def pg_server(request) -> PgServer:
    """The session's PostgreSQL server (skips the test where it cannot run)."""
    if "skip" in _session:
        pytest.skip(str(_session["skip"]))
    if "server" not in _session:
        why = ensure_installed()
        if why:
            _session["skip"] = why
            pytest.skip(why)
        server = PgServer()
        request.config.add_cleanup(server.close)
        server.start()
        _session["server"] = server
    server = _session["server"]
    assert isinstance(server, PgServer)
    return server


_test_databases = itertools.count(1)


@pytest.fixture
def pg_url(pg_server: PgServer, request) -> Iterator[str]:
    """postgresql://ROLE:PASSWORD@127.0.0.1:PORT/NAME: an empty database of this test's own."""
    pg_server.start()  # a test before may have left it stopped
    slug = re.sub(r"[^a-z0-9]+", "_", request.node.name.lower()).strip("_")
    name = f"t{next(_test_databases)}_{slug}"[:63]
    url = pg_server.create_database(name)
    yield url
    pg_server.start()
    pg_server.drop_database(name)
