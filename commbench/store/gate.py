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
from collections import Counter

from commbench import records
from commbench.models import betweenruns
from commbench.store import index, location, runs, selector
from commbench.store.db import Store, StoreError
from commbench.views import compare, compare_gate, compare_trust, results_file

DEFAULT_LAST = 5  # baseline runs: the centre
DEFAULT_HISTORY = compare_gate.Args.history  # runs the spread is estimated from
DEFAULT_MIN_SPREAD = compare_gate.Args.min_spread  # its floor (sd of log-values; about 5 %)
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
    "band": "95% prediction interval of one more baseline run, as a ratio to the baseline",
    "regression": "a tested row with q_slower <= alpha and new/baseline above 1 + threshold",
    "untested": "rows fewer than 2 baseline runs hold",
}


class Refusal(Exception):
    pass


def run(argv: list[str]) -> int:
    args = None
    try:
        args = compare_gate.arguments(argv)
        new_doc, new = results_file.read(args.new)
        store_text, sel_text = location.split(args.baseline)
        sel = selector.parse(sel_text)
    except ValueError as e:
        return compare_gate.bad_command(argv, str(e), args)
    try:
        with Store.open(store_text) as store:
            chosen, history, notes = choose(store, sel, new_doc, args)
            if len(chosen) == 1:
                old_doc = runs.document(store, chosen[0]["id"])
                old = results_file.measurements(old_doc, f"stored run {chosen[0]['id']}")
                name = f"{store.loc.shown()} run {chosen[0]['id']} ({chosen[0]['started']})"
                return compare_gate.judge(
                    args, (name, old_doc, old), (args.new, new_doc, new), [*notes, _warn(ONE_RUN)]
                )
            values = runs.row_values(store, [r["id"] for r in history])
            latest = runs.document(store, history[0]["id"])
            shown = store.loc.shown()
    except (StoreError, Refusal) as e:
        return compare_gate.refuse(args, str(e), method=METHOD)
    old = results_file.measurements(latest, "the latest baseline run")
    centre = {r["id"] for r in chosen}
    if args.confirm:  # the latest stored run and NEW, each against the runs before the latest
        own = [v for v in values if v["run_id"] != history[0]["id"]]
        rows = between(own, centre, new, args)
        notes.append(_confirm(between(own, centre, old, args), rows, history[0]))
    else:
        rows = between(values, centre, new, args)
    if not rows:
        return compare_gate.refuse(
            args,
            f"{args.new} has no row that the {len(chosen)} baseline runs hold: nothing to compare",
            notes,
            method=METHOD,
        )
    found = compare_trust.runs({"new": (args.new, new_doc, new)}, args.allowed)
    found += compare_trust.statuses(old, new, args.allowed, ("the latest baseline run", "new"))
    found += compare_trust.untested(rows, args.threshold, args.gate_unsampled, args.allowed)
    return compare_gate.report(
        args,
        rows,
        notes,
        found,
        (0, _unmatched(new, values)),
        (f"baseline of {len(chosen)} runs in {shown}", args.new),
        test_line=(
            f"# test: between-run prediction test of a change beyond {args.threshold:.0%} over "
            f"{len(chosen)} baseline runs, Benjamini-Hochberg q over {{tested}} tested rows at "
            f"alpha {args.alpha:g}; 95% band: where one more baseline run falls, as new/base"
        ),
        columns=("base[usec]", "95% band", "new/base"),
        warns=_few(len(chosen)),
        method=METHOD,
        baseline=_baseline_json(shown, sel, chosen),
    )


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


def _same(r: compare.Row) -> tuple:
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


def _warn(text: str) -> str:
    return f"# warning: {text}"


def choose(store: Store, sel: selector.Selector, new_doc: dict, args) -> tuple[list, list, list]:
    """The baseline runs (the centre), the runs the spread is estimated from (the baseline's and
    those before it, up to --history), newest first, and the lines that say which; Refusal when
    none."""
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
    usable = [r for r in complete if args.allow_different or not why[r["id"]]]
    skip = 1 if args.confirm else 0  # --confirm: the latest is judged too
    chosen = usable[skip : skip + (sel.last or DEFAULT_LAST)]
    history = usable[skip : skip + max(len(chosen), args.history)]
    if skip and len(chosen) < betweenruns.MIN_RUNS:
        raise Refusal(
            f"--confirm judges the latest stored run and NEW against the runs before it: store "
            f"{store.loc.shown()} holds {len(usable)} comparable runs, and it takes "
            f"{betweenruns.MIN_RUNS + 1} (accepted: --confirm once the store holds 3 runs or more)"
        )
    if skip:
        history = [usable[0], *history]  # its rows are read with the history's
    where = f"system {system}, family {scoped.family}, started before {index.started(new_doc)}"
    if not chosen:
        libs = sorted({r["mpi"] for r in complete} - {index.library(new_doc)})
        if libs:
            where += f"; of {', '.join(libs)}, NEW of {index.library(new_doc)}"
        raise Refusal(_none(store, sel, where, found, complete, why))
    ids = ", ".join(str(r["id"]) for r in chosen)
    notes = [
        f"# baseline: {len(chosen)} runs of {store.loc.shown()} ({where}; selector "
        f"{sel.text or 'none'}, the {sel.last or DEFAULT_LAST} latest): ids {ids}, "
        f"{chosen[-1]['started']} .. {chosen[0]['started']}; the spread from the {len(history)} "
        f"latest (--history {args.history}), at least {args.min_spread:.0%} (--min-spread)"
    ]
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
    return chosen, history, notes


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
    values: list[dict], centre: set[int], new: list[records.Measurement], args
) -> list[compare.Row]:
    """NEW's rows that baseline runs hold, each tested against them (compare.Row): the centre
    from the runs in centre, the spread from all those of values (the history)."""
    mid: dict[str, list[float]] = {}
    wide: dict[str, list[float]] = {}
    for v in values:
        if v["value"] and v["value"] > 0:  # a row a run did not measure is not in its history
            wide.setdefault(v["key"], []).append(v["value"])
            if v["run_id"] in centre:
                mid.setdefault(v["key"], []).append(v["value"])
    out = []
    for r in new:
        x, _ = index.value(r)
        k = index.key(r)
        if x and k in mid:  # a row no baseline run measured is unmatched, not a NaN centre
            out.append(_row(r, x, mid[k], wide[k], args))
    compare.judge(out, args.threshold, args.alpha)
    return out


def _row(r: records.Measurement, x: float, base: list[float], wide: list[float], args):
    """NEW's row x against the centre's values base and the history's wide (compare.Row)."""
    extras = {k: r.extra[k] for k in records.ROW_EXTRAS if k in r.extra}
    key = (r.benchmark, r.np, r.mode, r.bytes, len(r.groups))
    how = {"interval": "95% band", "versus": "base", "k_old": len(base)}
    if len(base) < betweenruns.MIN_RUNS:  # one run: its value, no band
        ratio = x / base[0]
        verdict = (
            "same"
            if abs(math.log(ratio)) <= math.log1p(args.threshold)
            else ("slower" if ratio > 1 else "faster")
        )
        return compare.Row(key, base[0], x, ratio, 0.0, verdict, r.family, extras, **how,
                           why_untested=f"{len(base)} baseline runs hold it")  # fmt: skip
    t = betweenruns.test(base, x, args.threshold, history=wide, min_spread=args.min_spread)
    return compare.Row(
        key, t.center, x, t.ratio, t.spread, "same", r.family, extras, **how, tested=True,
        ci=(t.band[0] / t.center, t.band[1] / t.center), k_new=1, p_slower=t.p_slower,
        p_faster=t.p_faster,
    )  # fmt: skip


def _baseline_json(shown: str, sel: selector.Selector, chosen: list[dict]) -> dict:
    return {
        "store": shown,
        "selector": sel.text or None,
        "runs": [
            {k: r[k] for k in ("id", "started", "system", "mpi", "tags", "origin")} for r in chosen
        ],
    }
