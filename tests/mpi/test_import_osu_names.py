"""Imported OSU rows named as the osu family names them, so compare pairs them with a run.
OSU's own bw/bibw output read with -c -z is tests/unit/test_import_osu_names.py."""

from __future__ import annotations

from tests.support.import_logs import imported
from tests.support.mpirun import commbench, run_json

REF = __import__("pathlib").Path(__file__).parents[1] / "data" / "osu" / "ref"


def test_compare_pairs_an_imported_osu_log_with_a_commbench_osu_run(tmp_path):
    old = tmp_path / "latency.json"
    imported(tmp_path, REF / "latency.txt")
    run_json(tmp_path, 2, "--suite", "osu", "latency", "-m", "1:64", "-i", "50", "-x", "5")
    p = commbench("compare", str(old), str(tmp_path / "r2.json"))
    # the rows match; with no --samples in an imported log the gate cannot test them: refused
    assert p.returncode == 2 and "# REFUSED [nothing-tested]" in p.stdout, p.stderr
    rows = [ln.split() for ln in p.stdout.splitlines() if ln.startswith("latency ")]
    assert [int(r[3]) for r in rows] == [1, 2, 4, 8, 16, 32, 64], p.stdout
    assert all(r[1] == "2" and r[2] == "MPI_CHAR" for r in rows)
