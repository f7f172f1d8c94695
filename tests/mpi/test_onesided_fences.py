"""EXT Accumulate's epochs as IMB-EXT 2021.11 makes them under --methodology imb2021 (issue 50):
a PMPI log of the one-sided calls (benchmarks/c/onesided_trace.c, LD_PRELOAD) of commbench, on
both engines, and of the IMB-EXT binary: each epoch fenced open (MPI_MODE_NOPRECEDE) and
closed (MPI_MODE_NOSUCCEED) apart; under imb4 one fence(0) ends an epoch and opens the next,
as the spec and IMB-EXT's Put and Get do."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from mpi4py import MPI

from commbench import mpilib
from commbench.native.extension import find_mpicc
from tests.support.mpirun import MPIEXEC, mpiexec

REPO = Path(__file__).resolve().parents[2]
IMB_EXT = REPO.parent / "shared" / "peers" / "imb" / "IMB-EXT"
OPEN, CLOSE = MPI.MODE_NOPRECEDE, MPI.MODE_NOSUCCEED


@pytest.fixture(scope="module")
def tracer(tmp_path_factory):
    lib = tmp_path_factory.mktemp("trace") / "libtrace.so"
    src = REPO / "benchmarks" / "c" / "onesided_trace.c"
    subprocess.run([find_mpicc(), "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return lib


def _epochs(log: list[str]) -> list[tuple]:
    """The (opening fence, accumulates, closing fence) runs of a log; a fence(0) both."""
    out, fences, acc = [], [], 0
    for line in log:
        what, a, _ = line.split()
        if what == "Accumulate":
            acc += 1
        elif what == "Win_fence":
            if acc:
                out.append((fences[-1] if fences else None, acc, int(a)))
            fences, acc = [*fences, int(a)], 0
    return out


def _log(tracer, tmp_path: Path, cmd: list[str]) -> list[str]:
    env = {"LD_PRELOAD": str(tracer), "ONESIDED_TRACE_DIR": str(tmp_path)}
    p = mpiexec(2, *cmd, env=env) if cmd[0] == "run" else subprocess.run(
        [MPIEXEC, "-n", "2", *cmd], capture_output=True, text=True, timeout=120,
        env={**os.environ, **env, "LD_LIBRARY_PATH": os.path.dirname(mpilib.here().path)},
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    (log,) = tmp_path.glob("calls.0.*")
    return log.read_text().splitlines()


LENS = ["-iter", "5", "-iter_policy", "off", "-time", "10"]


@pytest.mark.parametrize("engine", ["native", "mpi4py"])
def test_imb2021_fences_every_accumulate_epoch_apart(tracer, tmp_path, engine):
    (tmp_path / "lens").write_text("8\n")
    opts = ["-msglen", str(tmp_path / "lens"), *LENS]
    new = _epochs(_log(tracer, tmp_path, ["run", "--suite", "ext", "Accumulate", *opts,
                                          "--engine", engine, "--methodology", "imb2021",
                                          "-o", "-"]))  # fmt: skip
    # the aggregate mode's blocks of 5, then the non-aggregate mode's single calls
    assert new and all(e[0] == OPEN and e[2] == CLOSE for e in new), new
    assert {e[1] for e in new} == {1, 5}
    for f in tmp_path.glob("calls.*"):
        f.unlink()
    old = _epochs(_log(tracer, tmp_path, ["run", "--suite", "ext", "Accumulate", *opts,
                                          "--engine", engine, "-o", "-"]))  # fmt: skip
    assert old and all(e[2] == 0 for e in old) and OPEN not in {e[0] for e in old}, old
    if not IMB_EXT.exists():
        pytest.skip(f"peer binaries absent: no {IMB_EXT}")
    for f in tmp_path.glob("calls.*"):
        f.unlink()
    imb = _epochs(_log(tracer, tmp_path, [str(IMB_EXT), "Accumulate", *opts]))
    assert sorted(set(imb)) == sorted(set(new))  # the same epochs as the binary's
