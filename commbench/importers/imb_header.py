"""The header of an IMB log, as IMB prints it before and between its tables: the banner
(version and part), the key: value lines (Date, Machine, System, Release, Version, MPI
Version, MPI Thread Environment), the message lengths and datatypes, the calling sequence
(continued over lines) and the list of benchmarks; and, once the log is read, what it said
as the results file's metadata, config and family (`describe`).
"""

from __future__ import annotations

import re
import time

from commbench.importers.common import Log, options_of

FAMILIES = {
    "IMB-MPI1": "mpi1",
    "IMB-EXT": "ext",
    "IMB-RMA": "rma",
    "IMB-NBC": "nbc",
    "IMB-IO": "io",
    "IMB-MPI4": "mpi4",
    "IMB-MT": "mt",
    "IMB-P2P": "p2p",
}
# The banner's part -> the executable, where the calling sequence does not name it.
PARTS = (
    ("MPI-1", "IMB-MPI1"),
    ("MPI-2", "IMB-EXT"),
    ("RMA", "IMB-RMA"),
    ("NBC", "IMB-NBC"),
    ("MPI-IO", "IMB-IO"),
    ("MPI-4", "IMB-MPI4"),
    ("MT part", "IMB-MT"),
    ("P2P", "IMB-P2P"),
)

BANNER = re.compile(
    r"^#\s+Intel\s*\(R\)\s+MPI\s+Benchmarks\s+(?P<version>.+?),\s*(?P<part>.+?)\s*$"
)
KEY_VALUE = re.compile(
    r"^#\s*(?P<k>Date|Machine|System|Release|Version|MPI Version|MPI Thread Environment)"
    r"\s*:\s*(?P<v>.*?)\s*$"
)
LENGTH = re.compile(
    r"^#\s+(?P<which>Minimum|Maximum)\s+(?:message length|io portion)\s+in bytes:\s+(?P<n>\d+)"
)
DATATYPE = re.compile(r"^#\s+(?P<k>MPI_Datatype(?: for reductions)?|MPI_Op)\s*:\s*(?P<v>\S+)")
LISTED = re.compile(r"^# (?:\(Multi-\))?(?P<name>[A-Za-z]\w*)\s*$")


def mb_unit(version: str) -> int:
    """IMB's Mbytes: 2^20 bytes up to IMB 2017, 10^6 from IMB 2018 on."""
    m = re.match(r"\s*(\d+)", version)
    return 2**20 if m and int(m.group(1)) < 2018 else 10**6


class Header:
    """What the header lines said so far: the source's fields, the tool (the executable,
    IMB-MPI1 …), its Mbytes unit, the benchmarks listed; section: the multi-line part
    (calling sequence, list) being read."""

    def __init__(self, src: dict):
        self.src = src
        self.src.update(format="imb", suite="Intel(R) MPI Benchmarks", tool="IMB", header={})
        self.tool, self.unit = "IMB", 10**6
        self.section: str | None = None
        self.listed: list[str] = []
        self.banner = False

    def line(self, line: str) -> bool:
        """A header line read (False: not one)."""
        m = BANNER.match(line)
        if m:
            self.banner = True
            version, part = m.group("version"), m.group("part")
            tool = next((t for key, t in PARTS if key in part), "IMB")
            self.src.update(version=version, part=part)
            self.tool = tool if self.tool == "IMB" else self.tool
            self.src["tool"], self.unit = self.tool, mb_unit(version)
            return True
        if (m := KEY_VALUE.match(line)) is not None:
            self.src["header"][m.group("k")] = m.group("v")
        elif (m := LENGTH.match(line)) is not None:
            self.src.setdefault("message_lengths", {})[m.group("which").lower()] = int(m.group("n"))
        elif "lengths were user defined" in line:
            self.src["message_lengths"] = "user defined"
        elif (m := DATATYPE.match(line)) is not None:
            self.src.setdefault("datatypes", {})[m.group("k")] = m.group("v")
        elif line.startswith("# Calling sequence was"):
            self.section = "calling"
        elif line.startswith("# List of Benchmarks to run"):
            self.section = "list"
        else:
            return False
        return True

    def section_line(self, line: str) -> bool:
        """The calling sequence (continued over lines) and the list of benchmarks."""
        body = line[1:] if line.startswith("#") else None
        if self.section == "calling":
            seq = self.src.get("calling_sequence")
            if body is not None and body.strip() and (seq is None or body.startswith("  ")):
                self.src["calling_sequence"] = (seq or []) + body.split()
                if seq is None:
                    exe = body.split()[0].rsplit("/", 1)[-1]
                    self.tool = exe if exe in FAMILIES else self.tool
                    self.src["tool"] = self.tool
                return True
            if seq is None and (not line.strip() or body is not None and not body.strip()):
                return True
        elif self.section == "list" and not line.startswith("# Benchmarking"):
            if (m := LISTED.match(line)) is not None:
                if m.group("name") not in self.listed:
                    self.listed.append(m.group("name"))
                return True
            if (
                not self.listed
                and (not line.strip() or line.strip() == "#")
                or line.startswith("#  ")
            ):
                return True
        self.section = None
        return False


def describe(r: Header, log: Log) -> None:
    """What the header said, as the results file's metadata, config and family."""
    src, head = r.src, r.src["header"]
    seq = src.get("calling_sequence") or []
    src["options"] = options_of(seq[1:])
    src["benchmarks_listed"] = r.listed
    src["mb_unit"] = r.unit
    multi = src["options"].get("-multi")
    multi = int(multi) if isinstance(multi, str) and multi.isdigit() else None
    config = {"benchmarks": r.listed or list(log.benchmarks), "mb_unit": r.unit, "multi": multi}
    log.imported(FAMILIES.get(r.tool, "mpi1"), r.tool, src.get("part", ""), argv=seq[1:], **config)
    meta = {
        "date_asctime": head.get("Date"),
        "mpi_version": head.get("MPI Version"),
        "thread_level": head.get("MPI Thread Environment"),
        "calling_sequence": seq,
    }
    if "Machine" in head:
        meta["uname"] = {
            k.lower(): head.get(k, "") for k in ("Machine", "System", "Release", "Version")
        }
    try:
        meta["date"] = time.strftime(
            "%Y-%m-%dT%H:%M:%S", time.strptime(head.get("Date", ""), "%a %b %d %H:%M:%S %Y")
        )
    except ValueError:
        pass
    log.meta = {k: v for k, v in meta.items() if v not in (None, "", [])}
