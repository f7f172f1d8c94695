"""The MPI calls IMB 2021.11 makes, made by commbench under --methodology imb2021 (issue 50),
from a PMPI log (benchmarks/c/calls_trace.c, LD_PRELOAD) of commbench on both engines and of the
IMB binary:

- EXT Accumulate's epochs: each fenced open (MPI_MODE_NOPRECEDE) and closed (MPI_MODE_NOSUCCEED)
  apart; under imb4 one fence(0) ends an epoch and opens the next, as the spec and IMB-EXT's Put
  and Get do;
- Reduce_scatter and its NBC and MPI-4 forms: X/4 floats to each rank, NP·X/4 summed; under imb4
  the X/4 floats split over the ranks (spec §6.7)."""

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
PEERS = REPO.parent / "shared" / "peers" / "imb"
IMB_EXT = PEERS / "IMB-EXT"
OPEN, CLOSE = MPI.MODE_NOPRECEDE, MPI.MODE_NOSUCCEED


@pytest.fixture(scope="module")
def tracer(tmp_path_factory):
    lib = tmp_path_factory.mktemp("trace") / "libtrace.so"
    src = REPO / "benchmarks" / "c" / "calls_trace.c"
    subprocess.run([find_mpicc(), "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return lib


def _epochs(log: list[str]) -> list[tuple]:
    """The (opening fence, accumulates, closing fence) runs of a log; a fence(0) both."""
    out, fences, acc = [], [], 0
    for line in log:
        what, a = line.split()[:2]
        if what == "Accumulate":
            acc += 1
        elif what == "Win_fence":
            if acc:
                out.append((fences[-1] if fences else None, acc, int(a)))
            fences, acc = [*fences, int(a)], 0
    return out


def _log(tracer, tmp_path: Path, cmd: list[str], np_: int = 2) -> list[str]:
    env = {"LD_PRELOAD": str(tracer), "CALLS_TRACE_DIR": str(tmp_path)}
    for f in tmp_path.glob("calls.*"):
        f.unlink()
    p = mpiexec(np_, *cmd, env=env) if cmd[0] == "run" else subprocess.run(
        [MPIEXEC, "-n", str(np_), *cmd], capture_output=True, text=True, timeout=120,
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
    old = _epochs(_log(tracer, tmp_path, ["run", "--suite", "ext", "Accumulate", *opts,
                                          "--engine", engine, "-o", "-"]))  # fmt: skip
    assert old and all(e[2] == 0 for e in old) and OPEN not in {e[0] for e in old}, old
    if not IMB_EXT.exists():
        pytest.skip(f"peer binaries absent: no {IMB_EXT}")
    imb = _epochs(_log(tracer, tmp_path, [str(IMB_EXT), "Accumulate", *opts]))
    assert sorted(set(imb)) == sorted(set(new))  # the same epochs as the binary's


REDUCE_SCATTERS = [
    ("mpi1", "Reduce_scatter", "Reduce_scatter"),
    ("nbc", "Ireduce_scatter", "Ireduce_scatter"),
    ("mpi4", "Reduce_scatter_persist", "Reduce_scatter_init"),
]


def _summed(log: list[str], call: str) -> set[int]:
    """The element counts (the sum of the receive counts) of a log's `call` lines."""
    return {int(line.split()[1]) for line in log if line.split()[0] == call}


@pytest.mark.parametrize("engine", ["native", "mpi4py"])
@pytest.mark.parametrize("family,bench,call", REDUCE_SCATTERS)
def test_imb2021_reduce_scatter_gives_each_rank_x(tracer, tmp_path, family, bench, call, engine):
    (tmp_path / "lens").write_text("1024\n")
    opts = ["-msglen", str(tmp_path / "lens"), *LENS, "-npmin", "3"]
    run = ["run", "--suite", family, bench, *opts, "--engine", engine, "-check", "-o", "-"]
    # 3 ranks: 256 floats to each, 768 summed, every rank's block checked
    assert _summed(_log(tracer, tmp_path, [*run, "--methodology", "imb2021"], 3), call) == {768}
    old = _summed(_log(tracer, tmp_path, run, 3), call)  # imb4: 256 split over 3
    assert 256 in old and 768 not in old, old  # (and its warm-up size's)
    peer = PEERS / f"IMB-{family.upper()}"
    if not peer.exists():
        pytest.skip(f"peer binaries absent: no {peer}")
    assert _summed(_log(tracer, tmp_path, [str(peer), bench, *opts], 3), call) == {768}
