"""The store's tables and their versioned migrations (SQLAlchemy Core; SQLite and PostgreSQL).

commbench_meta holds schema_version. Opening a store brings it to SCHEMA_VERSION by
running the steps of MIGRATIONS above its version, in one transaction (PostgreSQL: under an
advisory lock; SQLite: under its write lock), so two commbench processes opening a new store
at once create it once. A store of a newer schema is refused, never changed. Alembic was
considered: it wants a migrations folder and an env script beside each deployment, too much
for four tables that migrate with the program itself.
"""

from __future__ import annotations

import zlib

import sqlalchemy as sa

SCHEMA_VERSION = 2
MIGRATION_LOCK = 727_270_001  # PostgreSQL advisory lock key while a store is created/migrated

metadata = sa.MetaData()

meta = sa.Table(
    "commbench_meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

runs = sa.Table(
    "commbench_runs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("digest", sa.String(64), nullable=False, unique=True),  # sha256 of the document
    sa.Column("content", sa.String(64)),  # sha256 of its records (index.content); version 2
    sa.Column("system", sa.Text, nullable=False),
    sa.Column("hosts", sa.Text, nullable=False),  # JSON list
    sa.Column("started", sa.String(20), nullable=False),  # ISO UTC: the run's date
    sa.Column("added", sa.String(20), nullable=False),
    sa.Column("family", sa.Text, nullable=False),  # families, comma-separated
    sa.Column("world_size", sa.Integer),
    sa.Column("mpi", sa.Text, nullable=False),  # the library's name ("MPICH 5.0.2")
    sa.Column("commbench_version", sa.Text, nullable=False),
    sa.Column("complete", sa.Boolean, nullable=False),
    sa.Column("origin", sa.Text, nullable=False),  # the file it came from, and its source
    sa.Column("fingerprint", sa.Text, nullable=False),  # JSON: what changes the numbers
    sa.Column("n_rows", sa.Integer, nullable=False),
    sa.Column("document", sa.LargeBinary, nullable=False),  # the results document, zlib JSON
)

tags = sa.Table(
    "commbench_tags",
    metadata,
    sa.Column("run_id", sa.Integer, sa.ForeignKey(runs.c.id), primary_key=True),
    sa.Column("tag", sa.String(200), primary_key=True),
)

rows = sa.Table(
    "commbench_rows",
    metadata,
    sa.Column("run_id", sa.Integer, sa.ForeignKey(runs.c.id), nullable=False),
    sa.Column("key", sa.Text, nullable=False),  # JSON of records.identity
    sa.Column("family", sa.Text, nullable=False),
    sa.Column("benchmark", sa.Text, nullable=False),
    sa.Column("np", sa.Integer, nullable=False),
    sa.Column("bytes", sa.BigInteger),
    sa.Column("label", sa.Text, nullable=False),
    sa.Column("value", sa.Float),  # µs: the median of the samples, else the compared time
    sa.Column("k", sa.Integer, nullable=False),  # samples behind value (0: none)
    sa.Column("status", sa.String(32), nullable=False),
)

# A run the gate called a regression (version 2): left out of later baselines until a person
# accepts the new level (commbench store accept), recorded with who, when and why.
flags = sa.Table(
    "commbench_flags",
    metadata,
    sa.Column("run_id", sa.Integer, sa.ForeignKey(runs.c.id), primary_key=True),
    sa.Column("flagged", sa.String(20), nullable=False),  # ISO UTC
    sa.Column("rows", sa.Text, nullable=False),  # JSON list: the rows called slower
    sa.Column("accepted", sa.String(20)),  # ISO UTC; None: not accepted
    sa.Column("accepted_by", sa.Text),
    sa.Column("why", sa.Text),
)

sa.Index("commbench_runs_by_system", runs.c.system, runs.c.started)
sa.Index("commbench_runs_by_started", runs.c.started)
sa.Index("commbench_tags_by_tag", tags.c.tag, tags.c.run_id)
sa.Index("commbench_rows_by_run", rows.c.run_id)
sa.Index("commbench_rows_by_key", rows.c.key, rows.c.run_id)
sa.Index("commbench_rows_by_benchmark", rows.c.benchmark, rows.c.run_id)
BY_CONTENT = sa.Index("commbench_runs_by_content", runs.c.content)


def _version_1(conn: sa.Connection) -> None:
    metadata.create_all(conn)


def _version_2(conn: sa.Connection) -> None:
    """runs.content: a run's identity by its records (a store of version 1 kept two runs of
    one IMB log imported twice), filled from every stored document; commbench_flags: the runs
    a gate called regressions and whether a person accepted them."""
    from commbench.store import index  # the digest is index's; no MPI, no tables there

    have = {c["name"] for c in sa.inspect(conn).get_columns(runs.name)}
    if "content" not in have:  # version 1's table (a new store has it from _version_1)
        conn.execute(sa.text(f"ALTER TABLE {runs.name} ADD COLUMN content VARCHAR(64)"))
    if BY_CONTENT.name not in {i["name"] for i in sa.inspect(conn).get_indexes(runs.name)}:
        BY_CONTENT.create(conn)
    flags.create(conn, checkfirst=True)
    ids = list(conn.execute(sa.select(runs.c.id).where(runs.c.content.is_(None))).scalars())
    for i in range(0, len(ids), 200):  # documents a few at a time: a store may hold 10,000
        chunk = sa.select(runs.c.id, runs.c.document).where(runs.c.id.in_(ids[i : i + 200]))
        for run_id, blob in conn.execute(chunk).all():
            try:
                value = index.content(index.unpack(blob))
            except (zlib.error, ValueError):  # a damaged document: no content to match
                continue
            conn.execute(sa.update(runs).where(runs.c.id == run_id).values(content=value))


# version -> the step that brings a store of version - 1 to it
MIGRATIONS = {1: _version_1, 2: _version_2}
OURS = {t.name for t in metadata.sorted_tables}


def version(conn: sa.Connection) -> int | None:
    """The store's schema version; None for an empty database. ValueError for a database
    that holds tables of something else."""
    names = set(sa.inspect(conn).get_table_names())
    if not names:
        return None
    if meta.name not in names:
        raise ValueError(
            f"it holds tables of something else ({', '.join(sorted(names)[:6])}), not a "
            "commbench store"
        )
    got = conn.execute(sa.select(meta.c.value).where(meta.c.key == "schema_version")).scalar()
    if got is None or not str(got).isdigit():
        raise ValueError("its commbench_meta table has no schema version: not a commbench store")
    return int(got)


def migrate(conn: sa.Connection, current: int | None) -> None:
    """Brings the store to SCHEMA_VERSION inside the caller's transaction."""
    for v in range((current or 0) + 1, SCHEMA_VERSION + 1):
        MIGRATIONS[v](conn)
    if current is None:
        conn.execute(sa.insert(meta).values(key="schema_version", value=str(SCHEMA_VERSION)))
    else:
        conn.execute(
            sa.update(meta).where(meta.c.key == "schema_version").values(value=str(SCHEMA_VERSION))
        )
