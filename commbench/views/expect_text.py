"""`commbench expect`'s verdicts as text, JSON and JUnit XML, and the expectations file it
proposes from a good run (--write) (no MPI; the rules: commbench.models.expectations)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from commbench import records
from commbench.models import expectations as ex

# Rows up to this size are bounded by their time in a proposed file, larger ones by their
# bandwidth (where they have one): what each size range is bought for.
LATENCY_UP_TO = 64 * 1024


def _measured(v: ex.Verdict) -> str:
    if v.value is None:
        return "-"
    return ex.shown(v.value, v.rule.metric, v.rule.bound.of_limit)


def text(verdicts: list[ex.Verdict], rules_path: str) -> list[str]:
    """One line a verdict, failures and no data first, then the counts."""
    order = {ex.FAIL: 0, ex.NO_DATA: 1, ex.PASS: 2}
    rows = sorted(verdicts, key=lambda v: order[v.verdict])
    width = max([len(v.row or v.rule.describe()) for v in rows] + [3])
    out = [f"{'verdict':<8} {'row':<{width}} {'metric':<9} {'measured':>12}  {'expected':<18} rule"]
    for v in rows:
        what = v.row or f"({v.rule.describe()})"
        out.append(
            f"{v.verdict.upper() if v.verdict == ex.FAIL else v.verdict:<8} {what:<{width}} "
            f"{v.rule.metric:<9} {_measured(v):>12}  {v.rule.bound.text:<18} {v.rule.where}"
            + (f"  [{v.source}: {v.why}]" if v.why else "")
        )
    out.append(summary(verdicts, rules_path))
    return out


def section(verdicts: list[ex.Verdict], rules_path: str) -> str:
    """The report page's section (`commbench report --html … --expect RULES`): the counts,
    then a row a verdict, failures first; every string escaped."""
    from commbench.views.html_sections import esc, table

    order = {ex.FAIL: 0, ex.NO_DATA: 1, ex.PASS: 2}
    rows = [
        [
            f'<span class="{"slower" if v.verdict == ex.FAIL else "same"}">{esc(v.verdict)}</span>',
            esc(v.row or f"({v.rule.describe()})"),
            esc(v.rule.metric),
            esc(_measured(v)),
            esc(v.rule.bound.text),
            esc(v.rule.where),
            esc(f"{v.source}: {v.why}" if v.why else v.source),
        ]
        for v in sorted(verdicts, key=lambda v: order[v.verdict])
    ]
    head = ["verdict", "row", "metric", "measured", "expected", "rule", "results"]
    said = f'<p class="verdict">{esc(summary(verdicts, rules_path))}</p>'
    return said + "\n" + table(head, rows, text=(0, 1, 2, 4, 5, 6))


def counts(verdicts: list[ex.Verdict]) -> dict[str, int]:
    return {k: sum(1 for v in verdicts if v.verdict == k) for k in (ex.PASS, ex.FAIL, ex.NO_DATA)}


def summary(verdicts: list[ex.Verdict], rules_path: str) -> str:
    c = counts(verdicts)
    return (
        f"commbench expect: {c[ex.PASS]} pass, {c[ex.FAIL]} fail, {c[ex.NO_DATA]} no data "
        f"({len(verdicts)} verdicts of the rules in {rules_path})"
    )


def as_json(verdicts: list[ex.Verdict], rules_path: str, status: int) -> dict:
    return {
        "expectations": rules_path,
        "exit_status": status,
        "counts": counts(verdicts),
        "verdicts": [
            {
                "verdict": v.verdict,
                "results": v.source,
                "row": v.row or None,
                "rule": v.rule.where,
                "name": v.rule.name or None,
                "metric": v.rule.metric,
                "expected": v.rule.bound.text,
                "value": v.value,
                "unit": f"of {v.rule.bound.of_limit}"
                if v.rule.bound.of_limit
                else ex.BASE[v.rule.metric],
                "why": v.why or None,
            }
            for v in verdicts
        ],
    }


def junit(verdicts: list[ex.Verdict], rules_path: str) -> bytes:
    """JUnit XML (what Jenkins and GitLab read): a test suite per results file, a test case
    per verdict; a failure for fail, skipped for no data."""
    root = ET.Element("testsuites", name=f"commbench expect {rules_path}")
    for source in dict.fromkeys(v.source for v in verdicts):
        mine = [v for v in verdicts if v.source == source]
        c = counts(mine)
        suite = ET.SubElement(
            root,
            "testsuite",
            name=source,
            tests=str(len(mine)),
            failures=str(c[ex.FAIL]),
            skipped=str(c[ex.NO_DATA]),
            errors="0",
        )
        for v in mine:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"commbench.expect.{v.rule.metric}",
                name=f"{v.row or v.rule.describe()}: {v.rule.metric} {v.rule.bound.text}",
            )
            said = f"measured {_measured(v)}, expected {v.rule.bound.text} ({v.rule.where})"
            if v.verdict == ex.FAIL:
                ET.SubElement(case, "failure", message=said).text = said
            elif v.verdict == ex.NO_DATA:
                ET.SubElement(case, "skipped", message=f"no data: {v.why} ({v.rule.where})")
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def propose(sources: list[tuple[str, dict, list[records.Measurement]]], margin: float) -> str:
    """An expectations file from good runs, for a person to edit: a rule a measured row, its
    time (up to 64 KiB) or bandwidth (above) with `margin` of room."""
    out = [
        "# commbench expectations, proposed by `commbench expect --write` from:",
        *(
            f"#   {path} (hosts: {', '.join(records.run_hosts(doc)) or 'not recorded'})"
            for path, doc, _ in sources
        ),
        f"# Each bound leaves {margin:.0%} of room on the measured value: edit them to what this",
        "# system should give (docs/expect.md).",
    ]
    worst: dict[tuple, tuple[str, float]] = {}
    for _, _, recs in sources:
        for lines, (metric, v) in filter(None, map(_proposed, recs)):
            _, seen = worst.get(lines, (metric, v))
            # one rule a selection: rows it cannot tell apart (engines, runs) give the loosest
            worst[lines] = (metric, max(v, seen) if metric == "t" else min(v, seen))
    for lines, (metric, v) in worst.items():
        room, op, way = (1 + margin, "<=", "up") if metric == "t" else (1 - margin, ">=", "down")
        bound = f"{op} {ex.shown(v * room, metric, rounded=way)}"
        out += ["", "[[expect]]", *lines, f'{metric} = "{bound}"']
    return "\n".join(out) + "\n"


def _proposed(r: records.Measurement) -> tuple[tuple[str, ...], tuple[str, float]] | None:
    """The selector lines of a row's rule, and the metric and value it bounds."""
    if not r.ok or len(r.groups) > 1:
        return None
    bw, t = ex.value(r, "bandwidth"), ex.value(r, "t")
    if bw is not None and (r.bytes or 0) > LATENCY_UP_TO:
        found = ("bandwidth", bw)
    elif t is not None:
        found = ("t", t)
    else:
        return None
    lines = [f'benchmark = "{r.benchmark}"', f'family = "{r.family}"', f"np = {r.np}"]
    lines += [f'mode = "{r.mode}"'] if r.mode else []
    lines += [] if r.bytes is None else [f"bytes = {r.bytes}"]
    return tuple(lines), found
