"""`commbench compare A B --across mpi` as text and as JSON (no MPI): the two libraries named,
what differs with them and what agrees, one line per row with the faster MPI, by how much and
whether the difference is supported, and a summary (docs/statistics.md, "Comparing two
MPIs").
The rows and their tests are commbench.views.compare's; the checks, compare_mpis's.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from commbench import mpilib, records
from commbench.models import twosample
from commbench.views import compare_detect, compare_runs, compare_text, compare_trust
from commbench.views.compare import ComparedRow, geometric_mean

# ---------------------------------------------------------------- the two runs


@dataclass
class Side:
    """One run of the comparison: A (the first file) or B."""

    letter: str
    path: str
    doc: dict
    recs: list[records.Measurement]
    name: str = ""  # "MPICH 5.0.2": how the columns name it
    library: str | None = None  # the library's version string, None when not recorded

    @property
    def first_line(self) -> str:
        return " ".join((self.library or "not recorded").splitlines()[0].split())

    def meta(self, key: str):
        return (self.doc.get("metadata") or {}).get(key)


def library_of(doc: dict) -> str | None:
    v = (doc.get("metadata") or {}).get("mpi_library_version")
    return (mpilib.clean(v) or None) if isinstance(v, str) else None


def short_name(doc: dict, library: str | None) -> str:
    """The name the run recorded for its library (metadata.mpi_library: MPICH 5.0.2, Open MPI
    5.0.11 …), else the one its version string gives (a file of an earlier commbench)."""
    recorded = ((doc.get("metadata") or {}).get("mpi_library") or {}).get("name")
    if isinstance(recorded, str) and recorded.strip():
        return " ".join(recorded.split())
    name = mpilib.short_name(library) if library else "not recorded"
    return name if len(name) <= 40 else name[:39] + "\u2026"


def sides(loaded: list[tuple[str, dict, list]]) -> tuple[Side, Side]:
    """The two runs, named by their libraries (A and B where the names coincide)."""
    a, b = (
        Side(letter, path, doc, recs, library=library_of(doc))
        for letter, (path, doc, recs) in zip("AB", loaded)
    )
    for s in (a, b):
        s.name = short_name(s.doc, s.library)
    if a.name == b.name:
        for s in (a, b):
            s.name += f" ({s.letter})"
    return a, b


# ---------------------------------------------------------------- a row's outcome


def faster(r: ComparedRow, a: Side, b: Side) -> Side | None:
    """The MPI whose time is the smaller (the median's for a tested row); None when equal."""
    return b if r.ratio < 1 else a if r.ratio > 1 else None


def speedup(r: ComparedRow) -> float:
    """How many times faster the faster MPI is (>= 1)."""
    if r.ratio <= 0 or math.isinf(r.ratio):
        return math.inf
    return max(r.ratio, 1 / r.ratio)


def supported(r: ComparedRow) -> bool | None:
    """A difference the test calls (beyond the threshold, q <= alpha); None: untested."""
    return r.verdict in ("faster", "slower") if r.tested else None


def counts(rows: list[ComparedRow], a: Side, b: Side) -> dict[str, int]:
    """Rows each MPI is faster in (supported), with no supported difference, untested."""
    out = {a.name: 0, b.name: 0, "none": 0, "untested": 0}
    for r in rows:
        s = supported(r)
        key = "untested" if s is None else faster(r, a, b).name if s else "none"
        out[key] += 1
    return out


def summary(rows: list[ComparedRow], a: Side, b: Side, threshold: float, alpha: float) -> str:
    """The comparison in one sentence (the text's last line, the page's verdict)."""
    c = counts(rows, a, b)
    tested = len(rows) - c["untested"]
    if not tested:
        return (
            f"no row could be tested: no difference between {a.name} and {b.name} is supported "
            f"({len(rows)} rows, each one time against one time; run both with --samples K)"
        )
    first, second = sorted((a, b), key=lambda s: -c[s.name])
    gm = geometric_mean([r.ratio for r in rows])
    return (
        f"{first.name} faster in {c[first.name]} rows, {second.name} in {c[second.name]}, "
        f"no supported difference in {c['none']}"
        + (f", untested {c['untested']}" if c["untested"] else "")
        + f" ({len(rows)} rows, {tested} tested; supported: a difference beyond "
        f"{threshold:.0%} with q <= {alpha:g}); geometric mean {b.name}/{a.name} = {gm:.3f}"
    )


# ---------------------------------------------------------------- the runs


def launch_settings(s: Side) -> str | None:
    """What commbench's launcher set for the run's MPI (metadata.launch_settings)."""
    got = s.meta("launch_settings")
    if not isinstance(got, list):
        return None
    return ", ".join(f"{e.get('name')}={e.get('value')}" for e in got if isinstance(e, dict)) or (
        "none"
    )


# What goes with the library, besides its version string: (what, how a run records it).
FACTS = (
    ("MPI standard version", lambda s: s.meta("mpi_version")),
    ("library file", lambda s: (s.meta("mpi_library") or {}).get("path")),
    ("launcher", lambda s: s.meta("launcher")),
    ("launcher's settings", launch_settings),
    ("mpi4py version", lambda s: s.meta("mpi4py_version")),
)


def _pair(a: Side, b: Side, get) -> tuple | None:
    va, vb = get(a), get(b)
    return None if va == vb else (va, vb)


def with_the_mpi(a: Side, b: Side) -> list[tuple[str, str, str]]:
    """What differs with the library, besides its version string: (what, A's, B's)."""
    env = [compare_runs.mpi_env_settings(s.doc) for s in (a, b)]
    out = []
    for label, get in FACTS:
        got = _pair(a, b, get)
        if got:
            out.append((label, *("not recorded" if v is None else str(v) for v in got)))
    if all(isinstance(e, dict) for e in env) and env[0] != env[1]:
        keys = sorted(k for k in {*env[0], *env[1]} if env[0].get(k) != env[1].get(k))
        out.append(
            (
                "MPI environment variables",
                *(", ".join(k for k in keys if k in e) or "none set" for e in env),
            )
        )
    return out


def context(a: Side, b: Side) -> list[str]:
    """The header: the two libraries, what differs with them, what agrees."""
    lines = [f"# {s.letter}: {s.name} = {s.path}: {s.first_line}" for s in (a, b)]
    goes = with_the_mpi(a, b)
    lines.append(
        "# across mpi: the factor that differs is the MPI library"
        + ("; with it: " if goes else "")
        + "; ".join(f"{what} {_cut(x)} / {_cut(y)}" for what, x, y in goes)
    )
    same = compare_runs.agreeing(a.doc, b.doc, "mpi")
    lines.append(
        "# the same in both: "
        + ", ".join([*same, "benchmarks, process counts and sizes"])
        + " (a value a file does not record is not compared)"
    )
    return lines


def _cut(s: str, most: int = 100) -> str:
    return s if len(s) <= most else s[: most - 3] + "..."


# ---------------------------------------------------------------- text


def warnings(rows: list[ComparedRow], a: Side, b: Side, alpha: float) -> list[str]:
    plain = [r for r in rows if not r.tested]
    out = []
    if plain and len(plain) < len(rows):
        reasons = Counter(
            r.why_untested.replace("old row", a.name).replace("new row", b.name) for r in plain
        )
        out.append(
            f"{len(plain)} of {len(rows)} rows untested ("
            + "; ".join(f"{w}: {n}" for w, n in reasons.items())
            + "): their faster MPI is one time against one time, not a supported difference; "
            "run both with --samples K (K >= 10) to test them"
        )
    return out


def _faster_cell(r: ComparedRow, a: Side, b: Side) -> str:
    who = faster(r, a, b)
    return "-" if who is None else f"{who.name} {speedup(r):.2f}x"


def _support_cell(r: ComparedRow) -> str:
    s = supported(r)
    return "untested" if s is None else "yes" if s else "no"


def table(rows: list[ComparedRow], a: Side, b: Side) -> list[str]:
    tested = any(r.tested for r in rows)
    wa, wb = (max(13, len(s.name) + 9) for s in (a, b))
    wf = max(len(s.name) for s in (a, b)) + 10
    lines = [
        f"{'benchmark':<24}{'np':>4} {'mode':<14}{'bytes':>10}"
        f"{a.name + ' [usec]':>{wa}}{b.name + ' [usec]':>{wb}}{'B/A':>9}"
        + (f"  {'95% CI':<15}{'q':>8}" if tested else "")
        + f"  {'faster':<{wf}}supported"
    ]
    for r in rows:
        name, _, _, _, groups = r.key
        lines.append(
            compare_text.row_head(r, name if groups <= 1 else f"Multi-{name}", (wa, wb))
            + (compare_text.ci_q(r) if tested else "")
            + f"  {_faster_cell(r, a, b):<{wf}}{_support_cell(r)}"
        )
    return lines


def render(rows: list[ComparedRow], a: Side, b: Side, args, found: list, status: int) -> str:
    """The comparison as text: header, findings, rows, the status line and the summary."""
    tested = sum(1 for r in rows if r.tested)
    lines = context(a, b)
    if tested:
        lines.append(
            f"# test: a difference beyond {args.threshold:.0%} in the median of the log-samples, "
            "against their spread (autocorrelation counted) and "
            f"{twosample.DEFAULT_RUN_SPREAD:.0%} assumed between runs, Student's t; "
            f"Benjamini-Hochberg q over {tested} tested rows at alpha {args.alpha:g}; B/A: "
            f"{b.name} / {a.name}, the ratio of medians, with its 95% bootstrap interval"
        )
    lines += compare_runs.context_notes(a.doc, b.doc, False, (f"{a.name}:", f"{b.name}:"), "mpi")
    lines += [f.line for f in found]
    lines += [f"# warning: {w}" for w in warnings(rows, a, b, args.alpha)]
    lines += ["", *table(rows, a, b), "", *compare_detect.detect_lines(rows)]
    lines += [status_line(found, status)]
    return "\n".join([*lines, f"# {summary(rows, a, b, args.threshold, args.alpha)}"])


def status_line(found: list, status: int) -> str:
    if status:
        codes = ", ".join(dict.fromkeys(f.code for f in compare_trust.refused(found)))
        return f"# across mpi: REFUSED (exit 2): {codes}"
    return "# across mpi: compared (exit 0 whichever MPI is faster: not a regression gate)"


# ---------------------------------------------------------------- JSON


def _side_json(s: Side) -> dict:
    return {
        "file": s.path,
        "name": s.name,
        "library": s.library,
        "mpi_version": s.meta("mpi_version"),
        "launcher": s.meta("launcher"),
    }


def to_json(
    rows: list[ComparedRow], a: Side, b: Side, args, found: list, status: int, errors: list[str]
) -> dict:
    """compare --json's verdict, across MPIs: verdict compared, refused or error; no gate."""
    refused = any(f.effect == compare_trust.REFUSED for f in found)
    out = compare_text.to_json(
        rows,
        old=a.path,
        new=b.path,
        threshold=args.threshold,
        alpha=args.alpha,
        gate_unsampled=False,
        status=status,
        warns=warnings(rows, a, b, args.alpha),
        errors=errors or [f.message for f in compare_trust.refused(found)],
        findings=[f.to_json() for f in found],
    )
    for key in ("gate_unsampled", "regressions"):
        out.pop(key)
    out["verdict"] = "compared" if status == 0 else "refused" if refused else "error"
    out["across"] = "mpi"
    out["mpis"] = {"a": _side_json(a), "b": _side_json(b)}
    c = counts(rows, a, b)
    for key in ("slower", "faster", "same"):
        out["summary"].pop(key)
    out["summary"].update(
        faster_in={a.name: c[a.name], b.name: c[b.name]},
        no_supported_difference=c["none"],
        text=summary(rows, a, b, args.threshold, args.alpha) if rows else None,
    )
    for r, j in zip(rows, out["rows"]):
        who = faster(r, a, b)
        j.pop("regression")
        j.update(
            faster=who.name if who else None,
            speedup=speedup(r) if who and math.isfinite(speedup(r)) else None,
            supported=supported(r),
        )
    return out
