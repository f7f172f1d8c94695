"""Debian's system MPIs (issue 33): the reproducers of MPICH 4.0.2's defects, built with its own
mpicc and run with its own mpiexec beside the mpich wheel's (where each passes); the pgas
notifier on Debian's MPICH (it deadlocked there); the message of an mpi4py built against
Open MPI that links the mpich wheel's libmpi from Python's own prefix. Each test skips, saying
why, where Debian's packages are missing (tests/support/mpi_envs.py installs them for test_mpis)."""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.support.mpirun import MPIEXEC

pytestmark = pytest.mark.needs("debian-mpich")

REPO = Path(__file__).resolve().parents[2]
MPICH_CC, MPICH_EXEC = "/usr/bin/mpicc.mpich", "/usr/bin/mpiexec.mpich"
OMPI_CC = "/usr/bin/mpicc.openmpi"


@pytest.fixture(scope="module")
def debian():
    """Debian's MPICH (and Open MPI) packages, installed by tests/support/mpi_envs.py when
    missing."""
    from tests.support import mpi_envs

    try:
        return mpi_envs.get("debian-mpich")
    except mpi_envs.Unavailable as e:
        pytest.skip(f"Debian's MPICH cannot be installed here: {e}")


WHEEL_CC = os.path.join(os.path.dirname(MPIEXEC or ""), "mpicc")


def _mpich_version() -> str:
    """Debian's MPICH release (its mpichversion), "" when that cannot be told."""
    try:
        p = subprocess.run(["/usr/bin/mpichversion"], capture_output=True, text=True, timeout=30)
    except OSError:
        return ""
    m = re.search(r"MPICH Version:\s*(\S+)", p.stdout)
    return m.group(1) if m else ""


# What each reproducer prints where the defect shows on MPICH 4.0.2 (docs/mpis.md).
SHOWN = {
    "win_allocate_offset": [
        "win_allocate_offset: LIBRARY DEFECT on MPICH Version:\t4.0.2",
        "size 64: MPI_Get of rank 1's bytes 0-7 returned 100 101 ... 107",
    ],
    # the library aborts the job inside MPI_File_set_view; the abort's own text (flatten.c)
    # is not always printed: hydra tears the job down as the rank aborts
    "romio_large_count_view": ["calling MPI_File_set_view"],
}


@pytest.mark.parametrize("name", list(SHOWN))
def test_reproducer_on_debian_mpich_and_on_the_wheel(name, tmp_path, debian, measured):
    """MPICH 4.0.2 (Debian 12): RMA reaches a node-local window at its base rounded down to
    16 bytes; ROMIO aborts in MPI_File_set_view on a filetype of MPI-4's _c constructors.
    Both reproducers pass on the mpich wheel (5.0), which is what makes them the library's.
    On Debian's MPICH each ends PASSED or shows the defect as docs/mpis.md quotes it, never
    otherwise; which one is printed (a measurement: benchmarks/defect_rates.py counts it)."""
    from tests.support import mpi_envs

    if not os.path.exists(WHEEL_CC):
        pytest.skip(f"no mpicc beside the mpich wheel's mpiexec ({MPIEXEC})")
    wheel = mpi_envs.reproduce(None, f"{name}.c", tmp_path)
    assert wheel.outcome == "passed", str(wheel)
    r = mpi_envs.reproduce(debian, f"{name}.c", tmp_path)
    version = _mpich_version()
    measured(f"{name} on Debian's MPICH {version}, {mpi_envs.load_now()}: {r.outcome}")
    assert r.outcome in ("passed", "defect"), str(r)
    if r.outcome == "defect" and version == "4.0.2":
        for line in SHOWN[name]:
            assert line in r.output, str(r)


def test_pgas_notifier_runs_on_debian_mpich(tmp_path, debian):
    """PutPut and GetGet at sizes whose segments MPICH 4.0.2 addresses right: every check
    passes, in seconds. Before the notifier probed for progress and had a 64-byte flag window,
    the first warm-up deadlocked until --timeout."""
    mpi = debian
    args = ["PutPut_latency", "GetGet_latency", "-check", "-msglog", "4:5", "--pgas-reps", "20"]
    cmd = [str(mpi.python), "-m", "commbench", "run", "-n", "2", *args, "--timeout", "60"]
    cmd += ["--mpiexec", MPICH_EXEC, "--no-progress", "-o", str(tmp_path / "pgas.json")]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=150, env=mpi.env())
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "ALL BENCHMARKS SUCCESSFUL" in p.stdout and "watchdog" not in p.stderr


TRAP = """#include <mpi.h>
int logical8(void) { int n; MPI_Type_size(MPI_LOGICAL8, &n); return n; }
"""


def test_an_extension_linked_to_the_prefix_libmpi_is_explained(tmp_path, debian):
    """What docs/cluster.md's recipe did from a Python whose prefix holds the mpich wheel's
    libmpi: Open MPI's mpicc with Python's own link flags (-L<prefix>/lib -Wl,-rpath, as
    setuptools builds mpi4py) links that libmpi.so.12, which lacks Open MPI's symbols. The
    message names the file, where it came from, and the interpreter to build from instead."""
    prefix = next(
        (p for p in (sys.prefix, sys.base_prefix) if os.path.exists(f"{p}/lib/libmpi.so")), None
    )
    if prefix is None:
        pytest.skip("no libmpi.so in this Python's prefix: the trap cannot be set here")
    src, so = tmp_path / "trap.c", tmp_path / "trap.so"
    src.write_text(TRAP)
    flags = sysconfig.get_config_var("LDSHARED").split()[1:]  # what the build of mpi4py passes
    flags += [f"-L{prefix}/lib", f"-Wl,-rpath,{prefix}/lib"]  # a venv's prefix is not in them
    subprocess.run([OMPI_CC, "-fPIC", *flags, str(src), "-o", str(so)], check=True, timeout=120)
    with pytest.raises(OSError) as e:
        ctypes.CDLL(str(so))
    assert "undefined symbol: ompi_mpi_logical8" in str(e.value)
    from commbench.commands.errors import wrong_libmpi as _wrong_libmpi

    msg = _wrong_libmpi(str(e.value))
    assert msg is not None, str(e.value)
    lib = os.path.realpath(f"{prefix}/lib")
    assert f"libmpi.so.12 => {lib}/libmpi.so.12" in msg, msg
    assert f"remove {lib}/libmpi.so" in msg and "(docs/cluster.md)" in msg, msg
    assert "Build from a Python whose prefix holds no libmpi" in msg, msg
