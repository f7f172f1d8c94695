"""`commbench store add|list|show|rm|export|trend`: the results store's commands (no MPI).
Exit status 0, or 2 with a message (bad input, a store that cannot be opened or written:
nothing stored is lost or half-written, commbench.store.db)."""

from __future__ import annotations

import argparse
import json
import sys

from commbench import option_types
from commbench.commands.errors import err
from commbench.commands.parsing import Parser
from commbench.store import db, location, runs, selector
from commbench.store.db import Store, StoreError
from commbench.views import results_file

USAGE = """usage: commbench store <command> [--store PATH|URL] ...

  add FILE [FILE ...] [--system NAME] [--tag T[,T]]   keep results files (runs, imports) in the store
  list [SELECTOR] [--json]                 the runs, newest first: id, date, system, family, MPI, tags
  show ID [--json]                         one run: what it is indexed by, and its rows
  accept SELECTOR --why TEXT               accept the new level of the flagged runs it matches:
                                           they join later baselines (who, when, why kept)
  rm SELECTOR                              remove the runs it matches (id=N, tag=T …; never all
                                           unless --all)
  export SELECTOR --csv OUT|-              the runs' rows as CSV
  export id=N -o OUT.json                  the run's results file, as it was added
  export id=N --bmf OUT.json|-             the run in Bencher's metric format (BMF)
  trend [SELECTOR] [--last N] [--threshold 5%] [--json]
                                           each row over time with its baseline band, the
                                           flagged runs, and the runs that changed MPI,
                                           commbench or options

The store: --store PATH (SQLite), --store postgresql://USER[:PASSWORD]@HOST[:PORT]/DB, else
$COMMBENCH_STORE, else ~/.local/share/commbench/results.db. A password is better kept out of the
command line: PGPASSWORD or ~/.pgpass (libpq's) serve.

""" + selector.__doc__.split("\n", 2)[2]  # noqa: E501

VALUED = ("store", "system", "tag", "csv", "o", "bmf", "last", "threshold", "why")
FLAGS = ("json", "all")


def _args(argv: list[str]) -> tuple[list[str], dict]:
    """(positional arguments, {option: value} of the options given)."""
    p = Parser("commbench store", "commbench store -h")
    p.add_argument("pos", nargs="*")
    for n in VALUED:
        p.add_argument(f"--{n}" if len(n) > 1 else f"-{n}", dest=n, default=argparse.SUPPRESS)
    for n in FLAGS:
        p.add_argument(f"--{n}", dest=n, action="store_true", default=argparse.SUPPRESS)
    given = vars(p.read(argv))
    return given.pop("pos"), given


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if argv else 2
    command = COMMANDS.get(argv[0])
    try:
        if command is None:
            raise ValueError(f"unknown store command {argv[0]!r} (accepted: {', '.join(COMMANDS)})")
        pos, opts = _args(argv[1:])
        return command(pos, opts)
    except (ValueError, StoreError) as e:
        return err(str(e))


def _one_selector(pos: list[str], what: str) -> selector.Selector:
    if len(pos) > 1:
        raise ValueError(f"store {what} takes one selector, got {len(pos)}: {' '.join(pos)}")
    return selector.parse(pos[0] if pos else None)


def add(pos: list[str], opts: dict) -> int:
    """Reads every file first: one that is not a results file stores nothing."""
    if not pos:
        raise ValueError("store add needs results files (accepted: commbench store add FILE ...)")
    read = [(p, *results_file.read(p)) for p in pos]
    tags = [option_types.store_tag(t) for t in (opts.get("tag") or "").split(",") if t]
    with Store.open(opts.get("store"), write=True) as store:
        for path, doc, recs in read:
            got = runs.add(store, doc, recs, path, opts.get("system"), tags)
            said = "stored as run" if got.new else "already stored as run"
            more = f"; tags added: {', '.join(got.tags_added)}" if got.tags_added else ""
            if got.system_kept is not None:
                more += (
                    f"; --system {opts.get('system')!r} not applied (the stored run's system "
                    f"is {got.system_kept!r}, and a run's system chooses its baselines)"
                )
            print(
                f"commbench: {path}: {said} {got.run_id} in {store.loc.shown()}{more}",
                file=sys.stderr,
            )
    return 0


def list_(pos: list[str], opts: dict) -> int:
    sel = _one_selector(pos, "list")
    with Store.open(opts.get("store")) as store:
        found = runs.find(store, sel)
    if opts.get("json"):
        print(json.dumps([_plain(r) for r in found], indent=1))
        return 0
    print(
        f"{'id':>6}  {'started':<20}  {'system':<16} {'family':<8} {'np':>4} {'rows':>5}  "
        f"{'mpi':<22} tags"
    )
    for r in found:
        flag = "" if r["complete"] else "  (incomplete)"
        if r["flag"]:
            flag += "  (accepted)" if r["flag"]["accepted"] else "  (flagged: out of baselines)"
        print(
            f"{r['id']:>6}  {r['started']:<20}  {r['system'][:16]:<16} {r['family'][:8]:<8} "
            f"{r['world_size'] or '-':>4} {r['n_rows']:>5}  {r['mpi'][:22]:<22} "
            f"{','.join(r['tags'])}{flag}"
        )
    print(f"# {len(found)} runs ({sel.text or 'every run'})")
    return 0


def _plain(r: dict) -> dict:
    return {k: v for k, v in r.items() if k != "digest"}


def show(pos: list[str], opts: dict) -> int:
    if len(pos) != 1 or not pos[0].isdigit():
        raise ValueError("store show takes one run id (accepted: commbench store show 12)")
    with Store.open(opts.get("store")) as store:
        found = runs.find(store, selector.parse(f"id={pos[0]}"))
        if not found:
            raise ValueError(f"store {store.loc.shown()} has no run {pos[0]}")
        values = runs.row_values(store, [found[0]["id"]])
    run = _plain(found[0])
    if opts.get("json"):
        print(json.dumps({**run, "rows": values}, indent=1))
        return 0
    for k, v in run.items():
        print(f"{k:<18} {json.dumps(v) if isinstance(v, dict | list) else v}")
    print(f"\n{'row':<44} {'value[usec]':>12} {'samples':>8}  status")
    for v in values:
        shown = "-" if v["value"] is None else f"{v['value']:.3f}"
        print(f"{v['label'][:44]:<44} {shown:>12} {v['k']:>8}  {v['status']}")
    return 0


def rm(pos: list[str], opts: dict) -> int:
    """Removes the runs the selector matches, all or none. A selector that matches every
    stored run (none, "", whitespace, one every run passes) needs --all, as `store rm
    "$SEL"` with SEL unset must not empty a store; the runs are named before they go."""
    sel = _one_selector([p for p in pos if p.strip()] or [], "rm")
    with Store.open(opts.get("store"), write=True) as store:
        found = runs.find(store, sel)
        every = len(runs.find(store, selector.parse(None)))
        if not opts.get("all") and (not sel.text.strip() or (found and len(found) == every)):
            said = (
                f"store rm: {sel.text!r} matches"
                if sel.text.strip()
                else "store rm needs a selector: none (an unset $SEL, '', blanks) would remove"
            )
            raise ValueError(
                f"{said} every run of {store.loc.shown()} ({every}); nothing removed (accepted: "
                "a selector that leaves some runs, e.g. id=3 or tag=T; --all to remove every run)"
            )
        ids = [r["id"] for r in found]
        shown = ", ".join(str(i) for i in ids[:20]) + (" …" if len(ids) > 20 else "")
        print(f"commbench: removing {len(ids)} runs ({shown or 'none'})", file=sys.stderr)
        n = runs.remove(store, ids)
        print(f"commbench: removed {n} runs from {store.loc.shown()}", file=sys.stderr)
    return 0


def accept(pos: list[str], opts: dict) -> int:
    """The gate's flagged runs that a selector matches accepted as the new level: they join
    later baselines. A selector is required (a flag stands until someone says why not)."""
    sel = _one_selector([p for p in pos if p.strip()], "accept")
    why = (opts.get("why") or "").strip()
    if not sel.text.strip() or not why:
        raise ValueError(
            "store accept needs a selector and --why (accepted: commbench store accept id=12 "
            "--why 'new UCX release: slower eager path, accepted')"
        )
    import getpass

    try:
        who = getpass.getuser()
    except (KeyError, OSError):
        who = "unknown"
    with Store.open(opts.get("store"), write=True) as store:
        found = runs.find(store, sel)
        flagged = [r["id"] for r in found if r["flag"] and not r["flag"]["accepted"]]
        if not flagged:
            raise ValueError(
                f"store {store.loc.shown()}: no flagged run, not yet accepted, matches {sel.text} "
                f"({len(found)} runs match; `commbench store list` marks the flagged ones)"
            )
        done = runs.accept(store, flagged, who, why)
        print(
            f"commbench: accepted {len(done)} runs ({', '.join(map(str, done))}) in "
            f"{store.loc.shown()} as {who}: they join later baselines",
            file=sys.stderr,
        )
    return 0


def export_(pos: list[str], opts: dict) -> int:
    from commbench.store import export

    return export.run(_one_selector(pos, "export"), opts)


def trend_(pos: list[str], opts: dict) -> int:
    from commbench.store import trend

    return trend.run(_one_selector(pos, "trend"), opts)


COMMANDS = {
    "add": add,
    "list": list_,
    "show": show,
    "rm": rm,
    "accept": accept,
    "export": export_,
    "trend": trend_,
}


def store_run(path: str, store: str | bool, system: str | None, tags: tuple) -> int:
    """`commbench run --store`: the finished results file into the store; 0, or 2 with the
    message (the results file stays where it is)."""
    opts = {"store": None if store is True else store, "system": system, "tag": ",".join(tags)}
    try:
        return add([path], opts)
    except (ValueError, StoreError) as e:
        return err(f"not stored ({e}); the results file {path} is kept")


def check_location(store: str | bool | None) -> str | None:
    """A --store value refused before anything is measured (None: fine): a store a run could
    not be kept in should not take the run's hour first. A PostgreSQL store is opened as the
    run will open it (the driver, the server, the password, the schema version); an SQLite
    file is checked as a writer checks it."""
    if store is None or store is True:
        return None
    try:
        loc = location.parse(store)
        if loc.kind == "sqlite":
            db.check_file(loc.path, write=True)
        else:
            with Store.open(store, write=True):
                pass
    except (ValueError, StoreError) as e:
        return f"{e}; nothing measured"
    return None
