"""OSU's own output as commbench reads it: bw/bibw with -c -z (one space before "P50 Tail
BW"), and imported rows named as the osu family names them, so compare pairs them with a run."""

from __future__ import annotations

import pytest

from tests.mpi.test_import import imported
from tests.support.mpirun import commbench, run_json

REF = __import__("pathlib").Path(__file__).parents[1] / "data" / "osu" / "ref"


def table(path):
    """(size, [tokens]) of each row of an OSU log, read off the log itself."""
    return [
        (int(ln.split()[0]), ln.split()[1:])
        for ln in path.read_text().splitlines()
        if ln.strip() and ln.split()[0].isdigit()
    ]


@pytest.mark.parametrize("name", ["bw", "bibw"])
def test_real_osu_bw_with_validation_and_percentiles(tmp_path, name):
    log = REF / f"{name}-c-z.txt"
    doc = imported(tmp_path, log)
    rows = table(log)
    assert len(doc["records"]) == len(rows) > 0
    for rec, (size, (bw, check, p50, p90, p99)) in zip(doc["records"], rows):
        assert (rec["benchmark"], rec["family"], rec["bytes"]) == (name, "osu", size)
        assert rec["extra"]["check"] == {"Pass": "successful", "Fail": "failed"}[check]
        for key, tok in (("bytes_per_sec", bw), ("bw_p50", p50), ("bw_p90", p90), ("bw_p99", p99)):
            assert rec["values"][key] == pytest.approx(float(tok) * 1e6)
    assert doc["metadata"]["source"]["tool"] == f"osu_{name}"


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
