"""Start-up (issue 16 item 7): the self-launcher parses every family's options
without loading numpy or the MPI library, which only the ranks need
(commbench.deferred). A kernel module that uses MPI or numpy at its top level
would cost every `commbench run -n` about 0.2 s; this test names it.
Timings: benchmarks/startup.py."""

from __future__ import annotations

import subprocess
import sys

PROBE = r"""
import mpi4py
mpi4py.rc.initialize = False
from commbench import deferred
deferred.defer("numpy", "mpi4py.MPI")
from commbench import outputs, run_config, self_launcher, suites
for name in suites.family_names():
    fam = suites.family(name)
    for b in fam.benchmarks:
        b.name
    try:
        run_config.parse_run_args(["-n", "2" if name == "osu" else "8", "--suite", name, "-o", "-"])  # OSU pt2pt: 2
    except run_config.ConfigError as e:
        print("refused", name, e)
print("numpy", deferred.loaded("numpy"), "MPI", deferred.loaded("mpi4py.MPI"))
"""  # noqa: E501


def test_the_launcher_parses_every_family_without_numpy_or_mpi():
    p = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "refused" not in p.stdout, p.stdout
    assert p.stdout.strip().endswith("numpy False MPI False"), p.stdout


def test_a_deferred_module_loads_on_first_use():
    code = (
        "from commbench import deferred; deferred.defer('json'); import json; "
        "assert not deferred.loaded('json'); print(json.dumps([1])); assert deferred.loaded('json')"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "[1]", p.stderr


# The families whose catalog (the descriptors) is apart from their kernels (issue 47 item 4):
# importing one loads neither numpy nor mpi4py (nor commbench.buffers or commbench.native, which
# import them), with no deferred stand-in; its Lazy kernels, verifiers and hooks (osu's loops,
# per-size set-ups, rows, verifiers and extras, which its ranks run) resolve to functions of its
# kernels module. The hooks the launcher calls (osu's nprocs, sizes, validate, limit …) are
# plain functions of the catalog. With osu every family is one; commbench.deferred goes in a
# later change.
CATALOGS = [
    "commbench.suites.comms",
    "commbench.suites.ext",
    "commbench.suites.rma",
    "commbench.suites.net",
    "commbench.suites.gpcnet",
    "commbench.suites.overhead",
    "commbench.suites.msgrate",
    "commbench.suites.mpi1",
    "commbench.suites.nbc",
    "commbench.suites.mpi4",
    "commbench.suites.p2p",
    "commbench.suites.mt",
    "commbench.suites.io",
    "commbench.suites.pgas",
    "commbench.suites.osu",
]
CATALOG_PROBE = r"""
import importlib, sys
from commbench.suites.base import Lazy
fam = importlib.import_module(sys.argv[1]).FAMILY
heavy = ("numpy", "mpi4py", "mpi4py.MPI", "commbench.buffers", "commbench.native")
print("loaded", sorted(m for m in heavy if m in sys.modules))
fields = ("kernel", "expected", "setup", "teardown", "np_setup", "np_teardown",
          "loop", "prepare", "release", "row", "verify", "refill", "extra", "check_rounds")
hooks = [getattr(b, f, None) for b in fam.benchmarks for f in fields] + [fam.procedure]
lazy = [h for h in hooks if isinstance(h, Lazy)]
print("eager", [h for h in hooks if h is not None and not isinstance(h, Lazy)])
print("resolved", all(callable(h.target()) and h.target().__module__ == h.module for h in lazy))
"""


def test_a_catalog_imports_neither_numpy_nor_mpi():
    for module in CATALOGS:
        p = subprocess.run(
            [sys.executable, "-c", CATALOG_PROBE, module], capture_output=True, text=True
        )
        assert p.returncode == 0, p.stderr[-2000:]
        assert p.stdout.split("\n")[:3] == ["loaded []", "eager []", "resolved True"], (
            module,
            p.stdout,
        )
