"""Time-against-size series for the models: from records, results files or plain CSV.

A series is one table of one benchmark (benchmark, #processes, mode, groups):
the sizes, the reported time t (t_max, as IMB reports it), the spread
t_min .. t_max over the ranks, and the turnover that turns n / t into the
Mbytes/sec column. No MPI here.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field

import numpy as np

from commbench import records
from commbench.records import Kind

# Kinds whose first component is one time per size (t_min/t_max/t_avg rows).
TIMED_KINDS = {
    Kind.SINGLE.value,
    Kind.PARALLEL.value,
    Kind.COLLECTIVE.value,
    Kind.MULTIPLE.value,
    Kind.SINGLE_ONE.value,
    Kind.RATE.value,
}


@dataclass
class Series:
    benchmark: str
    np: int | None
    mode: str
    groups: int
    turnover: float
    source: str  # file it came from ("" for live records)
    n: np.ndarray  # bytes
    t: np.ndarray  # µs, the reported time
    t_min: np.ndarray
    t_max: np.ndarray
    skipped: list[str] = field(default_factory=list)

    @property
    def label(self) -> dict:
        out = {"benchmark": self.benchmark, "np": self.np, "mode": self.mode, "groups": self.groups}
        if self.source:
            out["source"] = self.source
        return out

    def title(self) -> str:
        parts = [self.benchmark]
        if self.np is not None:
            parts.append(f"{self.np} processes")
        if self.mode:
            parts.append(self.mode)
        if self.groups > 1:
            parts.append(f"{self.groups} groups")
        return ", ".join(parts)


def usable(rec: records.Measurement) -> bool:
    return (
        rec.status == records.OK
        and rec.bytes is not None
        and rec.kind in TIMED_KINDS
        and rec.values.get("t", 0) > 0
    )


def from_records(recs: list[records.Measurement], source: str = "") -> list[Series]:
    """One series per table, in the order the tables appear."""
    tables: dict[tuple, list[records.Measurement]] = {}
    for r in recs:
        if usable(r):
            tables.setdefault(r.table_key, []).append(r)
    out = []
    for (bench, np_, mode, ngroups), rs in tables.items():
        rs = sorted(
            rs, key=lambda r: r.bytes
        )  # ascending sizes, also where --shuffle measured them in another order
        out.append(
            Series(
                benchmark=bench,
                np=np_,
                mode=mode,
                groups=ngroups,
                turnover=rs[0].turnover,
                source=source,
                n=np.array([r.bytes for r in rs], dtype=float),
                t=np.array([r.values["t"] for r in rs]),
                t_min=np.array([r.values.get("t_min", r.values["t"]) for r in rs]),
                t_max=np.array([r.values.get("t_max", r.values["t"]) for r in rs]),
            )
        )
    return out


CSV_FORM = (
    "a CSV file with a header line and columns bytes,t_usec (optional t_min_usec, t_max_usec, "
    "benchmark), or a commbench CSV export"
)


def _num(row: dict, key: str, where: str) -> float:
    try:
        return float(row[key])
    except (TypeError, ValueError):
        raise ValueError(f"{where}: column {key!r} is not a number: {row.get(key)!r}") from None


def from_csv(path: str) -> list[Series]:
    """Plain CSV (bytes,t_usec …) or commbench's own CSV export."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            lines = [ln for ln in f if ln.strip() and not ln.lstrip().startswith("#")]
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(
            f"{path}: cannot read ({getattr(e, 'strerror', None) or 'not text'})"
        ) from None
    reader = csv.DictReader(lines)
    cols = [c.strip() for c in (reader.fieldnames or [])]
    reader.fieldnames = cols
    export = "t_max_usec" in cols and "benchmark" in cols and "t_usec" not in cols
    tcol = "t_max_usec" if export else "t_usec"
    if "bytes" not in cols or tcol not in cols:
        raise ValueError(f"{path}: columns {cols} lack bytes and t_usec (accepted: {CSV_FORM})")
    groups = _csv_groups(reader, path, export, tcol)
    if not groups:
        raise ValueError(f"{path}: no data rows (accepted: {CSV_FORM})")
    return [_csv_series(key, g, path) for key, g in groups.items()]


def _csv_groups(reader: csv.DictReader, path: str, export: bool, tcol: str) -> dict[tuple, dict]:
    """The rows of a CSV file by series (benchmark, np, mode, groups): their sizes, times,
    time ranges and (an export's) turnovers; an export's rows not timed are left out."""
    groups: dict[tuple, dict] = {}
    stem = os.path.splitext(os.path.basename(path))[0]
    for i, row in enumerate(reader, start=2):
        where = f"{path}:{i}"
        if export:
            if (
                row.get("status") != "ok"
                or row.get("group") != "all"
                or row.get("bytes") in ("", None)
                or row.get(tcol) in ("", None)
            ):
                continue
            key = (
                row["benchmark"],
                int(row["np"]),
                row.get("mode", ""),
                int(row.get("groups") or 1),
            )
        else:
            key = (row.get("benchmark") or stem, None, "", 1)
        g = groups.setdefault(key, {"n": [], "t": [], "lo": [], "hi": [], "turn": []})
        n, t = _num(row, "bytes", where), _num(row, tcol, where)
        g["n"].append(n)
        g["t"].append(t)
        for k, col in (("lo", "t_min_usec"), ("hi", "t_max_usec")):  # t where not given
            g[k].append(_num(row, col, where) if row.get(col) not in (None, "") else t)
        bps = row.get("bytes_per_sec")
        if export and bps not in (None, "") and n > 0 and t > 0:
            g["turn"].append(float(bps) * t * 1e-6 / n)
    return groups


def _csv_series(key: tuple, g: dict, path: str) -> Series:
    """One series of a CSV file from its group of rows (_csv_groups)."""
    turnover = round(float(np.median(g["turn"])), 6) if g["turn"] else 1.0
    return Series(*key, turnover, path, *(np.array(g[k]) for k in ("n", "t", "lo", "hi")))


def load(path: str) -> list[Series]:
    """Series of a commbench results file (JSON) or of a CSV file."""
    from commbench.views import results_file

    try:
        with open(path, "rb") as f:
            head = f.read(64).lstrip()
    except OSError as e:
        raise ValueError(f"{path}: cannot read ({e.strerror})") from None
    if head.startswith(b"{") or path.endswith(".json"):
        _, recs = results_file.read(path)  # a .json that is not JSON: said so, not read as CSV
        return from_records(recs, path)
    return from_csv(path)


def select(series: list[Series], names: list[str] | None) -> list[Series]:
    """The series of the named benchmarks (case-insensitive); all when names is empty."""
    if not names:
        return series
    wanted = {n.lower() for n in names}
    return [s for s in series if s.benchmark.lower() in wanted]


def _pure_flavours(overlap: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(family, name) of the `<name>_pure` benchmarks that exist for these overlap rows: a
    suggestion names only what `commbench run` takes (OSU's iallreduce has none)."""
    from commbench import suites

    out = []
    for fam, name in overlap:
        canon = suites.canonical_family(fam)
        b = suites.family(canon).get(f"{name}_pure") if canon else None
        if b is not None:
            out.append((canon, b.name))
    return out


def why_none(path: str) -> str:
    """Why a file gave no series to fit: what its rows are instead."""
    from commbench.views import results_file

    try:
        _, recs = results_file.read(path)
    except (OSError, ValueError):
        return "no measurements with message sizes to fit"
    ok = [r for r in recs if r.status == records.OK]
    if not ok:
        return "no measured rows (every row is a status: skipped, out-of-mem, timeout …)"
    kinds = {r.kind for r in ok}
    overlap = sorted(
        {
            (r.family, r.benchmark)
            for r in ok
            if r.kind in (Kind.OVERLAP.value, Kind.OVERLAP_SYNC.value)
        }
    )
    if overlap:
        pure = _pure_flavours(overlap)
        hint = (
            f"; fit the pure flavours instead (commbench run --suite {pure[0][0]} "
            f"{' '.join(n for _, n in pure[:3])} …)"
            if pure
            else "; their families have no pure flavours of them"
        )
        return (
            f"its rows ({', '.join(b for _, b in overlap)}) are overlap measurements (t_ovrl, "
            f"t_pure, t_CPU), which t(n) models do not describe{hint}"
        )
    if kinds <= {Kind.SYNC.value}:
        return "its benchmarks have no message size (Barrier-like: one time per process count)"
    fams = sorted({r.family for r in ok})
    return (
        f"its rows ({', '.join(fams)}: kinds {', '.join(sorted(kinds))}) are not one time per "
        "message size; `commbench report FILE` shows them with their own analyses"
    )
