"""OSU's own output as commbench reads it: bw/bibw with -c -z (one space before "P50 Tail
BW"). Compare pairing an imported log with a run is tests/mpi/test_import_osu_names.py."""

from __future__ import annotations

import pytest

from tests.support.import_logs import imported

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
