"""The published schema of the results file (issue 18 item 2) without a run: it states format
version 1 and the reader rule, agrees with the writer's constants, accepts the sample of a
real run's file and rejects broken ones, and the session's check of every results file finds
them. `commbench schema` and the readers are tests/mpi/test_schema.py."""

from __future__ import annotations

import copy
import json
import os
import time

from commbench import records, schema
from commbench.views import results_file
from tests.support import results_schema
from tests.support.results_schema import SAMPLE, problems


def test_the_schema_states_the_version_and_the_reader_rule():
    s = schema.load()
    assert s["properties"]["format_version"] == {
        "const": results_file.FORMAT_VERSION,
        "description": s["properties"]["format_version"]["description"],
    }
    assert s["properties"]["format"] == {"const": results_file.FORMAT}
    assert (
        "format version" in s["description"].lower() and "reader rule" in s["description"].lower()
    )
    assert (
        "at most N" in s["description"]
        and "refuses a file with a larger format_version" in s["description"]
    )
    statuses = {
        v
        for k, v in vars(records).items()
        if k.isupper()
        and isinstance(v, str)
        and k
        in (
            "OK",
            "TIMEOUT",
            "OUT_OF_MEM",
            "INT_OVERFLOW",
            "INVALID",
            "STUCK",
            "INTERRUPTED",
            "LIBRARY_DEFECT",
        )
    }
    assert set(s["$defs"]["record"]["properties"]["status"]["enum"]) == statuses
    req = set(s["$defs"]["record"]["required"])
    assert req == {k for k, (_, required) in records.SHAPE.items() if required}
    assert set(s["$defs"]["record"]["properties"]) == set(records.Measurement.__dataclass_fields__)


def test_a_real_run_validates_and_broken_files_do_not(tmp_path):
    doc = json.loads(SAMPLE.read_text())
    assert problems(doc) == []
    breaks = {
        "a record's bytes is text": lambda d: d["records"][1].update(bytes="big"),
        "no records": lambda d: d.pop("records"),
        "a newer format version": lambda d: d.update(format_version=2),
        "not a results file": lambda d: d.update(format="something-else"),
        "a status nobody writes": lambda d: d["records"][0].update(status="fine"),
        "a time as text": lambda d: d["records"][0]["values"].update(t_max="1.5"),
        "a field records do not have": lambda d: d["records"][0].update(speed=3),
        "metadata without the MPI library": lambda d: d["metadata"].pop("mpi_library_version"),
        "complete as text": lambda d: d.update(complete="yes"),
        "a negative process count": lambda d: d["records"][0].update(np=-1),
        "an import without its logs": lambda d: d["metadata"].update(
            source={"tool": "IMB-MPI1", "format": "imb"}, imported={"date": "", "command_line": []}
        ),
    }
    for why, brk in breaks.items():
        broken = copy.deepcopy(doc)
        brk(broken)
        assert problems(broken), f"{why}: validates, it should not"
    # the session check finds results files and leaves out those broken on purpose
    (tmp_path / "sub").mkdir()
    good, bad = tmp_path / "sub" / "good.json", tmp_path / "bad.invalid.json"
    good.write_text(json.dumps(doc))
    broken = copy.deepcopy(doc)
    broken["records"][1]["bytes"] = "big"
    bad.write_text(json.dumps(broken))
    (tmp_path / "other.json").write_text('{"not": "results"}')
    (tmp_path / "cut.json").write_text(SAMPLE.read_text()[:500])
    assert results_schema.results_files([tmp_path]) == [good]
    planted = tmp_path / "sub" / "planted.json"
    planted.write_text(json.dumps(broken))
    found = results_schema.check(results_schema.results_files([tmp_path]))
    assert len(found) == 1 and found[0].startswith(
        f"{planted}: records/1/bytes: 'big' is not of type"
    )
    planted.unlink()  # else the session's own check fails on it, as it should
    os.utime(good, (time.time() - 3600,) * 2)
    assert results_schema.results_files([tmp_path], since=time.time() - 60) == []
