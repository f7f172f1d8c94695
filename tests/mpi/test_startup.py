"""Start-up (issue 16 item 7, issue 47 item 4): the self-launcher parses every family's
options, and `list`, `report` and `compare` read descriptors and results, without loading the
MPI library or commbench's buffers and C engine, which only the ranks need: every family's
package is a catalog that names its kernels as base.Lazy. A kernel module that uses MPI or
numpy at its top level would cost every `commbench run -n` about 0.2 s; these tests name it.
Timings: benchmarks/startup.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from commbench import suites
from tests.support.mpirun import ENV, MPIEXEC

HEAVY = ("numpy", "mpi4py.MPI", "commbench.buffers", "commbench.native")
PROBE = r"""
import sys
import mpi4py
mpi4py.rc.initialize = False
from commbench import outputs, run_config, self_launcher, suites
for name in suites.family_names():
    fam = suites.family(name)
    for b in fam.benchmarks:
        b.name
    try:
        run_config.parse_run_args(["-n", "2" if name == "osu" else "8", "--suite", name, "-o", "-"])  # OSU pt2pt: 2
    except run_config.ConfigError as e:
        print("refused", name, e)
print("loaded", sorted(m for m in HEAVY if m in sys.modules))
""".replace("HEAVY", repr(HEAVY))  # noqa: E501

# A command run in this process, then what it loaded of HEAVY (said at exit: `run` ends
# with os._exit after atexit's functions, commands._quick_exit)
COMMAND = r"""
import atexit, runpy, sys
atexit.register(
    lambda: sys.stderr.write("\nloaded " + str(sorted(m for m in HEAVY if m in sys.modules)) + "\n")
)
sys.argv = ["commbench"] + sys.argv[1:]
runpy.run_module("commbench", run_name="__main__")
""".replace("HEAVY", repr(HEAVY))
RESULTS = Path(__file__).resolve().parents[1] / "data" / "results" / "pingpong-np2.json"


def test_the_launcher_parses_every_family_without_numpy_or_mpi():
    p = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "refused" not in p.stdout, p.stdout
    assert p.stdout.strip().endswith("loaded []"), p.stdout


def test_the_launcher_loads_only_the_catalog_it_runs(tmp_path):
    """A plain run's launcher parses nothing and loads no catalog (the job's rank 0 parses:
    self_launcher.thin). One that parses first (here for --tag, which it then refuses without
    --store) parses and checks
    `commbench run -n 2 PingPong` (the default family) and `--suite osu latency` with their
    family's catalog alone (run_options.split_run_argv); an option of another family still
    loads the catalogs, to refuse it by its owner's name."""
    noop = tmp_path / "noop"  # an "mpiexec" that starts nothing: the launcher alone
    noop.write_text("#!/bin/sh\nexit 3\n")
    noop.chmod(0o755)
    probe = COMMAND.replace(repr(HEAVY), "suites.FAMILY_MODULES.values()").replace(
        "import atexit, runpy, sys", "import atexit, runpy, sys\nfrom commbench import suites"
    )
    for argv, want in (
        (["PingPong", "-msglog", "0:1"], ["commbench.suites.mpi1"]),
        (["--suite", "osu", "latency", "-m", "0:8"], ["commbench.suites.osu"]),
        (["-w", "create", "PingPong"], sorted(set(suites.FAMILY_MODULES.values()))),
    ):
        cmd = ["run", "-n", "2", "--mpiexec", str(noop), *argv]
        for after, loads in ((["-o", "-"], []), (["-o", "-", "--tag", "x"], want)):
            p = subprocess.run(
                [sys.executable, "-c", probe, *cmd, *after],
                capture_output=True,
                text=True,
                timeout=60,
                cwd=tmp_path,
            )
            last = p.stderr.strip().splitlines()[-1]
            assert last == f"loaded {loads}", (argv, after, p.stderr[-1500:])


def test_list_report_and_compare_load_no_mpi_library(tmp_path):
    """They read descriptors and results files: no MPI library, no buffers or C engine (the
    statistics of compare use numpy)."""
    page = str(tmp_path / "r.html")
    runs = {
        ("list",): [],
        ("list", "--options"): [],
        ("report", str(RESULTS), "-o", page): [],
        ("compare", str(RESULTS), str(RESULTS)): ["numpy"],
    }
    for argv, allowed in runs.items():
        p = subprocess.run(
            [sys.executable, "-c", COMMAND, *argv], capture_output=True, text=True, timeout=60
        )
        loaded = p.stderr.strip().splitlines()[-1]
        assert loaded == f"loaded {allowed}", (argv, p.stderr[-2000:])


# The families whose catalog (the descriptors) is apart from their kernels (issue 47 item 4):
# importing one loads neither numpy nor mpi4py (nor commbench.buffers or commbench.native, which
# import them); its Lazy kernels, verifiers and hooks (osu's loops,
# per-size set-ups, rows, verifiers and extras, which its ranks run) resolve to functions of its
# kernels module. The hooks the launcher calls (osu's nprocs, sizes, validate, limit …) are
# plain functions of the catalog. Every family is one.
CATALOGS = sorted(set(suites.FAMILY_MODULES.values()))
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


# Every process of the run registers an atexit function that says it ran, and keeps an
# object whose finalizer would say the interpreter's teardown ran
ENDING = r"""
import atexit, os, sys, time
role = os.environ.get("PMI_RANK", "launcher")
where = sys.argv[1]
atexit.register(lambda: open(os.path.join(where, "atexit." + role), "w").close())
if role not in ("1", "launcher"):  # rank 1 finalizes and leaves first
    atexit.register(time.sleep, 0.1)
class Teardown:
    def __del__(self, open=open, join=os.path.join):  # the builtins are gone by then
        open(join(where, "teardown." + role), "w").close()
keep = Teardown()
sys.argv = ["commbench"] + sys.argv[2:]
from commbench.commands import main
raise SystemExit(main())
"""


def _ended(tmp_path, cmd: list[str]) -> subprocess.CompletedProcess:
    for f in [*tmp_path.glob("atexit.*"), *tmp_path.glob("teardown.*"), *tmp_path.glob("r.*")]:
        f.unlink()
    p = subprocess.run(
        cmd, capture_output=True, text=True, timeout=120, env=dict(os.environ, **ENV)
    )
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["complete"] is True
    assert [r["bytes"] for r in doc["records"]] == [0, 1, 2, 4, 8]
    assert len((tmp_path / "r.csv").read_text().splitlines()) == 1 + 5
    return p


def test_a_run_ends_without_the_interpreters_teardown_and_loses_nothing(tmp_path):
    """`commbench run` ends without the interpreter's teardown (commands._quick_exit: ~20 ms a
    rank and ~12 ms at the launcher, issue 50) after what the teardown did that matters: atexit's
    functions on every process, MPI_Finalize and the MPI library's exit handlers, the streams
    flushed; the results file, the CSV and the table whole, every rank's status 0."""
    script = tmp_path / "ending.py"
    script.write_text(ENDING)
    run = ["run", "PingPong", "-msglog", "0:3", "-o", str(tmp_path / "r.json")]
    run += ["--csv", str(tmp_path / "r.csv")]
    # the ranks, started by mpiexec; their table goes to a pipe, flushed before the exit. Rank
    # 1 leaves first (a rank that left by os._exit, skipping MPICH's exit handlers, made Hydra
    # kill the others with SIGKILL in 2 runs of 3: twice here)
    for _ in range(2):
        p = _ended(tmp_path, [MPIEXEC, "-n", "3", sys.executable, str(script), str(tmp_path), *run])
        assert sorted(f.name for f in tmp_path.glob("atexit.*")) == [
            f"atexit.{r}" for r in range(3)
        ]
        assert not list(tmp_path.glob("teardown.*"))
    table = p.stdout.split("# Benchmarking PingPong")[1].split("# commbench:")[0]
    assert [
        ln.split()[0] for ln in table.splitlines() if ln.split() and ln.split()[0].isdigit()
    ] == [*"01248"], p.stdout
    assert p.stdout.rstrip().endswith("# All processes entering MPI_Finalize"), p.stdout
    # the launcher (its ranks are `python -m commbench`)
    _ended(tmp_path, [sys.executable, str(script), str(tmp_path), "run", "-n", "2", *run[1:]])
    assert [f.name for f in tmp_path.glob("atexit.*")] == ["atexit.launcher"]
    assert not list(tmp_path.glob("teardown.*"))
