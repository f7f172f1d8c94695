"""Debian's system MPIs (issue 33): the reproducers of MPICH 4.0.2's defects, built with its own
mpicc and run with its own mpiexec beside the mpich wheel's (where each passes); the pgas
notifier on Debian's MPICH (it deadlocked there); the message of an mpi4py built against
Open MPI that links the mpich wheel's libmpi from Python's own prefix. Each test skips, saying
why, where Debian's packages are missing (tests/mpi_envs.py installs them for test_mpis)."""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.mpirun import MPIEXEC

REPO = Path(__file__).resolve().parents[1]
MPICH_CC, MPICH_EXEC = "/usr/bin/mpicc.mpich", "/usr/bin/mpiexec.mpich"
OMPI_CC = "/usr/bin/mpicc.openmpi"


@pytest.fixture(scope="module")
def debian():
    """Debian's MPICH (and Open MPI) packages, installed by tests/mpi_envs.py when missing."""
    from tests import mpi_envs

    try:
        return mpi_envs.get("debian-mpich")
    except mpi_envs.Unavailable as e:
        pytest.skip(f"Debian's MPICH cannot be installed here: {e}")


WHEEL_CC = os.path.join(os.path.dirname(MPIEXEC or ""), "mpicc")


def _repro(name: str, mpicc: str, mpiexec: str, tmp_path: Path) -> subprocess.CompletedProcess:
    exe = tmp_path / f"{name}-{Path(mpicc).name}"
    src = REPO / "repro" / f"{name}.c"
    subprocess.run([mpicc, "-O2", "-o", str(exe), str(src)], check=True, timeout=120)
    cmd = [mpiexec, "-n", "2", str(exe), str(tmp_path)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def _mpich_version() -> str:
    """Debian's MPICH release (its mpichversion), "" when that cannot be told."""
    try:
        p = subprocess.run(["/usr/bin/mpichversion"], capture_output=True, text=True, timeout=30)
    except OSError:
        return ""
    m = re.search(r"MPICH Version:\s*(\S+)", p.stdout)
    return m.group(1) if m else ""


@pytest.mark.parametrize("name", ["win_allocate_offset", "romio_large_count_view"])
def test_reproducer_shows_the_defect_on_debian_mpich_and_passes_on_the_wheel(
    name, tmp_path, debian
):
    """MPICH 4.0.2 (Debian 12): RMA reaches a node-local window at its base rounded down to
    16 bytes; ROMIO aborts in MPI_File_set_view on a filetype of MPI-4's _c constructors.
    Both reproducers pass on the mpich wheel (5.0), which is what makes them the library's."""
    if not os.path.exists(WHEEL_CC):
        pytest.skip(f"no mpicc beside the mpich wheel's mpiexec ({MPIEXEC})")
    wheel = _repro(name, WHEEL_CC, MPIEXEC, tmp_path)
    assert wheel.returncode == 0 and f"{name}: PASSED" in wheel.stdout, wheel.stdout + wheel.stderr
    debian = _repro(name, MPICH_CC, MPICH_EXEC, tmp_path)
    out = debian.stdout + debian.stderr
    if _mpich_version() != "4.0.2":
        assert re.search(rf"{name}: (PASSED|LIBRARY DEFECT)", out), out  # another release
        return
    assert debian.returncode == 1, out
    if name == "win_allocate_offset":
        assert f"{name}: LIBRARY DEFECT on MPICH Version:\t4.0.2" in out, out
        assert "size 64: MPI_Get of rank 1's bytes 0-7 returned 100 101 ... 107" in out, out
    else:  # the library aborts the job inside MPI_File_set_view
        # The abort's own text (flatten.c, MPI_Type_get_envelope_c) is not always printed:
        # hydra tears the job down as the rank aborts, and a CI run had only the line before.
        assert "calling MPI_File_set_view" in out and f"{name}: PASSED" not in out, out


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
    from commbench.cli import _wrong_libmpi

    msg = _wrong_libmpi(str(e.value))
    assert msg is not None, str(e.value)
    lib = os.path.realpath(f"{prefix}/lib")
    assert f"libmpi.so.12 => {lib}/libmpi.so.12" in msg, msg
    assert f"remove {lib}/libmpi.so" in msg and "(docs/cluster.md)" in msg, msg
    assert "Build from a Python whose prefix holds no libmpi" in msg, msg
