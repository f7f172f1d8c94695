"""The architecture contracts that start no program: modules and functions stay small, and no
two modules of commbench import each other. The layers contract (lint-imports) and the linter
and formatter (ruff), which run those programs, are tests/mpi/test_architecture.py."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "commbench"


# Modules and functions allowed to be longer than the limits, and why (the note
# on the architecture issue says the same).
LONG_FUNCTIONS = {
    # The C-shaped experiment loops of seed 002: each is one timed protocol
    # between up to four ranks, and splitting one would scatter its timestamps.
}


def _functions(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _circles(graph) -> list[list[str]]:
    """The strongly connected sets of two or more modules of commbench's import graph
    (Tarjan's algorithm), imports under `if TYPE_CHECKING:` and inside functions counted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(m: str) -> None:
        index[m] = low[m] = len(index)
        stack.append(m)
        on.add(m)
        for n in graph.find_modules_directly_imported_by(m):
            if n not in index:
                visit(n)
                low[m] = min(low[m], low[n])
            elif n in on:
                low[m] = min(low[m], index[n])
        if low[m] == index[m]:
            part = []
            while True:
                n = stack.pop()
                on.discard(n)
                part.append(n)
                if n == m:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for m in sorted(graph.modules):
        if m not in index:
            visit(m)
    return found


def test_modules_and_functions_stay_small():
    too_long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > 500:
            too_long.append(f"{rel}: {text.count(chr(10))} lines")
        for fn in _functions(ast.parse(text)):
            length = fn.end_lineno - fn.lineno + 1
            if length > 60 and f"{rel}:{fn.name}" not in LONG_FUNCTIONS:
                too_long.append(f"{rel}:{fn.name}: {length} lines")
    assert not too_long, "\n".join(too_long)


def test_no_import_circles():
    """No two modules of commbench import each other, directly or through others (issue 47,
    item 5): a package's __init__ that gathers its modules counts like any other module."""
    import grimp  # import-linter's graph ([test])

    graph = grimp.build_graph("commbench", cache_dir=None)
    # A package's face importing its own submodules is how a package is made, not a circle:
    # leave out the arrows from a package to modules inside it.
    for m in sorted(graph.modules):
        for n in graph.find_modules_directly_imported_by(m):
            if n.startswith(m + "."):
                graph.remove_import(importer=m, imported=n)
    assert _circles(graph) == []
