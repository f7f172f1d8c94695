"""`commbench store trend`: each row's value over time, with the baseline band every run was
judged against, the runs the between-run test flags, and the runs that changed MPI library,
commbench version or options (no MPI). The data also feeds `commbench report --html --trend`
(commbench.views.html_trend).

Each run is judged as `commbench compare RUN --baseline` would judge it: against the (up to)
--last N complete runs of its system before it that record the same settings that change the
numbers (the same fingerprint: a run that does not record one differs here, where the gate
would not hold it against it), among the selected runs; two or more make a band.
"""

from __future__ import annotations

import json
import math

from commbench.models import betweenruns, twosample
from commbench.store import gate, index, runs, selector
from commbench.store.db import Store

CHANGES = ("mpi", "commbench_version")


RUN_KEYS = (
    "id", "started", "system", "mpi", "commbench_version", "tags", "complete", "change", "flag",
)  # fmt: skip


def compute(
    store: Store,
    sel: selector.Selector,
    last: int = gate.DEFAULT_LAST,
    threshold: float = 0.05,
    alpha: float = 0.05,
) -> dict:
    """The trend as plain data: runs (chronological, with what changed) and rows (points)."""
    found = list(reversed(runs.find(store, sel)))
    by_run: dict[int, dict[str, dict]] = {}
    for v in runs.row_values(store, [r["id"] for r in found], sel.benchmark):
        by_run.setdefault(v["run_id"], {})[v["key"]] = v
    rows: dict[tuple, dict] = {}
    previous: dict[str, dict] = {}  # system -> the run before
    alike: dict[tuple, list[int]] = {}  # (system, fingerprint) -> complete runs so far
    for run in found:
        run["change"] = _change(previous.get(run["system"]), run)
        previous[run["system"]] = run
        fp = json.dumps(run["fingerprint"], sort_keys=True)
        group = alike.setdefault((run["system"], fp), [])
        judged = _judge(
            by_run.get(run["id"], {}), (group[-last:], group[-gate.DEFAULT_HISTORY :]), by_run,
            threshold, alpha,
        )  # fmt: skip
        if run["complete"] and not (run["flag"] and not run["flag"]["accepted"]):
            group.append(run["id"])  # as the gate: a flagged run is no baseline until accepted
        for key, v in by_run.get(run["id"], {}).items():
            _point(rows, run, key, v, judged.get(key, {"n": 0}))
    order = ("system", "family", "benchmark", "np", "bytes", "key")
    return {
        "store": store.loc.shown(),
        "selector": sel.text or None,
        "last": last,
        "threshold": threshold,
        "alpha": alpha,
        "runs": [{k: r[k] for k in RUN_KEYS} for r in found],
        "rows": sorted(rows.values(), key=lambda r: tuple(r[k] or 0 for k in order)),
    }


def _point(rows: dict, run: dict, key: str, v: dict, judged: dict) -> None:
    row = rows.setdefault(
        (run["system"], key),
        {k: v[k] for k in ("label", "family", "benchmark", "np", "bytes")}
        | {"system": run["system"], "key": key, "points": []},
    )
    row["points"].append(
        {"run": run["id"], "started": run["started"], "value": v["value"], **judged}
    )


def _change(before: dict | None, run: dict) -> str | None:
    if before is None:
        return None
    said = [
        f"{what} {before[k]} -> {run[k]}"
        for k, what in (("mpi", "MPI library"), ("commbench_version", "commbench"))
        if before[k] != run[k]
    ]
    said += [
        d.replace("differs: stored", "differs:").replace(", new", " ->")
        for d in index.differences(before["fingerprint"], run["fingerprint"], width=400)
        if not d.startswith("MPI library")
    ]
    return "; ".join(said) or None


def _values(by_run: dict, ids: list[int], key: str) -> list:
    return [by_run[b][key]["value"] for b in ids if key in by_run.get(b, {})]


def _judge(mine: dict, base: tuple, by_run: dict, threshold: float, alpha: float) -> dict:
    """base: (the centre's run ids, the history's), as the gate's (commbench.store.gate)."""
    tests = {}
    for key, v in mine.items():
        past, wide = ([p for p in _values(by_run, ids, key) if p and p > 0] for ids in base)
        if v["value"] and v["value"] > 0 and len(past) >= betweenruns.MIN_RUNS:
            tests[key] = betweenruns.test(
                past, v["value"], threshold, alpha, history=wide,
                min_spread=gate.DEFAULT_MIN_SPREAD,
            )  # fmt: skip
    judged = twosample.verdicts(list(tests.values()), threshold, alpha)
    return {
        key: {"n": t.n, "center": t.center, "band": list(t.band), "ratio": t.ratio,
              "q_slower": qs, "flag": None if verdict == "same" else verdict,
              "detectable": t.detectable}
        for (key, t), (verdict, qs, _) in zip(tests.items(), judged)
    }  # fmt: skip


def _last(text: str | None) -> int:
    if text is None:
        return gate.DEFAULT_LAST
    if not text.isdigit() or not 2 <= int(text) <= 10_000:
        raise ValueError(
            f"--last {text!r} is not a count of baseline runs (accepted: --last N, 2 <= N <= "
            f"10000; default {gate.DEFAULT_LAST})"
        )
    return int(text)


def run(sel: selector.Selector, opts: dict) -> int:
    """Exit 0 with the trend, or 2 (as export and report --trend) where no run matches."""
    last = _last(opts.get("last"))
    threshold = _threshold(opts.get("threshold"))
    with Store.open(opts.get("store")) as store:
        data = compute(store, sel, last, threshold)
    if not data["runs"]:
        raise ValueError(f"store {data['store']}: no run matches {data['selector'] or 'it'}")
    if opts.get("json"):
        print(json.dumps(data, indent=1, allow_nan=False))
    else:
        print("\n".join(text(data)))
    return 0


def _threshold(text: str | None) -> float:
    from commbench.views import compare_gate

    return compare_gate.VALUED["--threshold"][1](text) if text else 0.05


def text(data: dict) -> list[str]:
    runs_ = data["runs"]
    if not runs_:
        return [f"# trend: store {data['store']}: no run matches {data['selector'] or 'it'}"]
    lines = [
        f"# trend: store {data['store']}, {len(runs_)} runs {runs_[0]['started']} .. "
        f"{runs_[-1]['started']} ({data['selector'] or 'every run'}); band: where the test "
        f"calls a run (one-sided at q {data['alpha']:g}, beyond {data['threshold']:.0%}) from the "
        f"{data['last']} runs before each (spread from the "
        f"{gate.DEFAULT_HISTORY}, at least {gate.DEFAULT_MIN_SPREAD:.0%}); flag: between-run "
        f"test beyond {data['threshold']:.0%}, q <= {data['alpha']:g}"
    ]
    for r in runs_:
        f = r.get("flag")
        if f and f["accepted"]:
            lines.append(
                f"# accepted change at run {r['id']} ({r['started']}): flagged {f['flagged']} "
                f"({len(f['rows'])} rows slower), accepted {f['accepted']} by {f['accepted_by']}: "
                f"{f['why']}"
            )
        elif f:
            lines.append(f"# flagged at run {r['id']} ({r['started']}): not accepted, no baseline")
    lines += [f"# change at run {r['id']} ({r['started']}): {r['change']}" for r in runs_
              if r["change"]]  # fmt: skip
    for row in data["rows"]:
        flagged = sum(1 for p in row["points"] if p.get("flag") == "slower")
        lines += ["", f"{row['label']}  [{row['system']}]" + (
            f"  ({flagged} runs flagged slower)" if flagged else "")]  # fmt: skip
        lines.append(f"  {'run':>6}  {'started':<20} {'value[usec]':>12} {'band[usec]':>21} "
                     f"{'new/base':>9}  flag")  # fmt: skip
        for p in row["points"]:
            lines.append("  " + _point_text(p))
    return lines


def _point_text(p: dict) -> str:
    value = "-" if p["value"] is None else f"{p['value']:.3f}"
    band = f"{p['band'][0]:.3f}-{p['band'][1]:.3f}" if p.get("band") else "-"
    ratio = f"{p['ratio']:.3f}" if p.get("ratio") and math.isfinite(p["ratio"]) else "-"
    flag = {"slower": "SLOWER", "faster": "faster"}.get(p.get("flag") or "", "")
    return f"{p['run']:>6}  {p['started']:<20} {value:>12} {band:>21} {ratio:>9}  {flag}"
