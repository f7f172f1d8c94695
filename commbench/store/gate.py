"""`commbench compare NEW --baseline STORE[:SELECTOR]`: NEW against the runs a results store
keeps (no MPI). Exit status as the two-file gate's: 0 no regression, 1 regression, 2 refused.

The baseline: the complete runs of NEW's system and family that started before NEW (or in
its second: dates have whole seconds), agree with it in what changes the numbers
(commbench.store.index.fingerprint; --allow-different lifts
that) and match the selector, the DEFAULT_LAST latest unless it says last=N. Two or more: each
row of NEW against the same row in those runs, the between-run test of
commbench.models.betweenruns; one: the two-file test on the samples
(commbench.views.compare_gate.judge), with a warning that between-run noise is not known.
"""

from __future__ import annotations

import math
import sys
from collections import Counter

from commbench import records
from commbench.models import betweenruns, twosample
from commbench.store import index, runs, selector
from commbench.store.db import Store, StoreError
from commbench.views import compare, compare_gate, compare_trust, results_file

DEFAULT_LAST = 5  # baseline runs: the centre
DEFAULT_HISTORY = compare_gate.CompareArgs.history  # runs the spread is estimated from
DEFAULT_MIN_SPREAD = compare_gate.CompareArgs.min_spread  # its floor (sd of log-values; about 3 %)
ONE_RUN = (
    "the baseline is one stored run: between-run noise cannot be estimated, so this is the "
    "two-file test on the samples within the two runs, which calls whole-run shifts regressions "
    "(keep 2 or more runs in the store: 5 or more give the between-run test its power)"
)
METHOD = {
    "test": (
        "between-run prediction test: the row's log-value in NEW against the baseline runs' "
        "mean log-value shifted by log(1 + threshold), scaled by the spread between runs; "
        "Student's t with m - 1 degrees of freedom"
    ),
    "spread": (
        "standard deviation of the row's log-values in the m latest comparable runs (--history, "
        "the baseline's among them), at least --min-spread"
    ),
    "value": "per run: the median of the row's --samples, else its reported time",
    "multiplicity": "Benjamini-Hochberg adjusted p-values (q) over the tested rows",
    "band": (
        "where the test calls a row: the baseline's one-sided critical values at alpha beyond "
        "the threshold, as a ratio to the baseline; inside it a row is never called, outside it "
        "it is unless the Benjamini-Hochberg correction lifts its q above alpha"
    ),
    "detectable": (
        "per row: the smallest slowdown the test calls 9 times in 10 at alpha (beyond the band's "
        "upper end, where it is called half the time)"
    ),
    "too_noisy": (
        "more than half of the tested rows with a detectable ratio above 1 + 4 x threshold "
        "(the threshold taken as at least 5%): exit 2 unless --allow-noisy"
    ),
    "regression": "a tested row with q_slower <= alpha and new/baseline above 1 + threshold",
    "untested": "rows fewer than 2 baseline runs hold",
}


class Refusal(Exception):
    pass


def against(args, new_doc: dict, new: list, store_text: str | None, sel) -> int:
    """NEW (its document and records) against the runs of the store that match sel: the
    verdict said, the exit status returned (args: commbench.views.compare_gate.Args)."""
    k = sel.last or DEFAULT_LAST
    try:
        with Store.open(store_text) as store:
            pool, latest_run, notes = choose(store, sel, new_doc, args)
            ids = [r["id"] for r in pool]
            values = runs.row_values(store, ids + ([latest_run["id"]] if latest_run else []))
            plan = per_row(values, ids, k, args.history)
            mine = {index.key(r) for r in new if r.ok}
            used = [r for r in pool if any(r["id"] in plan[key][0] for key in mine & set(plan))]
            if not used:
                raise Refusal(f"{args.new} has no row that the {len(pool)} comparable runs hold")
            notes += _baseline_notes(plan, mine, k, used)
            if len(used) == 1 and not latest_run:
                old_doc = runs.document(store, used[0]["id"])
                old = results_file.measurements(old_doc, f"stored run {used[0]['id']}")
                name = f"{store.loc.shown()} run {used[0]['id']} ({used[0]['started']})"
                return compare_gate.judge(
                    args,
                    (name, old_doc, old),
                    (args.new, new_doc, new),
                    [*notes, f"# warning: {ONE_RUN}"],
                )
            latest = runs.document(store, (latest_run or used[0])["id"])
            shown = store.loc.shown()
    except (StoreError, Refusal) as e:
        return compare_gate.refuse(args, str(e), method=METHOD)
    old = results_file.measurements(latest, "the latest baseline run")
    rows = between(values, plan, new, args)
    if latest_run:  # --confirm: the latest stored run and NEW, each against the runs before it
        notes.append(_confirm(between(values, plan, old, args), rows, latest_run))
    found = compare_trust.runs({"new": (args.new, new_doc, new)}, args.allowed)
    found += compare_trust.statuses(old, new, args.allowed, ("the latest baseline run", "new"))
    found += compare_trust.untested(rows, args.threshold, args.gate_unsampled, args.allowed)
    found += compare_trust.noisy(rows, args.threshold, args.allowed, args.gate_unsampled)
    rc = compare_gate.report(
        args,
        rows,
        notes,
        found,
        (0, _unmatched(new, values)),
        (f"baseline of {len(used)} runs in {shown}", args.new),
        test_line=(
            f"# test: between-run prediction test of a change beyond {args.threshold:.0%} over "
            f"the {k} latest comparable runs that hold each row, Benjamini-Hochberg q over "
            f"{{tested}} tested rows at alpha {args.alpha:g}; band: where a row is called "
            "(one-sided at alpha, beyond the threshold), as new/base"
        ),
        columns=("base[usec]", "band", "new/base"),
        warns=_few(min(len(plan[key][0]) for key in mine & set(plan) if plan[key][0])),
        method=METHOD,
        baseline=_baseline_json(shown, sel, used),
    )
    return _flag(store_text, new_doc, rows, args) if rc == 1 else rc


def _flag(store_text: str | None, new_doc: dict, rows: list, args) -> int:
    """NEW regressed (exit 1, returned): the stored run that is NEW (by content) is flagged, so
    later baselines leave it out until a person accepts the new level (store accept). Said on
    stderr; a store that cannot be written leaves the verdict as it is."""
    labels = [r.label() for r in rows if r.regression]
    try:
        with Store.open(store_text, write=True) as store:
            run_id = runs.flag(store, new_doc, labels)
            shown = store.loc.shown()
    except StoreError as e:
        print(
            f"commbench: warning: the regression is not marked in the store ({e})", file=sys.stderr
        )
        return 1
    if run_id is None:
        print(
            f"commbench: note: {args.new} is not in {shown}, so nothing is marked; stored first "
            "(run --store), a regressed run stays out of later baselines until accepted",
            file=sys.stderr,
        )
    else:
        print(
            f"commbench: run {run_id} of {shown} flagged ({len(labels)} rows slower): later "
            f"baselines leave it out until `commbench store accept id={run_id} --why TEXT`",
            file=sys.stderr,
        )
    return 1


def per_row(values: list[dict], order: list[int], k: int, history: int) -> dict:
    """Each row's baseline: key -> (the ids of the k latest runs of order that hold it, those
    of the max(k, history) latest that do: its spread). A run that did not measure a row is
    not in that row's baseline, so a store whose latest runs hold other benchmarks still
    judges a row by the runs that hold it."""
    held: dict[str, set[int]] = {}
    for v in values:
        if v["value"] and v["value"] > 0:
            held.setdefault(v["key"], set()).add(v["run_id"])
    out = {}
    for key, ids in held.items():
        holders = [i for i in order if i in ids]
        out[key] = (holders[:k], holders[: max(k, history)])
    return out


def _baseline_notes(plan: dict, mine: set, k: int, used: list[dict]) -> list[str]:
    counts = Counter(len(plan[key][0]) for key in mine & set(plan))
    short = sum(n for c, n in counts.items() if c < k)
    line = f"# baseline per row: the {k} latest comparable runs that hold it"
    if short:
        line += (
            f"; {short} of {sum(counts.values())} rows are held by fewer ("
            + ", ".join(f"{n} rows by {c}" for c, n in sorted(counts.items()) if c < k)
            + ")"
        )
    return [line + f"; runs used: {', '.join(str(r['id']) for r in used)}"]


def _confirm(latest_rows: list, rows: list, latest: dict) -> str:
    """--confirm: NEW's slower rows stay regressions only where the latest stored run's are too."""
    confirmed = {_same(r) for r in latest_rows if r.regression}
    alone = [r for r in rows if r.regression and _same(r) not in confirmed]
    for r in alone:
        r.regression, r.verdict = False, "slower, unconfirmed"
    return (
        f"# confirm: a row is a regression only when the latest stored run (id {latest['id']}, "
        f"{latest['started']}) lies above the band of the runs before it too; it does in "
        f"{len(confirmed)} rows; {len(alone)} rows slower in NEW alone are not called"
    )


def _same(r: compare.ComparedRow) -> tuple:
    return (r.family, r.key, tuple(sorted(r.extras.items())))


def _unmatched(new: list[records.Measurement], values: list[dict]) -> int:
    keys = {v["key"] for v in values}
    return sum(1 for r in new if r.ok and index.key(r) not in keys)


def _few(n: int) -> list[str]:
    if n >= DEFAULT_LAST:
        return []
    return [
        f"only {n} baseline runs: the bands are wide (Student's t with {n - 1} degrees of "
        f"freedom), so only large changes can be called; {DEFAULT_LAST} or more give the test "
        "its power"
    ]


POOL = 200  # comparable runs read, newest first, to find each row's latest holders


def choose(
    store: Store, sel: selector.Selector, new_doc: dict, args
) -> tuple[list, dict | None, list]:
    """The comparable runs a row's baseline is taken from (newest first, up to POOL; per_row
    picks each row's), the latest stored run when --confirm judges it too, and the lines that
    say which; Refusal when none. Runs a gate flagged and no one accepted are left out: a
    persistent regression must not become its own baseline (store accept)."""
    system = sel.system or index.system(new_doc, args.system)
    fams = index.entry(new_doc, results_file.measurements(new_doc), "", None)["family"]
    scoped = selector.Selector(
        **{**sel.__dict__, "system": system, "family": sel.family or fams.split(",")[0]}
    )
    found = runs.find(store, scoped, limit=False, before=index.started(new_doc))
    digest, content = index.digest(new_doc), index.content(new_doc)
    # NEW is never its own baseline: not as the document, nor as the same records under
    # another import's date and command line
    found = [r for r in found if r["digest"] != digest and (not content or r["content"] != content)]
    complete = [r for r in found if r["complete"]]
    mine = index.fingerprint(new_doc)
    why = {r["id"]: index.differences(r["fingerprint"], mine) for r in complete}
    skip = 1 if args.confirm else 0  # --confirm: the latest is judged too, flagged or not
    comparable = [r for r in complete if args.allow_different or not why[r["id"]]]
    usable, flagged = _unflagged(comparable, skip)
    chosen = usable[skip : skip + (sel.last or DEFAULT_LAST)]
    pool = usable[skip : skip + max(POOL, sel.last or DEFAULT_LAST, args.history)]
    if skip and len(chosen) < betweenruns.MIN_RUNS:
        raise Refusal(
            f"--confirm judges the latest stored run and NEW against the runs before it: store "
            f"{store.loc.shown()} holds {len(usable)} comparable runs, and it takes "
            f"{betweenruns.MIN_RUNS + 1} (accepted: --confirm once the store holds 3 runs or more)"
        )
    where = f"system {system}, family {scoped.family}, started before {index.started(new_doc)}"
    if not chosen:
        libs = sorted({r["mpi"] for r in complete} - {index.library(new_doc)})
        if libs:
            where += f"; of {', '.join(libs)}, NEW of {index.library(new_doc)}"
        raise Refusal(_none(store, sel, where, found, complete, why))
    notes = [
        f"# baseline: {len(pool)} comparable runs of {store.loc.shown()} ({where}; selector "
        f"{sel.text or 'none'}), {pool[-1]['started']} .. {pool[0]['started']}; each row "
        f"against the {sel.last or DEFAULT_LAST} latest that hold it, the spread from the "
        f"{args.history} latest that do (--history), at least {args.min_spread:.0%} "
        "(--min-spread)"
    ]
    if flagged:
        notes.append(
            f"# note: {len(flagged)} runs the gate flagged are left out until accepted "
            f"(ids {', '.join(str(r['id']) for r in flagged[:10])}; commbench store accept)"
        )
    if len(complete) < len(found):
        notes.append(f"# note: {len(found) - len(complete)} incomplete runs left out")
    if args.allow_different:
        differing = [r for r in chosen if why[r["id"]]]
        if differing:
            notes.append(
                f"# warning: {len(differing)} baseline runs differ from NEW in what changes the "
                f"numbers ({_reasons([why[r['id']] for r in differing])}); --allow-different "
                "compares them anyway"
            )
    return pool, usable[0] if skip else None, notes


def _unflagged(comparable: list[dict], skip: int) -> tuple[list[dict], list[dict]]:
    """The comparable runs but those a gate flagged and no one accepted (the first skip kept:
    --confirm's latest run is judged, flagged or not), and those left out."""
    flagged = [r for r in comparable[skip:] if r["flag"] and not r["flag"]["accepted"]]
    return comparable[:skip] + [r for r in comparable[skip:] if r not in flagged], flagged


def _reasons(lists: list[list[str]]) -> str:
    counts = Counter(w for ws in lists for w in ws)
    return "; ".join(f"{w} ({n} runs)" for w, n in counts.most_common(3))


def _none(store, sel, where, found, complete, why) -> str:
    head = f"no baseline: store {store.loc.shown()} holds "
    accepted = (
        " (accepted: a selector that matches runs like NEW, e.g. --baseline STORE:last=5, "
        "--system NAME; `commbench store list` shows what the store holds)"
    )
    if not found:
        return head + f"no run matching {sel.text or 'the baseline'} ({where})" + accepted
    if not complete:
        return head + f"{len(found)} matching runs ({where}), none complete" + accepted
    return (
        head
        + f"{len(complete)} matching runs ({where}) and none can be compared with NEW: "
        + _reasons(list(why.values()))
        + " (accepted: runs that agree with NEW, e.g. a selector mpi=NAME; --allow-different "
        "compares them anyway)"
    )


def between(
    values: list[dict], plan: dict, new: list[records.Measurement], args
) -> list[compare.ComparedRow]:
    """NEW's rows that baseline runs hold, each tested against its own baseline (per_row: the
    centre's values and the history's, compare.ComparedRow). A run not in plan (--confirm's latest,
    judged itself) is in no baseline."""
    by_run: dict[tuple, float] = {}
    for v in values:
        if v["value"] and v["value"] > 0:
            by_run[(v["key"], v["run_id"])] = v["value"]
    out = []
    for r in new:
        x, _ = index.value(r)
        k = index.key(r)
        if not x or k not in plan:  # a row no baseline run measured is unmatched
            continue
        centre, wide = ([by_run[(k, i)] for i in ids if (k, i) in by_run] for ids in plan[k])
        if centre:
            out.append(_row(r, x, centre, wide, args))
    compare.judge(out, args.threshold, args.alpha)
    return out


def _row(r: records.Measurement, x: float, base: list[float], wide: list[float], args):
    """NEW's row x against the centre's values base and the history's wide (compare.ComparedRow)."""
    extras = {k: r.extra[k] for k in records.ROW_EXTRAS if k in r.extra}
    key = (r.benchmark, r.np, r.mode, r.bytes, len(r.groups))
    how = {"interval": "band", "versus": "base", "k_old": len(base)}
    if len(base) < betweenruns.MIN_RUNS:  # one run: its value, no band
        ratio = x / base[0]
        verdict = (
            "same"
            if abs(math.log(ratio)) <= math.log1p(args.threshold)
            else ("slower" if ratio > 1 else "faster")
        )
        return compare.ComparedRow(key, base[0], x, ratio, 0.0, verdict, r.family, extras, **how,
                           why_untested=f"{len(base)} baseline runs hold it")  # fmt: skip
    own, _ = compare.sample_values(r)  # NEW's samples: how sure its own value is
    t = betweenruns.test(
        base, x, args.threshold, args.alpha, history=wide, min_spread=args.min_spread,
        new_se=twosample.series(own).se if own is not None else 0.0,
    )  # fmt: skip
    return compare.ComparedRow(
        key, t.center, x, t.ratio, t.spread, "same", r.family, extras, **how, tested=True,
        ci=(t.band[0] / t.center, t.band[1] / t.center), k_new=1, p_slower=t.p_slower,
        p_faster=t.p_faster, detectable=t.detectable,
    )  # fmt: skip


def _baseline_json(shown: str, sel: selector.Selector, chosen: list[dict]) -> dict:
    return {
        "store": shown,
        "selector": sel.text or None,
        "runs": [
            {k: r[k] for k in ("id", "started", "system", "mpi", "tags", "origin")} for r in chosen
        ],
    }
