"""The results file's JSON Schema (results.schema.json, shipped as package data).

`commbench schema` prints it; docs/schema.md explains it, with the format
version and the rule for readers of older versions (also in the schema's
description). Validating needs a JSON Schema library (jsonschema, in the
test extra); nothing in commbench imports one.
"""

from __future__ import annotations

import json
from importlib import resources

NAME = "results.schema.json"


def text() -> str:
    return resources.files(__package__).joinpath(NAME).read_text(encoding="utf-8")


def load() -> dict:
    return json.loads(text())
