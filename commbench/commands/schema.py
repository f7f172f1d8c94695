"""`commbench schema`: the results file's JSON Schema (docs/schema.md)."""

from __future__ import annotations

from commbench.commands.errors import err as _err


def main(argv: list[str]) -> int:
    from commbench import schema

    if argv:
        return _err(
            f"schema takes no arguments, got {' '.join(argv)!r} (accepted: commbench schema)"
        )
    print(schema.text(), end="")
    return 0
