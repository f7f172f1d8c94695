"""The scripts in benchmarks/ (whose output the docs quote) import only what exists: a module
moved or renamed under commbench/ or tests/ breaks them silently otherwise, since no test runs
them (gpcnet_side_by_side.py still imported `tests.netns` after it moved to tests/support).
Read as text, nothing imported: no MPI."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))
OURS = ("commbench", "tests", "benchmarks")


def _source(module: str) -> Path | None:
    """The file of a module of this checkout (commbench, tests, benchmarks), else None."""
    if module.split(".")[0] not in OURS:
        return None
    path = ROOT.joinpath(*module.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.exists():
            return candidate
    return path  # missing: the caller says so


def _top_level(body: list) -> list:
    """The statements of a module's top level, those under its if and try blocks too (a
    name a function defines inside itself is not the module's)."""
    out = []
    for node in body:
        out.append(node)
        if isinstance(node, (ast.If, ast.Try)):
            for block in (node.body, node.orelse, getattr(node, "finalbody", [])):
                out += _top_level(block)
            for handler in getattr(node, "handlers", []):
                out += _top_level(handler.body)
    return out


def _defines(path: Path, name: str) -> bool:
    """Whether the module at path defines `name` at its top level, or has it as a submodule."""
    if path.name == "__init__.py" and (
        (path.parent / f"{name}.py").exists() or (path.parent / name / "__init__.py").exists()
    ):
        return True
    for node in _top_level(ast.parse(path.read_text(encoding="utf-8")).body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                return True
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.split(".")[0]) == name for a in node.names):
                return True
    return False


def test_every_benchmark_script_imports_what_exists():
    broken = []
    for script in SCRIPTS:
        for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                pairs = [(a.name, None) for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                pairs = [(node.module, a.name) for a in node.names]
            else:
                continue
            for module, name in pairs:
                path = _source(module)
                if path is None:
                    continue  # the standard library or a package of the environment
                if not path.exists():
                    broken.append(f"{script.name}:{node.lineno} {module} (no such module)")
                elif name and not _defines(path, name):
                    broken.append(f"{script.name}:{node.lineno} {module} has no {name}")
    assert SCRIPTS and not broken, broken
