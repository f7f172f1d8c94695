"""The layout of an osu record in OMB 7.4's text (osu_text.py): the lines each program prints
around its table and the columns of the table, derived from what the record says was measured
(its program and the facts in its extra, -f's `full` among them). Records carry those facts,
never the layout, so a results file is read the same by every view and stays the same when the
text changes.

What each program prints beyond the common header (title, "# Datatype: …", the column line):
- preface, before the title: the neighbourhood programs' topology (extra topology,
  topology_dims, topology_us); latency_mt's threads (sender_threads, receiver_threads);
  latency_mp's forked processes (forked_asked);
- settings, '#' lines after the title, with no blank line before it and the whole header
  repeated per type: the one-sided programs' window and synchronization (rma_window,
  rma_sync); mbw_mr's pairs and window (pairs, window_size);
- subtitle: the nonblocking collectives' "Overall = …" and a blank line;
- named columns: the nonblocking collectives' and the neighbourhood programs' (-f: all);
- no size column and no datatype line: osu_barrier, osu_barrier_persistent, osu_ibarrier;
  no datatype line: osu_get_acc_latency;
- the operands line of OMB's accelerator builds when buffer operands were given
  (buffer_operands);
- init: its line instead of a table (init_np, init_ms).
"""

from __future__ import annotations

from dataclasses import dataclass

from commbench import records
from commbench.suites.osu import neighbor, nonblocking, onesided
from commbench.suites.osu.checks import buffer_line

UNSIZED = ("barrier", "barrier_persistent", "ibarrier")  # no message: no size column
NO_DATATYPE = UNSIZED + ("get_acc_latency",)


@dataclass(frozen=True)
class OsuLayout:
    preface: list[str]
    settings: list[str]
    subtitle: list[str]
    columns: list[tuple[str, str]] | None  # (heading, value key), or None: the metric's
    sized: bool
    datatype_line: bool
    buffer_line: str | None
    text: list[str] | None  # lines instead of a table (init)


def of(rec: records.Measurement) -> OsuLayout:
    """rec's layout."""
    ex, name = rec.extra, rec.benchmark
    return OsuLayout(
        preface=_preface(rec),
        settings=_settings(rec),
        subtitle=[nonblocking.SUBTITLE] if ex.get("metric") == "nbc" else [],
        columns=_columns(ex.get("metric"), bool(ex.get("full"))),
        sized=name not in UNSIZED,
        datatype_line=name not in NO_DATATYPE,
        buffer_line=buffer_line(ex.get("buffer_operands")),
        text=_init_line(ex) if name == "init" else None,
    )


def _columns(metric: str | None, full: bool) -> list[tuple[str, str]] | None:
    if metric == "nbc":
        return list(nonblocking.FULL if full else nonblocking.SHORT)
    if metric == "neighbor":
        return list(neighbor.FULL if full else neighbor.FULL[:1])
    return None


def _preface(rec: records.Measurement) -> list[str]:
    ex = rec.extra
    if "topology_us" in ex:
        dims = "".join(f"{k} " for k in ex.get("topology_dims", []))
        cart = str(ex.get("topology", "")).startswith("cart")
        return ([f"Dimensions size = {dims}"] if cart else []) + [
            f"Time took to create topology graph:{ex['topology_us']:.2f} us."
        ]
    if "sender_threads" in ex:
        return [
            f"# Number of Sender threads: {ex['sender_threads']} ",
            f"# Number of Receiver threads: {ex['receiver_threads']}",
        ]
    if "forked_asked" in ex:
        send, recv = ex["forked_asked"]
        return [
            f"# Number of forked processes in sender: {send}",
            f"# Number of forked processes in receiver: {recv}",
        ]
    return []


def _settings(rec: records.Measurement) -> list[str]:
    ex = rec.extra
    if "rma_window" in ex:
        return [
            f"Window creation: {onesided.WIN_CALL[ex['rma_window']]}",
            f"Synchronization: {onesided.SYNC_CALLS[ex['rma_sync']]}",
        ]
    if rec.benchmark == "mbw_mr" and "pairs" in ex:
        return [f"[ pairs: {ex['pairs']} ] [ window size: {ex.get('window_size')} ]"]
    return []


def _init_line(ex: dict) -> list[str]:
    ms = ex.get("init_ms") or {}
    return [
        f"nprocs: {ex.get('init_np')}, min: {int(ms.get('min', 0))} ms, max: "
        f"{int(ms.get('max', 0))} ms, avg: {int(ms.get('avg', 0))} ms"
    ]
