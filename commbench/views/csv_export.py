"""CSV export of the records: one row per record, plus one per group under -multi."""

from __future__ import annotations

import csv
from typing import TextIO

from commbench import outputs, records

FIELDS = [
    "family",
    "benchmark",
    "kind",
    "np",
    "mode",
    "groups",
    "group",
    "bytes",
    "repetitions",
    "status",
    "t_min_usec",
    "t_max_usec",
    "t_avg_usec",
    "t_median_usec",
    "mbytes_per_sec",
    "bytes_per_sec",
    "t_ovrl_usec",
    "t_pure_usec",
    "t_cpu_usec",
    "overlap_pct",
    "defects",
    "samples",
    "t_max_sample_median_usec",
    "t_max_ci95_low_usec",
    "t_max_ci95_high_usec",
]

_FROM = {
    "t_min_usec": "t_min",
    "t_max_usec": "t_max",
    "t_avg_usec": "t_avg",
    "t_median_usec": "t_median",
    "bytes_per_sec": "bytes_per_sec",
    "t_ovrl_usec": "t_ovrl",
    "t_pure_usec": "t_pure",
    "t_cpu_usec": "t_cpu",
    "overlap_pct": "overlap",
}


def rows(rec: records.Measurement, mb_unit: int = 10**6) -> list[dict]:
    def one(values: dict, group: str) -> dict:
        r = {
            "family": rec.family,
            "benchmark": rec.benchmark,
            "kind": rec.kind,
            "np": rec.np,
            "mode": rec.mode,
            "groups": len(rec.groups),
            "group": group,
            "bytes": "" if rec.bytes is None else rec.bytes,
            "repetitions": rec.repetitions,
            "status": rec.status,
            "defects": "" if rec.defects is None else f"{rec.defects:.6g}",
        }
        for k, src in _FROM.items():
            v = values.get(src)
            r[k] = "" if v is None else f"{v:.6g}"
        st = records.samples_of(rec) if group == "all" else {}
        ci = st.get("t_max_median_ci95") or ("", "")
        r["samples"] = st.get("k", "")
        r["t_max_sample_median_usec"] = f"{st['t_max_median']:.6g}" if st else ""
        r["t_max_ci95_low_usec"], r["t_max_ci95_high_usec"] = (
            f"{v:.6g}" if v != "" else "" for v in ci
        )
        bps = values.get("bytes_per_sec")
        r["mbytes_per_sec"] = "" if bps is None else f"{bps / mb_unit:.6g}"
        return r

    out = [one(rec.values, "all")]
    out += [one(v, str(g)) for g, v in enumerate(rec.group_values)]
    return out


class CsvRecords:
    """Sink that appends rows as records arrive (flushed, so nothing is lost)."""

    def __init__(self, path: str, mb_unit: int = 10**6):
        self.path = path
        self.mb_unit = mb_unit
        self._f: TextIO | None = None
        self._w = None

    def start(self, header: dict) -> None:
        self.mb_unit = header["config"].get("mb_unit", self.mb_unit)
        self._f = open(self.path, "w", newline="", encoding="utf-8")
        self._w = csv.DictWriter(self._f, fieldnames=FIELDS)
        self._w.writeheader()
        self._f.flush()

    def record(self, rec: records.Measurement) -> None:
        self._w.writerows(rows(rec, self.mb_unit))
        self._f.flush()

    def finish(self, summary: dict) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None


def write(path_or_file, recs: list[records.Measurement], mb_unit: int = 10**6) -> None:
    own = isinstance(path_or_file, str)
    if own:
        outputs.ensure_parent(path_or_file)
    f = open(path_or_file, "w", newline="", encoding="utf-8") if own else path_or_file
    try:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(r for rec in recs for r in rows(rec, mb_unit))
    finally:
        if own:
            f.close()
