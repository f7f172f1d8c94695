"""The rows against the hosts' physical limits, as the closing lines of a text report
(docs/limits.md): one line a table, after the tables, so that the tables keep the peer's
layout byte for byte. Each row's own figures are in its record (extra["limit"])."""

from __future__ import annotations

from typing import TextIO

from commbench import records

# Every line says it is commbench's: the peers' layouts (OSU's '#' headers) stay theirs.
PREFIX = "# commbench: "
MOST = 24  # tables named at most (the net family makes one a host pair and round)


def _size(x: int | None) -> str:
    return "" if x is None else f"{x} bytes at "


def _table(rows: list[tuple[records.Measurement, dict]]) -> str:
    first = rows[0][0]
    name = first.benchmark if len(first.groups) <= 1 else f"Multi-{first.benchmark}"
    what = f"{name} np={first.np}" + (f" {first.mode}" if first.mode else "")
    said = []
    timed = [(r, lim) for r, lim in rows if "multiple" in lim]
    if timed:
        r, lim = min(timed, key=lambda x: x[0].bytes or 0)
        said.append(f"{_size(r.bytes)}{lim['multiple']:.1f}x the {lim['t']:.3g} us floor")
    moved = [(r, lim) for r, lim in rows if "fraction" in lim]
    if moved:
        last, lim = max(moved, key=lambda x: x[0].bytes or 0)
        best, most = max(moved, key=lambda x: x[1]["fraction"])
        said.append(
            f"{_size(last.bytes)}{lim['fraction']:.2f} of {lim['bandwidth'] / 1e9:.3g} GB/s"
        )
        said.append(f"most {most['fraction']:.2f}, at {best.bytes} bytes")
    return f"{PREFIX}  {what}: {'; '.join(said)}"


def trailer(rows: list[records.Measurement]) -> list[str]:
    """The closing lines: what the limits are, then a line a table (its smallest size's
    multiple of the latency floor, its largest size's fraction of the bandwidth limit, and
    the largest fraction and its size); [] when no row has a limit."""
    from commbench.models import limits  # here: imb_text, which ranks import, imports this

    held = [(r, lim) for r in rows if (lim := limits.recorded(r.extra))]
    if not held:
        return []
    tables: dict[tuple, list[tuple[records.Measurement, dict]]] = {}
    for r, lim in held:
        tables.setdefault((*r.table_key, r.extra.get("engine")), []).append((r, lim))
    kinds = sorted({lim["of"] for _, lim in held})
    about = {
        "memory": "one copy in memory at the size, and the cache-line floor between two ranks",
        "link": "the line rate of the link between hosts",
    }
    head = "; ".join(about[k] for k in kinds)
    shown = [_table(t) for t in list(tables.values())[:MOST]]
    if len(tables) > MOST:
        shown.append(f"{PREFIX}  and {len(tables) - MOST} more tables: their rows' records hold it")
    return ["", f"{PREFIX}against the physical limit ({head}; docs/limits.md):", *shown]


# The text views that say the closing lines themselves, before their own last line (IMB's
# "# All processes entering MPI_Finalize", msgrate's machine-readable line): imb_text, and
# those that keep measuring_text.Notes; the others get LimitsTrailer after them.
SAID_BY_THE_VIEW = frozenset({"imb", "osu", "p2p", "mt", "msgrate", "imported"})


class LimitsTrailer:
    """The closing lines as a sink of their own, after a family's text view that does not
    print them itself (SAID_BY_THE_VIEW)."""

    def __init__(self, out: TextIO) -> None:
        self.out, self.rows = out, []

    def start(self, header: dict) -> None:
        pass

    def record(self, rec: records.Measurement) -> None:
        self.rows.append(rec)

    def finish(self, summary: dict) -> None:
        lines = trailer(self.rows)
        if lines:
            self.out.write("\n".join(lines) + "\n")
            self.out.flush()
