"""The Congestion records' text (views.gpcnet_text): roles, impact factors, verdicts; in
commbench's layout or, with --gpcnet-layout, network_load_test's key results table."""

from __future__ import annotations

from commbench import records
from commbench.views.gpcnet_text import LINE, outer, title

KEY_BAR = "+" + "-" * 33 + "+" + "-" * 22 + "+" + "-" * 21 + "+"


def congestion_lines(rec: records.Measurement, s, width: int) -> list[str]:
    if rec.mode == "roles":
        return roles_lines(rec.extra, s.layout)
    if rec.mode == "impact":
        return impact_lines(rec.extra, s.layout)
    return []


def roles_lines(x: dict, layout: bool) -> list[str]:
    groups = x["congestors"]
    n_c = sum(len(v) for v in groups.values())
    if layout:
        least = min((len(v) for v in groups.values()), default=0)
        return [
            "",
            "NetworkLoad Tests (commbench, GPCNeT 1.3's layout)",
            f"  {len(x['victims'])} nodes running Network Tests",
            f"  {n_c} nodes running Congestion Tests (min {least} nodes per congestor)",
        ]
    out = ["", LINE, "# Congestion: roles (by host)", LINE]
    out.append(f"# victims   : {', '.join(x['victims'])}")
    for kind, hs in groups.items():
        out.append(f"# {kind:<10}: {', '.join(hs)}")
    if x.get("left_out"):
        out.append(f"# not run   : {', '.join(x['left_out'])} (each needs 2 hosts of its own)")
    if x.get("idle"):
        out.append(f"# idle      : {', '.join(x['idle'])}")
    out.append(f"# scale     : {x['scale_note']}")
    return out


def _x(v) -> str:
    return f"{v:.2f}x" if v is not None else "-"


def _ci(c) -> str:
    return f"[{c[0]:.2f}, {c[1]:.2f}]" if c else "[-]"


def impact_lines(x: dict, layout: bool) -> list[str]:
    if layout:
        out = [
            "",
            outer(80),
            title("Network Tests running with Congestion Tests - Key Results", 80),
        ]
        out += [
            "+" + "-" * 33 + "+" + "-" * 44 + "+",
            f"| {'Name':>31} | {'Congestion Impact Factor':>42} |",
            KEY_BAR,
            f"| {'':>31} | {'Avg':>20} | {'99%':>19} |",
            KEY_BAR,
        ]
        for t in x["tests"].values():
            g = t["gpcnet"]
            a = f"{g['avg']:.1f}X" if g.get("avg") is not None else "-"
            b = f"{g['p99']:.1f}X" if g.get("p99") is not None else "-"
            out += [f"| {t['name'][:31]:>31} | {a:>20} | {b:>19} |", KEY_BAR]
        return out + verdict_lines(x)
    out = [
        "",
        LINE,
        "# Congestion impact factors (loaded / isolated; bandwidth isolated / loaded)",
        LINE,
        f"{'Name':>32} {'Avg':>8} {'[95 % CI]':>16} {'99%':>8} {'[95 % CI]':>16}",
    ]
    for t in x["tests"].values():
        out.append(
            f"{t['name']:>32} {_x(t['avg']):>8} {_ci(t['avg_ci']):>16} "
            f"{_x(t['p99']):>8} {_ci(t['p99_ci']):>16}"
        )
    out.append("# per victim host (Avg factors; Links: the median of its links' factors)")
    names = ["Links", *[k for k in x["tests"]]]
    out.append(f"{'host':>32} " + " ".join(f"{n[:16]:>17}" for n in names))
    for h, f in x["per_host"].items():
        out.append(f"{h:>32} " + " ".join(f"{_x(f.get(n)):>17}" for n in names))
    out.append("# links (bandwidth of 131072 bytes, median time loaded / alone)")
    for k, v in x["links"].items():
        out.append(
            f"{k:>32} {_x(v['factor']):>8} {_ci(v['ci95']):>16}  "
            f"({v['samples'][0]} + {v['samples'][1]} samples)"
        )
    return out + verdict_lines(x)


def verdict_lines(x: dict) -> list[str]:
    out = ["", LINE, "# Verdicts under load", LINE]
    if x.get("note"):
        out.append(f"# {x['note']}")
    if not x["verdicts"]:
        out.append("# no host or link degrades under load more than the others")
    out += [f"# {v['text']}" for v in x["verdicts"]]
    return out
