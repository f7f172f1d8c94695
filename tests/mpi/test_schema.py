"""The published schema of the results file (issue 18 item 2).

The schema ships in the package and `commbench schema` prints it; readers
refuse a newer format. That it states format version 1 and the reader rule,
agrees with the writer's constants, accepts a real run's file (and, in
tests/conftest.py, every results file the test suite writes) and rejects
broken ones is tests/unit/test_schema.py.
"""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest

from commbench import schema
from commbench.views import results_file
from tests.support import results_schema
from tests.support.mpirun import commbench
from tests.support.results_schema import SAMPLE, problems

PYPROJECT = results_schema.SAMPLE.parents[3] / "pyproject.toml"


def test_commbench_schema_prints_the_packaged_schema():
    p = commbench("schema")
    assert p.returncode == 0, p.stderr
    printed = json.loads(p.stdout)
    assert printed == schema.load()
    jsonschema.Draft202012Validator.check_schema(printed)  # a valid JSON Schema
    assert '"commbench.schema" = ["*.json"]' in PYPROJECT.read_text()  # shipped as package data
    assert commbench("schema", "extra").returncode == 2


def test_readers_refuse_a_newer_format_and_read_older_files(tmp_path):
    doc = json.loads(SAMPLE.read_text())
    newer = tmp_path / "newer.invalid.json"
    newer.write_text(json.dumps(dict(doc, format_version=2)))
    with pytest.raises(
        ValueError, match="results format version 2 is newer than this commbench reads"
    ):
        results_file.load(str(newer))
    p = commbench("report", str(newer))
    assert p.returncode == 2 and "format version 2 is newer" in p.stderr
    older = copy.deepcopy(doc)  # the keys added within version 1 are optional
    del older["units"]
    for r in older["records"]:
        del r["extra"], r["group_values"], r["defects"]
    assert problems(older) == []
    path = tmp_path / "older.json"
    path.write_text(json.dumps(older))
    assert len(results_file.measurements(results_file.load(str(path)))) == len(doc["records"])
