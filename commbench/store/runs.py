"""Runs in and out of an open store (commbench.store.db.Store): add, find, read, remove."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import sqlalchemy as sa

from commbench.redact import redact_all
from commbench.store import index, selector, tables
from commbench.store.db import Store, StoreError

R, T, W = tables.runs, tables.tags, tables.rows
LISTED = [c for c in R.c if c.name != "document"]


def add(store: Store, doc: dict, recs: list, origin: str, system: str | None, tags=()) -> tuple:
    """Stores one run with its tags and rows in one transaction: (run id, True), or (the id
    it has, False) when the same document is stored already. No credential is stored: the
    document is kept as redact_all leaves it (a command line with a store URL's password)."""
    entry = index.entry(redact_all(doc), recs, origin, system)
    entry["added"] = selector.iso(datetime.now(UTC))
    found = _by_digest(store, entry["digest"])
    if found is not None:
        return found, False
    try:
        with store.transaction() as conn:
            again = conn.execute(sa.select(R.c.id).where(R.c.digest == entry["digest"])).scalar()
            if again is not None:
                return again, False
            run_id = conn.execute(sa.insert(R).values(**entry).returning(R.c.id)).scalar_one()
            if tags:
                conn.execute(
                    sa.insert(T), [{"run_id": run_id, "tag": t} for t in sorted(set(tags))]
                )
            rows = index.rows(recs)
            if rows:
                conn.execute(sa.insert(W), [dict(r, run_id=run_id) for r in rows])
    except StoreError:
        found = _by_digest(store, entry["digest"])  # another writer stored it meanwhile
        if found is None:
            raise
        return found, False
    return run_id, True


def _by_digest(store: Store, digest: str) -> int | None:
    with store.transaction() as conn:
        return conn.execute(sa.select(R.c.id).where(R.c.digest == digest)).scalar()


def _like(text: str) -> str:
    """text matched literally inside LIKE (escape "\\"): % and _ are no wildcards."""
    return text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _conditions(sel: selector.Selector) -> list:
    """The same matches on SQLite and PostgreSQL: names compared in lower case (SQLite's LIKE
    ignores case, PostgreSQL's does not), LIKE's wildcards escaped."""
    low = sa.func.lower
    where = []
    if sel.since:
        where.append(R.c.started >= sel.since)
    if sel.until:
        where.append(R.c.started < sel.until)
    if sel.system:
        where.append(low(R.c.system) == sel.system.lower())
    if sel.family:
        fams = low(sa.literal(",").concat(R.c.family).concat(","))
        where.append(fams.like(f"%,{_like(sel.family)},%", escape="\\"))
    if sel.mpi:
        where.append(low(R.c.mpi).like(f"%{_like(sel.mpi)}%", escape="\\"))
    for tag in sel.tags:
        where.append(R.c.id.in_(sa.select(T.c.run_id).where(T.c.tag == tag)))
    if sel.benchmark:
        name = sel.benchmark.lower()
        where.append(R.c.id.in_(sa.select(W.c.run_id).where(low(W.c.benchmark) == name)))
    if sel.ids:
        where.append(sa.or_(*(R.c.id.between(lo, hi) for lo, hi in sel.ids)))
    return where


def find(store: Store, sel: selector.Selector, limit: bool = True, **extra) -> list[dict]:
    """The runs sel matches, newest first, as dicts of their columns (not the document) with
    their tags; extra: before=ISO (started before or in that second), complete=True."""
    where = _conditions(sel)
    if extra.get("before"):  # dates have whole seconds: a run of the same second counts as
        # before (runs a second apart are common; NEW itself is left out by its digest)
        where.append(R.c.started <= extra["before"])
    if extra.get("complete"):
        where.append(R.c.complete.is_(True))
    query = sa.select(*LISTED).where(*where).order_by(R.c.started.desc(), R.c.id.desc())
    if limit and sel.last:
        query = query.limit(sel.last)
    with store.transaction() as conn:
        found = [dict(m) for m in conn.execute(query).mappings()]
        by_id = {r["id"]: r for r in found}
        for r in found:
            r["tags"] = []
        for ids in _chunks(list(by_id)):
            for run_id, tag in conn.execute(
                sa.select(T.c.run_id, T.c.tag).where(T.c.run_id.in_(ids)).order_by(T.c.tag)
            ):
                by_id[run_id]["tags"].append(tag)
    for r in found:
        r["fingerprint"] = json.loads(r["fingerprint"])
        r["hosts"] = json.loads(r["hosts"])
    return found


def _chunks(ids: list[int], size: int = 500):
    for i in range(0, len(ids), size):
        yield ids[i : i + size]


def row_values(store: Store, run_ids: list[int], benchmark: str | None = None) -> list[dict]:
    """The stored rows of these runs: run_id, key, label, family, benchmark, np, bytes,
    value, k, status."""
    out: list[dict] = []
    with store.transaction() as conn:
        for ids in _chunks(run_ids):
            query = sa.select(W).where(W.c.run_id.in_(ids))
            if benchmark:
                query = query.where(W.c.benchmark == benchmark)
            out += [dict(m) for m in conn.execute(query).mappings()]
    return out


def document(store: Store, run_id: int) -> dict:
    with store.transaction() as conn:
        blob = conn.execute(sa.select(R.c.document).where(R.c.id == run_id)).scalar()
    if blob is None:
        raise StoreError(f"store {store.loc.shown()}: no run {run_id}")
    return index.unpack(blob)


def remove(store: Store, run_ids: list[int]) -> int:
    """Removes these runs whole (their tags and rows with them) in one transaction."""
    with store.transaction() as conn:
        for ids in _chunks(run_ids):
            conn.execute(sa.delete(W).where(W.c.run_id.in_(ids)))
            conn.execute(sa.delete(T).where(T.c.run_id.in_(ids)))
            conn.execute(sa.delete(R).where(R.c.id.in_(ids)))
    return len(run_ids)
