"""Figures: time and rate against message size on log axes, with the Hockney fits.

Left: t(n) with the spread over ranks (t_min .. t_max) as error bars and the
fitted lines t = t0 + n / r_inf per region. Right: the rate F·n / t with the
fitted rate curves, r_inf as a dotted asymptote and n_1/2 marked where the
curve reaches r_inf / 2. Breakpoints are vertical dashed lines on both. Zero
sizes cannot appear on a log axis; they still enter the fit.
"""

from __future__ import annotations

import base64
import io
import os

import numpy as np

from commbench import outputs


def _si(v: float, unit: str) -> str:
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {prefix}{unit}"
    return f"{v:.3g} {unit}"


MARKERS = "osD^v<>pP*"


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display), imported when a figure is drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def svg_uri(fig, **savefig) -> str:
    """fig as an SVG data: URI (the HTML pages' inline figures), then closed."""
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", **savefig)
    pyplot().close(fig)
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _physical(fit) -> bool:
    """A Hockney fit worth drawing: every region with r_inf > 0 and t0 >= 0 (else noise
    made the line meaningless, and it is left out with a note in the legend)."""
    if fit is None or fit.model != "hockney":
        return fit is not None
    return all(
        np.isfinite(g.r_inf.value) and g.r_inf.value > 0 and g.t0.value >= 0 for g in fit.segments
    )


def drawable(items: list) -> list:
    """The (Series, Fit) pairs with a size > 0 to draw on the log size axis (a table of 0-byte
    rows only, or whose other sizes timed out, has none: it would leave both panels empty)."""
    return [(s, f) for s, f in items if (s.n > 0).any()]


def figure(items: list, path, show_source: bool = False, fmt: str | None = None) -> list[str]:
    """items: (Series, Fit or None) pairs; writes PNG or SVG by the file's suffix (or fmt,
    for a file object: the HTML report's inline figures) and returns the legend's entries.

    Colours from tab10 (tab20 beyond 10 series), markers changing every cycle; the
    legend sits below both panels, each entry naming its benchmark."""
    plt = pyplot()
    cmap = plt.get_cmap("tab10" if len(items) <= 10 else "tab20")
    ncolors = cmap.N
    entries = len(items) + sum(len(f.segments) for _, f in items if _physical(f))
    rows = -(-entries // 2)
    legend_h = 0.3 + 0.17 * rows
    fig, (ax_t, ax_r) = plt.subplots(1, 2, figsize=(14, 6.2 + legend_h))
    for k, (s, fit) in enumerate(items):
        c, m = cmap(k % ncolors), MARKERS[(k // ncolors) % len(MARKERS)]
        name = s.title() + (f" - {os.path.basename(s.source)}" if show_source and s.source else "")
        drawn = _physical(fit)
        note = (
            ""
            if fit is None or drawn
            else " (fit not drawn: r_inf <= 0 or t0 < 0, noise dominates)"
        )
        _points(ax_t, ax_r, s, c, name + note, m)
        if drawn:
            _fit_lines(ax_t, ax_r, fit, c, s.benchmark, marks=len(items) <= 4)
    for ax in (ax_t, ax_r):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size n [bytes]")
        ax.grid(True, which="major", alpha=0.3)
    ax_t.set_ylabel("time t [usec]")
    ax_r.set_ylabel("rate [MB/s] (10^6 bytes/s)")
    ax_t.set_title("time per message; bars: t_min .. t_max over ranks")
    ax_r.set_title("rate = turnover * n / t; dotted: r_inf, diamond: n_1/2")
    handles, labels = ax_t.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=7, frameon=False)
    fig.suptitle(
        "commbench: t = (n + n_1/2) / r_inf per region" if any(f for _, f in items) else "commbench"
    )
    fig.tight_layout(rect=(0, legend_h / (6.2 + legend_h), 1, 1))
    if isinstance(path, str):
        outputs.ensure_parent(path)
    fig.savefig(path, dpi=110, format=fmt)
    plt.close(fig)
    return labels


def _points(ax_t, ax_r, s, c, name: str, marker: str = "o") -> None:
    """The measured times (bars t_min .. t_max) and the rates they give."""
    pos = s.n > 0
    n, t, lo, hi = s.n[pos], s.t[pos], s.t_min[pos], s.t_max[pos]
    style = {"fmt": marker, "ms": 4, "color": c, "capsize": 2, "label": name}
    ax_t.errorbar(n, t, yerr=[np.maximum(t - lo, 0), np.maximum(hi - t, 0)], **style)
    rate = s.turnover * n / (t * 1e-6)
    r_hi = s.turnover * n / (np.maximum(lo, 1e-12) * 1e-6)
    r_lo = s.turnover * n / (hi * 1e-6)
    ax_r.errorbar(
        n,
        rate / 1e6,
        yerr=[np.maximum(rate - r_lo, 0) / 1e6, np.maximum(r_hi - rate, 0) / 1e6],
        **style,
    )


def _fit_lines(ax_t, ax_r, fit, c, bench: str, marks: bool = True) -> None:
    """Each fitted region's line, r_inf and n_1/2 marks (with few series: else they
    pile up; the legend gives the values), and the breakpoints."""
    for seg in fit.segments:
        a = max(seg.sizes[0], 1)
        b = max(seg.sizes[1], a * 1.01)
        x = np.geomspace(a, b, 100)
        tf = seg.t(x)
        ok = tf > 0
        lab = None
        if fit.model == "hockney":
            lab = (
                f"{bench} fit: r_inf {_si(seg.r_inf.value, 'B/s')}, n_1/2 "
                f"{_si(seg.n_half.value, 'B')}, t0 {seg.t0.value:.3g} us "
                f"({seg.sizes[0]}..{seg.sizes[1]} B)"
            )
        ax_t.plot(x[ok], tf[ok], "-", color=c, lw=1.6, alpha=0.85, label=lab or f"{bench} fit")
        ax_r.plot(x[ok], seg.rate(x[ok]) / 1e6, "-", color=c, lw=1.6, alpha=0.85)
        if (
            marks
            and fit.model == "hockney"
            and seg.r_inf.value > 0
            and np.isfinite(seg.r_inf.value)
        ):
            ax_r.hlines(seg.r_inf.value / 1e6, a, b, colors=c, linestyles=":", lw=1.2)
            ax_r.annotate(
                f"r_inf {_si(seg.r_inf.value, 'B/s')}",
                (b, seg.r_inf.value / 1e6),
                textcoords="offset points",
                xytext=(-4, 4),
                ha="right",
                fontsize=8,
                color=c,
            )
            nh = seg.n_half.value
            if a <= nh <= b:
                ax_r.plot([nh], [seg.r_inf.value / 2e6], marker="D", ms=7, color=c, mfc="white")
                ax_r.annotate(
                    f"n_1/2 {_si(nh, 'B')}",
                    (nh, seg.r_inf.value / 2e6),
                    textcoords="offset points",
                    xytext=(6, -12),
                    fontsize=8,
                    color=c,
                )
    for bp in fit.breakpoints:
        for ax in (ax_t, ax_r):
            ax.axvline(bp, color=c, ls="--", lw=1, alpha=0.7)
        ax_t.text(
            bp,
            0.02,
            f"breakpoint {bp} B ",
            transform=ax_t.get_xaxis_transform(),
            rotation=90,
            fontsize=8,
            color=c,
            ha="right",
            va="bottom",
        )


def overhead_figure(decs: dict, path: str) -> None:
    """Seed 002's Figure 1: Table 1 (the six times, mean ± standard deviation over the
    trials) against message size on linear axes, with the fitted lines of Table 3;
    one panel per Q variant. decs: {q: decomposition table (commbench.models.overhead)}."""
    from commbench.models.overhead import SIX

    plt = pyplot()

    cmap = plt.get_cmap("tab10")
    fig, axes = plt.subplots(1, len(decs), figsize=(7.5 * len(decs), 6), squeeze=False)
    for ax, (q, dec) in zip(axes[0], decs.items()):
        for k, name in enumerate(SIX):
            c, pts = cmap(k), dec["values"][name]
            ns = sorted(pts)
            ax.errorbar(
                ns,
                [pts[n].mean for n in ns],
                yerr=[pts[n].std for n in ns],
                fmt=MARKERS[k],
                ms=5,
                color=c,
                capsize=3,
                label=name,
            )
            fit = dec["fits"][name]
            if fit is not None:
                x = np.linspace(min(ns), max(ns), 50)
                sign = "+" if fit.b >= 0 else "-"
                ax.plot(
                    x,
                    fit.a + fit.b * x,
                    "-",
                    color=c,
                    lw=1.3,
                    alpha=0.8,
                    label=f"{name} = {fit.a:.4g} {sign} {abs(fit.b):.4g}n",
                )
        ax.set_xlabel("message size n [bytes]")
        ax.set_ylabel("time [usec]")
        ax.set_title(f"Q = {q}: mean ± std over trials, lines a + b*n")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=2, loc="best")
    fig.suptitle("commbench overhead: seed 002 Figure 1 (Table 1 with the fitted lines of Table 3)")
    fig.tight_layout()
    if isinstance(path, str):
        outputs.ensure_parent(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
