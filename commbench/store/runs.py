"""Runs in and out of an open store (commbench.store.db.Store): add, find, read, remove."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime

import sqlalchemy as sa

from commbench import option_types
from commbench.redact import redact_all
from commbench.store import index, selector, tables
from commbench.store.db import Store, StoreError

R, T, W, FL = tables.runs, tables.tags, tables.rows, tables.flags
LISTED = [c for c in R.c if c.name != "document"]


@dataclass
class Added:
    """What store add did with one document: the run's id, whether it is new, and what it
    did to a run already stored (tags added; a system that differs, not applied)."""

    run_id: int
    new: bool
    tags_added: list[str] = field(default_factory=list)
    system_kept: str | None = None  # the stored run's system, where the one given differs


def add(store: Store, doc: dict, recs: list, origin: str, system: str | None, tags=()) -> Added:
    """Stores one run with its tags and rows in one transaction. A run is its measured
    content: a document whose records equal a stored run's is that run (index.content),
    whatever its import date, command line or `stored` section; then its tags are added to
    that run. The `stored` section of a document `store export -o` wrote carries the tags
    and system it had, so they travel to another store. No credential is stored: the
    document is kept as redact_all leaves it (a command line with a store URL's password)."""
    kept = doc.get("stored") if isinstance(doc.get("stored"), dict) else {}
    doc = as_stored(doc)
    carried = [t for t in kept.get("tags") or [] if isinstance(t, str) and t]
    tags = sorted(set(tags) | {option_types.store_tag(t) for t in carried})
    carried_system = kept.get("system") if isinstance(kept.get("system"), str) else None
    entry = index.entry(doc, recs, origin, system or carried_system)
    entry["added"] = selector.iso(datetime.now(UTC))
    found = _same(store, entry)
    if found is not None:
        return _again(store, found, entry, tags, given=system)
    try:
        with store.transaction() as conn:
            again = _same_in(conn, entry)
            if again is None:
                run_id = conn.execute(sa.insert(R).values(**entry).returning(R.c.id)).scalar_one()
                if tags:
                    conn.execute(sa.insert(T), [{"run_id": run_id, "tag": t} for t in tags])
                rows = index.rows(recs)
                if rows:
                    conn.execute(sa.insert(W), [dict(r, run_id=run_id) for r in rows])
    except StoreError:
        again = _same(store, entry)  # another writer stored it meanwhile
        if again is None:
            raise
    if again is not None:
        return _again(store, again, entry, tags, given=system)
    return Added(run_id, True)


def as_stored(doc: dict) -> dict:
    """The document as the store keeps it, and identifies it by: credentials hidden, and
    without the `stored` section an export adds (the file as it was first added)."""
    return {k: v for k, v in redact_all(doc).items() if k != "stored"}


def _same_in(conn, entry: dict) -> int | None:
    """The stored run with the entry's document or its measured content."""
    same = R.c.digest == entry["digest"]
    if entry.get("content"):
        same = sa.or_(same, R.c.content == entry["content"])
    return conn.execute(sa.select(R.c.id).where(same).order_by(R.c.id).limit(1)).scalar()


def _same(store: Store, entry: dict) -> int | None:
    with store.transaction() as conn:
        return _same_in(conn, entry)


def _again(store: Store, run_id: int, entry: dict, tags: list[str], given: str | None) -> Added:
    """A document stored already: its new tags added to the run; a --system that differs
    from the stored run's is said, not applied (a run's system chooses its baselines)."""
    with store.transaction() as conn:
        have = set(conn.execute(sa.select(T.c.tag).where(T.c.run_id == run_id)).scalars())
        more = [t for t in tags if t not in have]
        if more:
            conn.execute(sa.insert(T), [{"run_id": run_id, "tag": t} for t in more])
        system = conn.execute(sa.select(R.c.system).where(R.c.id == run_id)).scalar()
    differs = given is not None and system != entry["system"]
    return Added(run_id, False, more, system if differs else None)


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
            r["tags"], r["flag"] = [], None
        for ids in _chunks(list(by_id)):
            for run_id, tag in conn.execute(
                sa.select(T.c.run_id, T.c.tag).where(T.c.run_id.in_(ids)).order_by(T.c.tag)
            ):
                by_id[run_id]["tags"].append(tag)
            for f in conn.execute(sa.select(FL).where(FL.c.run_id.in_(ids))).mappings():
                by_id[f["run_id"]]["flag"] = {
                    k: json.loads(v) if k == "rows" else v for k, v in f.items() if k != "run_id"
                }
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
    try:
        return index.unpack(blob)
    except (zlib.error, ValueError) as e:  # JSONDecodeError and UnicodeDecodeError among them
        raise StoreError(
            f"store {store.loc.shown()}: run {run_id}'s stored document is damaged ({e}); the "
            f"rest of the store reads (accepted: commbench store rm id={run_id} to drop it)"
        ) from None


def remove(store: Store, run_ids: list[int]) -> int:
    """Removes these runs whole (their tags and rows with them) in one transaction."""
    with store.transaction() as conn:
        for ids in _chunks(run_ids):
            for column in (FL.c.run_id, W.c.run_id, T.c.run_id, R.c.id):
                conn.execute(sa.delete(column.table).where(column.in_(ids)))
    return len(run_ids)


def flag(store: Store, doc: dict, rows: list[str]) -> int | None:
    """The stored run that is doc (by its document or its records) flagged as a regression of
    these rows; its id, or None where doc is not stored. A run flagged before keeps its first
    date and its acceptance."""
    doc = as_stored(doc)
    entry = {"digest": index.digest(doc), "content": index.content(doc)}
    with store.transaction() as conn:
        run_id = _same_in(conn, entry)
        if run_id is None:
            return None
        have = conn.execute(sa.select(FL.c.run_id).where(FL.c.run_id == run_id)).scalar()
        if have is None:
            now = selector.iso(datetime.now(UTC))
            conn.execute(sa.insert(FL).values(run_id=run_id, flagged=now, rows=json.dumps(rows)))
    return run_id


def accept(store: Store, run_ids: list[int], who: str, why: str) -> list[int]:
    """The flagged, not yet accepted runs among run_ids marked accepted (who, now, why): the
    new level joins later baselines. The ids it accepted."""
    now = selector.iso(datetime.now(UTC))
    done: list[int] = []
    with store.transaction() as conn:
        for ids in _chunks(run_ids):
            open_ = FL.c.run_id.in_(ids) & FL.c.accepted.is_(None)
            done += list(conn.execute(sa.select(FL.c.run_id).where(open_)).scalars())
            conn.execute(sa.update(FL).where(open_).values(accepted=now, accepted_by=who, why=why))
    return sorted(done)
