"""The store's database: opening (and creating, migrating) it, adding, finding, reading and
removing runs, through SQLAlchemy Core on SQLite (sqlite3) and PostgreSQL (psycopg 3).

Every change is one transaction: a run is stored with its tags and rows or not at all, so a
full disk, a lost connection or an interrupt leave the store as it was. Two writers at once
wait for each other: SQLite's write lock (BEGIN IMMEDIATE, waited for up to a minute),
PostgreSQL's transactions; the same document, or the same records, added twice is one run.
Failures are StoreError, with the store and the cause named.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from commbench.store import location, tables

BUSY_SECONDS = 60  # how long a writer waits for another's SQLite write lock


class StoreError(Exception):
    """The store cannot be opened, read or written: the message says which and why."""


class _Older(Exception):
    """A store of an older schema opened to read: it is migrated before it is read."""


def _engine(loc: location.Location, write: bool):
    import sqlalchemy as sa

    if loc.kind == "sqlite":
        mode = "rwc" if write else "ro"
        url = f"sqlite:///file:{loc.path}?mode={mode}&uri=true"
        engine = sa.create_engine(
            url, connect_args={"timeout": BUSY_SECONDS}, poolclass=sa.pool.NullPool
        )

        @sa.event.listens_for(engine, "connect")
        def _manual(dbapi_conn, _record):  # transactions begun by us, not by the driver
            dbapi_conn.isolation_level = None

        @sa.event.listens_for(engine, "begin")
        def _begin(conn):
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        return engine
    try:
        import psycopg  # noqa: F401 - the driver SQLAlchemy's postgresql+psycopg loads
    except ImportError:
        raise StoreError(
            f"store {loc.shown()}: PostgreSQL's driver psycopg is not installed (accepted: pip "
            "install 'commbench[postgresql]', docs/results.md; or an SQLite file, --store PATH)"
        ) from None
    return sa.create_engine(
        loc.url, connect_args={"connect_timeout": 10}, poolclass=sa.pool.NullPool
    )


def _cause(e: BaseException) -> str:
    orig = getattr(e, "orig", None) or e
    text = " ".join(str(orig).split())
    return text[:300] or type(orig).__name__


class Store:
    """An open store; `with Store.open(...) as s:`."""

    def __init__(self, loc: location.Location, write: bool):
        self.loc, self.write = loc, write
        self.engine = _engine(loc, write)

    @classmethod
    @contextmanager
    def open(cls, text: str | None, write: bool = False) -> Iterator[Store]:
        try:
            loc = location.parse(text)
        except ValueError as e:
            raise StoreError(str(e)) from None
        if loc.kind == "sqlite":
            check_file(loc.path, write)
        store = cls(loc, write)
        try:
            try:
                store._prepare()
            except _Older:  # read of a store of an older schema: migrated first, then read
                store.engine.dispose()
                with cls.open(text, write=True):
                    pass
                store = cls(loc, write)
                store._prepare()
            yield store
        finally:
            store.engine.dispose()

    @contextmanager
    def transaction(self):
        import sqlalchemy as sa

        try:
            with self.engine.begin() as conn:
                yield conn
        except sa.exc.SQLAlchemyError as e:
            raise StoreError(f"store {self.loc.shown()}: {_cause(e)}") from None

    def _prepare(self) -> None:
        import sqlalchemy as sa

        with self.transaction() as conn:
            if self.loc.kind == "postgresql" and self.write:
                conn.execute(sa.text(f"SELECT pg_advisory_xact_lock({tables.MIGRATION_LOCK})"))
            try:
                current = tables.version(conn)
            except ValueError as e:
                raise StoreError(f"store {self.loc.shown()}: {e}; {ADVICE}") from None
            if current is not None and current > tables.SCHEMA_VERSION:
                raise StoreError(
                    f"store {self.loc.shown()}: its schema version {current} is newer than this "
                    f"commbench keeps (version {tables.SCHEMA_VERSION}); a newer commbench reads "
                    "it, and this one leaves it unchanged"
                )
            if current == tables.SCHEMA_VERSION:
                return
            if not self.write and current is not None:
                raise _Older
            if not self.write:
                raise StoreError(
                    f"store {self.loc.shown()} holds no runs yet (accepted: commbench store add "
                    "FILE, or commbench run --store, to begin one)"
                )
            tables.migrate(conn, current)


ADVICE = "accepted: a commbench store, a new file, or an empty database"


def check_file(path: str, write: bool) -> None:
    """An SQLite store file: refuse a directory, a missing file to read, a foreign file."""
    if os.path.isdir(path):
        raise StoreError(f"store {path}: is a directory ({location.ACCEPTED})")
    if not os.path.exists(path):
        if not write:
            raise StoreError(
                f"store {path}: no such store (accepted: commbench store add FILE or commbench "
                "run --store to begin one; --store PATH|URL for another)"
            )
        parent = os.path.dirname(path)
        try:
            os.makedirs(parent, exist_ok=True)
        except OSError as e:
            raise StoreError(f"store {path}: cannot create {parent} ({e.strerror})") from None
        return
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError as e:
        raise StoreError(f"store {path}: cannot read ({e.strerror})") from None
    if head and head != b"SQLite format 3\x00":
        raise StoreError(
            f"store {path}: not an SQLite database (it starts {head[:8]!r}); it is left untouched "
            f"({ADVICE})"
        )
