"""Heatmaps of a net run (cluster diagnosis): the host x host matrices of AllPairs.

`commbench plot RESULTS.json -o OUT.png|.svg` on a results file of the net
family draws one panel per metric (latency: median half round trip in usec;
bandwidth: median MB/s), rows sending and columns receiving, hosts on both
axes in rank order. Colours run from good (green) to bad (red) in both
panels. What the verdicts named is marked: a named host's tick labels are
red and bold with a "!", a named link's two cells are framed in red, and
the verdicts' lines are printed under the panels. The diagonal holds the
pairs within a host when there are any (grey when there are none); grey cells
off the diagonal are host pairs the run did not measure (AllPairs' sampled
shifts at scale: the panel's title says how many of P-1 shifts ran). Beyond
TICKS_UP_TO hosts every k-th host is labelled.
"""

from __future__ import annotations

import sys

import numpy as np

from commbench.suites.net.verdicts import named

TITLES = {"latency": "latency [usec, half round trip]", "bandwidth": "bandwidth [MB/s]"}
TICKS_UP_TO = 64


def is_net(path: str) -> dict | None:
    """The results document of a net run, else None."""
    from commbench.views import results_file

    try:
        doc, _ = results_file.read(path)
    except ValueError:
        return None
    return doc if doc.get("family", {}).get("name") == "net" else None


def matrices(doc: dict) -> list[dict]:
    """The extra of every AllPairs matrix record, latency first."""
    out = [
        dict(r["extra"], bytes=r.get("bytes"))
        for r in doc.get("records", [])
        if r.get("benchmark") == "AllPairs" and r.get("extra", {}).get("host_matrix")
    ]
    return sorted(out, key=lambda e: e["metric"] != "latency")


def _panel(ax, e: dict, hosts_named: set, links_named: set) -> None:
    hosts, metric = e["hosts"], e["metric"]
    m = np.array(
        [[np.nan if v is None else v for v in row] for row in e["host_matrix"]], dtype=float
    )
    if metric == "bandwidth":
        m = m / 1e6
    cmap = (
        __import__("matplotlib").colormaps["RdYlGn" if metric == "bandwidth" else "RdYlGn_r"].copy()
    )
    cmap.set_bad("#dddddd")
    im = ax.imshow(np.ma.masked_invalid(m), cmap=cmap, aspect="equal")
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    labels = [f"{h} !" if h in hosts_named else h for h in hosts]
    every = -(-len(hosts) // TICKS_UP_TO)
    ticks = [i for i in range(len(hosts)) if i % every == 0 or hosts[i] in hosts_named]
    ax.set_xticks(ticks, [labels[i] for i in ticks], rotation=90 if len(hosts) > 8 else 0)
    ax.set_yticks(ticks, [labels[i] for i in ticks])
    for tick in [*ax.get_xticklabels(), *ax.get_yticklabels()]:
        if tick.get_text().endswith(" !"):
            tick.set_color("red")
            tick.set_fontweight("bold")
    if len(hosts) <= 16:
        for i in range(len(hosts)):
            for j in range(len(hosts)):
                if np.isfinite(m[i, j]):
                    ax.text(j, i, f"{m[i, j]:.3g}", ha="center", va="center", fontsize=8)
    from matplotlib.patches import Rectangle

    for a, c in links_named:
        if a in hosts and c in hosts:
            i, j = hosts.index(a), hosts.index(c)
            for y, x in ((i, j), (j, i)):
                ax.add_patch(
                    Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, edgecolor="red", lw=2.5)
                )
    ax.set_xlabel("receiving host")
    ax.set_ylabel("sending host")
    plan = e.get("plan")
    shifts = ""
    if plan and plan["rule"] != "all":
        shifts = (
            f"\n{plan['steps']} of {plan['of']} shifts ({plan['rule']}); "
            f"{plan['covered']} of {plan['host_pairs']} host pairs measured"
        )
    ax.set_title(f"AllPairs {TITLES[metric]}, {e.get('bytes')} bytes{shifts}", fontsize=10)


def figure(doc: dict, path, fmt: str | None = None) -> int:
    """Draw the heatmaps of doc into path (PNG or SVG by suffix, or fmt); the number of panels."""
    from commbench.views.plot import pyplot

    plt = pyplot()
    mats = matrices(doc)
    if not mats:
        raise ValueError("no AllPairs matrix in this results file (a run with AllPairs makes them)")
    found = doc.get("verdicts") or []
    lines = [v["text"] for v in found] or ["verdicts: no host or link stands out"]
    n = max(len(m["hosts"]) for m in mats)
    size = min(4.5 + 0.25 * n, 14)
    text_h = 0.3 + 0.16 * min(len(lines), 8)
    fig, axes = plt.subplots(1, len(mats), figsize=(size * len(mats), size + text_h), squeeze=False)
    for ax, e in zip(axes[0], mats):
        metric_named = [
            v for v in found if v["metric"] == e["metric"] and v["pattern"] == "AllPairs"
        ]
        hosts_named = named(found)[0]  # a host named by any pattern is marked on every panel
        _panel(ax, e, hosts_named, named(metric_named)[1])
    meta = doc.get("metadata", {})
    fig.suptitle(
        f"commbench net: {meta.get('world_size', '?')} processes on {len(meta.get('hosts', []))} "
        f"hosts ({meta.get('date', '')})",
        fontsize=11,
    )
    shown = lines[:8] + ([f"... and {len(lines) - 8} more"] if len(lines) > 8 else [])
    fig.text(
        0.01,
        0.01,
        "\n".join(s if len(s) < 170 else s[:167] + "..." for s in shown),
        fontsize=7,
        family="monospace",
        va="bottom",
        color="red" if found else "black",
    )
    fig.tight_layout(rect=(0, text_h / (size + text_h), 1, 0.95))
    fig.savefig(path, dpi=110, format=fmt)
    plt.close(fig)
    return len(mats)


def cmd(doc: dict, path: str, out: str) -> int:
    """`commbench plot` of a net results file: the exit status."""
    try:
        k = figure(doc, out)
    except ValueError as e:
        print(f"commbench plot: error: {path}: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"commbench plot: error: cannot write {out!r} ({e.strerror})", file=sys.stderr)
        return 2
    print(f"commbench: heatmaps ({k} panels) written to {out}", file=sys.stderr)
    return 0
