"""The results file's JSON Schema (results.schema.json, shipped as package data).

`commbench schema` prints it; docs/schema.md explains it, with the format
version and the rule for readers of older versions (also in the schema's
description). The commands that read results files (compare, report, fit,
plot) validate every file against it with jsonschema (first_error), loaded
only by them: a rank of a run never imports it.
"""

from __future__ import annotations

import json
from importlib import resources

NAME = "results.schema.json"


def text() -> str:
    return resources.files(__package__).joinpath(NAME).read_text(encoding="utf-8")


def load() -> dict:
    return json.loads(text())


_VALIDATOR = None


def first_error(doc: object) -> tuple[list, str] | None:
    """(path, message) of the most relevant way doc breaks the schema, None when it validates.
    Needs jsonschema (a dependency of the reading commands; never loaded in a rank)."""
    global _VALIDATOR
    import jsonschema

    if _VALIDATOR is None:
        _VALIDATOR = jsonschema.Draft202012Validator(load())
    error = jsonschema.exceptions.best_match(_VALIDATOR.iter_errors(doc))
    if error is None:
        return None
    return list(error.absolute_path), _message(error)


def _message(error) -> str:
    """jsonschema's message, cut so a huge value does not fill the screen."""
    text = error.message
    return text if len(text) <= 200 else text[:197] + "..."
