"""Messages of 2^31 bytes and more: MPI-4 large counts, and the checks before allocation, in
MPI. What the parser and the plan make of such sizes, and the pre-flight's refusals,
without MPI: tests/unit/test_large.py."""

from __future__ import annotations

import json

import pytest
from mpi4py import MPI

from commbench import resources, run_config
from tests.support.mpirun import mpiexec
from tests.support.msglen import write as _write

BIG = 2**31 + 8  # one MPI_BYTE count past INT_MAX


def free_gib() -> float:
    return (resources.mem_available() or 0) / 2**30


@pytest.mark.skipif(
    MPI.Get_version() < (4, 0), reason="this MPI has no MPI-4 large-count functions"
)
def test_bcast_beyond_2_31_bytes(tmp_path):
    """A 2 GiB + 8 B Bcast runs through MPI_Bcast_c (mpi4py >= 4 picks it by the count). It
    touches 4.3 GiB and takes ~25 s here (it used to be opt-in and never ran in CI)."""
    if free_gib() < 8:
        pytest.skip(
            f"memory: needs ~4.3 GiB of buffers plus headroom; MemAvailable is {free_gib():.1f} GiB"
        )
    lens = tmp_path / "lens"
    lens.write_text(f"{BIG}\n")
    out = tmp_path / "big.json"
    p = mpiexec(
        1,
        "run",
        "-msglen",
        str(lens),
        "--maxlog",
        "32",
        "-mem",
        "5",
        "-iter",
        "1",
        "-iter_policy",
        "off",
        "Bcast",
        "-o",
        str(out),
        timeout=600,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    rec = [r for r in json.loads(out.read_text())["records"] if r["benchmark"] == "Bcast"]
    assert [r["bytes"] for r in rec] == [BIG] and rec[0]["status"] == "ok"
    assert f"{BIG:13d}" in p.stdout  # the row is printed with its full size


def test_out_of_memory_is_refused_by_a_real_job(tmp_path):
    """A job asked for more than the host has ends at once with status 2, before any allocation."""
    huge = _write(tmp_path, f"{64 * 2**30}\n")  # 64 GiB: more than this host has
    p = mpiexec(
        2, "run", "-msglen", huge, "--maxlog", "37", "-mem", "1000", "Bcast", "-o", "-", timeout=120
    )
    assert p.returncode == 2, p.stderr
    assert "MemAvailable" in p.stderr and "Traceback" not in p.stderr
    assert "# Benchmarking" not in p.stdout


def test_int_overflow_rows_where_counts_are_c_ints(tmp_path):
    """IMB's int-overflow row (spec §6.4): with C int counts (--int-counts, or an MPI
    without large counts) a v-collective whose last displacement (NP-1)*X passes
    2^31-1 is skipped with IMB's words, before anything is allocated."""
    lens = _write(tmp_path, "1000\n800000000\n")  # 3 x 8e8 > 2^31-1 at 4 processes
    out = tmp_path / "io.json"
    p = mpiexec(
        4,
        "run",
        "-npmin",
        "4",
        "-msglen",
        lens,
        "-msglog",
        "30",
        "-iter",
        "5",
        "--int-counts",
        "Gatherv",
        "Allgatherv",
        "Scatterv",
        "Alltoallv",
        "-o",
        str(out),
        timeout=180,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    rows = {(r["benchmark"], r["bytes"]): r for r in json.loads(out.read_text())["records"]}
    for b in ("Gatherv", "Allgatherv", "Scatterv", "Alltoallv"):
        assert rows[(b, 1000)]["status"] == "ok"
        big = rows[(b, 800000000)]
        assert (
            big["status"] == "int-overflow"
            and big["message"] == "The production rank*size caused int overflow"
        )
    assert "    800000000 int-overflow.; The production rank*size caused int overflow" in p.stdout
    assert json.loads(out.read_text())["config"]["int_counts"] is True
    # MPI-4 large counts without --int-counts: the same row is possible (here over -mem, so
    # out-of-mem)
    if MPI.Get_version() >= (4, 0):
        p = mpiexec(
            4,
            "run",
            "-npmin",
            "4",
            "-msglen",
            lens,
            "-msglog",
            "30",
            "-iter",
            "5",
            "Igatherv",
            "-o",
            str(out),
            timeout=180,
        )
        assert p.returncode == 0, p.stderr[-3000:]
        big = [r for r in json.loads(out.read_text())["records"] if r["bytes"] == 800000000]
        assert big and all(r["status"] == "out-of-mem" for r in big)


def test_the_c_loops_never_get_a_count_past_int_max():
    """The native loops pass C int counts (ctypes would wrap 2^31+8 to a negative
    count): a size past 2^31-1 is measured by mpi4py, with MPI-4 large counts."""
    from commbench.harness.core import Harness
    from commbench.session import Session

    cfg = run_config.parse_run_args(["Bcast", "Gatherv", "-o", "-"], world_size=1)
    h = Harness(Session(cfg, MPI.COMM_SELF))
    bcast, gatherv = (h.family.get(n) for n in ("Bcast", "Gatherv"))
    if "native" not in h.engines_for(bcast):
        pytest.skip("no native engine here")
    assert h.engines_for(bcast, 2**20, 1) == ["native"] and h.engines_for(bcast, BIG, 1) == [
        "mpi4py"
    ]
    assert h.engines_for(gatherv, 2**30, 2) == ["native"] and h.engines_for(gatherv, 2**30, 3) == [
        "mpi4py"
    ]
