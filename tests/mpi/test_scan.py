"""MPI_Scan and MPI_Exscan, commbench's own collectives (issue 47 item 3): declared once
(commbench.suites.collops' rows, collectives.h's, kernels.c's two loops each) and run by
every collective family, with its check: IMB-MPI1 (Scan, Exscan), IMB-NBC (Iscan,
Iexscan and their _pure forms), IMB-MPI4 (Scan_persist, Exscan_persist, _pure) and OSU
(scan, exscan, iscan, iexscan, scan_persistent, exscan_persistent). Every verifier on
every rank: tests/mpi/test_check_honesty.py (IMB) and test_osu.py's whole list (OSU). That
they are offered by name only: tests/unit/test_scan.py."""

from __future__ import annotations

import json

import pytest

from tests.support.mpirun import mpiexec, run_json
from tests.support.scan_names import IMB, OSU


@pytest.mark.parametrize("family", list(IMB))
def test_both_engines_time_and_check_them(family, tmp_path):
    """The C loop (kernels.c's row) and the mpi4py one, side by side at 3 ranks, checked."""
    args = ["--suite", family, *IMB[family], "-check", "-msglog", "2:6", "-iter", "30"]
    p, res = run_json(tmp_path, 3, *args, "--engine", "both")
    recs = [r for r in res["records"] if r["status"] == "ok" and r["np"] == 3]
    seen = {(r["benchmark"], r["extra"].get("engine")) for r in recs}
    assert seen == {(n, e) for n in IMB[family] for e in ("native", "mpi4py")}, seen
    assert {r["extra"]["check"] for r in recs} == {"successful"}
    assert "ALL BENCHMARKS SUCCESSFUL" in p.stdout


@pytest.mark.parametrize(("corrupt", "silent"), [(0, set()), (3, {"exscan", "iexscan"})])
def test_osu_validation_sees_each_rank_the_operation_reads(tmp_path, corrupt, silent):
    """-c with COMMBENCH_FAULT_CORRUPT: rank 0's data reaches every other rank in both;
    the last rank's only its own Scan result, and no rank's Exscan result."""
    out = tmp_path / "r.json"
    args = ["--suite", "osu", *OSU, "-c", "-m", "4:64", "-i", "10", "-x", "2", "-o", str(out)]
    p = mpiexec(4, "run", *args, env={"COMMBENCH_FAULT_CORRUPT": str(corrupt)})
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    recs = json.loads(out.read_text())["records"]
    verdicts = {(r["benchmark"], r["extra"]["check"]) for r in recs}
    base = {n.removesuffix("_persistent") for n in OSU}
    assert verdicts == {
        (n, "successful" if n.removesuffix("_persistent") in silent else "failed") for n in OSU
    }, (verdicts, base)
