"""An option a run takes shows in its records: the acceptance side of the option matrix, in
real MPI processes (2 processes, tiny sizes): one run per family over one benchmark of every
class, with every observable option the selection uses; each benchmark's records show the
option where the rules (commbench.suites.option_use) say it uses it, and only there.

The refusal side (an option a run would not use is refused while parsing) and the rules
against the code that consumes the options, without MPI: tests/unit/test_option_matrix.py;
the options both cover: tests/support/option_matrix.py.
"""

from __future__ import annotations

import json

import pytest

from commbench import records, run_options, suites
from commbench.suites import option_use
from tests.support.mpirun import mpiexec
from tests.support.option_matrix import OPTIONS

# --------------------------------------------------------------- the records show what was accepted

OBSERVED = {  # option -> argv, and whether a record of a benchmark shows it used
    "per_iteration": (
        ["--per-iteration"],
        lambda r, doc: "p50" in (r["extra"].get("per_iteration") or {}),
    ),
    "sync_start": (["--sync-start", "window"], lambda r, doc: "sync" in r["extra"]),
    "check": (["-check"], lambda r, doc: r["extra"].get("check") in ("successful", "failed")),
    "fit": (
        ["--fit"],
        lambda r, doc: any(f.get("benchmark") == r["benchmark"] for f in doc.get("fits") or []),
    ),
}
RUNTIME = ("mpi1", "ext", "rma", "nbc", "mpi4", "comms", "pgas", "io", "mt")


# What of a descriptor the rules read (commbench.suites.option_use): benchmarks alike in these are
# one class; one of each class is run.
SHAPE = (
    "kind",
    "modes",
    "procs",
    "fixed_sizes",
    "expected",
    "fit",
    "native",
    "root_based",
    "typed",
    "warmup",
    "off_cache",
    "columns",
    "window",
    "checked",
)


def _classes(fam) -> list[str]:
    """One benchmark of every class (SHAPE, and what the rules say of it) in fam."""
    out: dict = {}
    for b in fam.benchmarks:
        key = tuple(
            bool(v) if f in ("expected", "native") else v
            for f in SHAPE
            for v in [getattr(b, f, None)]
        )
        key += tuple(
            option_use.RULES[d].rule(fam, b, {"sync_start": "window"}) for d in OBSERVED
        )  # name-based ones too
        out.setdefault(key, b.name)
    return list(out.values())


@pytest.mark.parametrize("family", RUNTIME)
def test_accepted_options_show_in_the_records(family, tmp_path):
    fam, fams = suites.family(family), suites.families
    names = _classes(fam)
    argv = []
    for dest, (opt_argv, _) in OBSERVED.items():
        opt = next(o for o in OPTIONS if o.dest == dest)
        values = run_options.split_run_argv(opt_argv)[0]
        if (
            option_use.why_unused(
                opt, fam, names, values, run_options.OPTIONS, run_options.RUN_LEVEL, fams
            )
            is None
        ):
            argv += opt_argv
    small = (
        ["--mt-threads", "2", "-repeat", "2", "-warmup", "0", "-count", "1"]
        if family == "mt"
        else ["-msglog", "0:3", "-iter", "3", "-iter_policy", "off", "-time", "30"]
    )
    out = tmp_path / "r.json"
    p = mpiexec(2, "run", "--suite", family, *small, *argv, *names, "-o", str(out), timeout=300)
    # 0 only: a failed -check (1) is a wrong answer, and the MPI the tests run on has no
    # known defect that would excuse one (the other MPIs' defects: tests/system/test_mpis.py)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    doc = json.loads(out.read_text())
    wrong = []
    for dest, (opt_argv, shows) in OBSERVED.items():
        if opt_argv[0] not in argv:
            continue
        for name in names:
            rows = [
                r for r in doc["records"] if r["benchmark"] == name and r["status"] == records.OK
            ]
            rule = (
                option_use.RULES[dest].rule(
                    fam, fam.get(name), run_options.split_run_argv(opt_argv)[0]
                )
                is None
            )
            if rows and rule != any(shows(r, doc) for r in rows):
                wrong.append(
                    f"{family} {name} {opt_argv[0]}: declared {'used' if rule else 'unused'}, "
                    f"records {'show' if not rule else 'do not show'} it"
                )
    assert argv and not wrong, "\n".join(wrong) or f"no observable option for {family}"
