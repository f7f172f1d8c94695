"""The lines every text view prints for how rows were measured: the preamble's
--precision target and --shuffle order, and the closing note on the rows that did
or did not reach the precision target. Shared by the IMB text and the text views of
the procedure families (osu, p2p, mt, msgrate), whose rows the harness measures alike.
"""

from __future__ import annotations

from commbench import records
from commbench.row_measurement import PRECISION_SAMPLES, samples_taken
from commbench.views import limits_text


def measuring_lines(cfg: dict) -> list[str]:
    """The preamble's lines for --precision and --shuffle (none without them)."""
    m = cfg.get("measuring") or {}
    out = []
    if m.get("precision") is not None:
        secs, k = m.get("precision_budget") or (cfg.get("secs"), None)
        k = k or max(PRECISION_SAMPLES, cfg.get("samples") or 1)
        out.append(
            f"# Precision target               :   +-{100 * m['precision']:g}% (95% CI of the "
            "median t_max), "
            f"at most {secs:g} s and {k} samples per row; * marks rows that missed it"
        )
    how = samples_taken(cfg.get("samples") or 1, m)
    if how is not None and m.get("precision") is None:
        k = cfg.get("samples")
        out.append(
            f"# Samples                        :   {k} per row, "
            + (
                f"in {k} rounds over the run (each visits every row once, in an order drawn "
                f"from seed {m.get('shuffle_seed') or 0}); rows are printed after the last round"
                if how == "rounds"
                else "one after another"
            )
        )
    if m.get("shuffle") is not None:
        out.append(
            f"# Order                          :   shuffled, seed {m.get('shuffle_seed')} (sizes "
            "of each sweep "
            "and benchmarks); rows are printed as measured"
        )
    return out


def row_named(r: records.Measurement) -> str:
    """A row as the closing notes name it: benchmark, processes, mode, size."""
    return (
        f"{r.benchmark} {r.np} processes"
        + (f" {r.mode}" if r.mode else "")
        + (f", {r.bytes} bytes" if r.bytes is not None else "")
    )


def precise(cfg: dict) -> bool:
    return (cfg.get("measuring") or {}).get("precision") is not None


def precision_note(rows: list[records.Measurement], cfg: dict) -> list[str]:
    """--precision: how many rows reached the target, and each that did not, with why."""
    missed = [r for r in rows if not (r.extra.get("precision") or {}).get("reached")]
    target = 100 * cfg["measuring"]["precision"]
    out = [
        "",
        f"# precision: {len(rows) - len(missed)} of {len(rows)} rows reached +-{target:g}% (95% CI "
        "of the "
        f"median t_max)" + (f"; {len(missed)} did not (*):" if missed else ""),
    ]
    for r in missed:
        p = r.extra.get("precision") or {}
        got = "no CI" if p.get("achieved") is None else f"+-{100 * p['achieved']:.2f}%"
        out.append(
            f"#   {row_named(r)}: {got} ({p.get('stopped', '?')}: {p.get('k', 0)} samples in "
            f"{p.get('secs', 0):.1f} s)"
        )
    return out


class Notes:
    """What a text view adds for --precision and --shuffle: the preamble's lines (start),
    the rows measured to a target (record), and the closing note on them (finish); and the
    rows against the hosts' physical limits (commbench.views.limits_text)."""

    def __init__(self) -> None:
        self.cfg: dict = {}
        self.rows: list[records.Measurement] = []
        self.all: list[records.Measurement] = []

    def start(self, cfg: dict) -> list[str]:
        self.cfg = cfg
        return measuring_lines(cfg)

    def record(self, rec: records.Measurement) -> None:
        self.all.append(rec)
        if precise(self.cfg) and rec.extra.get("precision") is not None:
            self.rows.append(rec)

    def finish(self) -> list[str]:
        said = precision_note(self.rows, self.cfg) if precise(self.cfg) and self.rows else []
        return said + limits_text.trailer(self.all)
