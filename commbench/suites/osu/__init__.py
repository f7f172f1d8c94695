"""Family "osu": the OSU Micro-Benchmarks 7.4 (MPI), with OSU's options, procedures
and output (commbench/views/osu_text.py), selected with `--suite osu` (alias omb).

The framework, for whoever adds a group of OSU benchmarks (docs/osu.md says the
same at length):

1. A module commbench/suites/osu/<group>.py (pt2pt.py is the example) with a
   tuple BENCHMARKS of spec.OsuBenchmark descriptors: name (OSU's program name
   without "osu_"), description, group, title (OSU's title words: "MPI Latency"
   for "# OSU MPI Latency Test v7.4"; tests/data/osu/headers.txt has all 77),
   metric (the view's column kind), takes (the OSU option letters it accepts),
   defaults (spec.Defaults: OSU's iterations and warm-up, small and above 8192
   bytes, and its size range), nprocs, loop (the mpi4py loop), native (its C
   loop's name), row (per-iteration seconds -> the record's values; spec has
   latency_row and bandwidth_row), verify (-c), and, as needed, prepare/release
   (per size), gather (every rank times), buffers, directions (bandwidth), call
   (collectives: spec.Call, from the one table commbench.suites.collops). What
   the ranks run (loop, prepare, release, row, verify, refill, extra,
   check_rounds) is in <group>_loops.py (pt2pt_loops.py), named in the
   descriptor as base.Lazy; the group module imports neither MPI nor numpy.
2. One line below: the module in GROUPS. Its benchmarks are then in `commbench
   list osu`, runnable with `commbench run --suite osu NAME`, and their options
   checked against `takes`.
3. Native loops: commbench/native/osu_<group>.c with CBOSU_EXPORTS(cbosu_<group>_)
   and one `int cbosu_<group>_<native>(cbosu_args *)` per loop (osu.h); the
   driver packs the arguments (commbench.native.osu).
4. A new metric (columns other than latency and bandwidth): a row in COLUMNS of
   commbench/views/osu_text.py and in driver.KIND.

The driver (driver.py) runs every benchmark the same way: per -T type and
size, prepare, barrier, warm-up, the timed iterations (each timed alone),
validation under -c, release, and one records.Measurement per row.

OSU's benchmarks claim no bare names: `commbench run barrier` stays IMB-MPI1's
Barrier (suites.EXPLICIT); `--suite osu barrier` is OSU's.

The catalog (this module, settings, spec, checks, topology and the group modules)
imports neither MPI nor numpy (nor commbench.buffers or commbench.native), so parsing or
listing an osu run loads neither (tests/mpi/test_startup.py's CATALOGS); the procedure
(driver.py, with engine.py and context.py) and every group's <group>_loops.py (and
collective_calls.py, onesided_check.py, init_job.py) are imported by the ranks that run
them, through base.Lazy.
"""

from __future__ import annotations

from commbench.suites.base import Family, Lazy
from commbench.suites.osu import (
    checks,
    collectives,
    init,
    latency_mt,
    neighbor,
    nonblocking,
    onesided,
    pt2pt,
    pt2pt_variants,
    settings,
)
from commbench.suites.osu.settings import OsuSettings
from commbench.suites.osu.spec import OsuBenchmark
from commbench.suites.procedure import ROW_OPTIONS

__all__ = ["FAMILY", "BY_NAME", "OsuSettings", "OsuBenchmark"]

# The group modules, in the order of `commbench list osu` (one line each).
GROUPS = (
    pt2pt,
    pt2pt_variants,
    latency_mt,
    init,
    onesided,
    collectives,
    nonblocking,
    neighbor,
)

BENCHMARKS: tuple[OsuBenchmark, ...] = tuple(b for g in GROUPS for b in g.BENCHMARKS)
BY_NAME = {b.name: b for b in BENCHMARKS}

FAMILY = Family(
    name="osu",
    title="OSU Micro-Benchmarks 7.4",
    part="OSU MPI",
    benchmarks=BENCHMARKS,
    description=(
        "OSU Micro-Benchmarks 7.4: OSU's programs, options (-m -i -x -W -z -c -T …) and output"
    ),
    aliases=("omb",),
    min_world=2,
    options=settings.OPTIONS,
    configure=settings.configure,
    validate=checks.validate,
    operands=checks.operands,
    procedure=Lazy("commbench.suites.osu.driver", "procedure"),
    view="osu",
    alloc="mmap",  # page-aligned plain memory, as OSU's posix_memalign'ed buffers
    honours=ROW_OPTIONS | {"alloc", "hugepages", "engine"},
    memory=checks.memory,
)
