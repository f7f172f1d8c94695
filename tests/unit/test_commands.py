"""The front doors: every command is a module of commbench/commands, parsed there, and nothing
else in the package reads a command line or hands a request back up (issue 47 item 1)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from commbench import commands
from commbench.commands.parsing import Parser

PACKAGE = Path(commands.__file__).parent.parent


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path, ast.parse(path.read_text())


def test_every_command_is_a_function_of_a_module_of_commands():
    for name, (module, function) in commands.SUBCOMMANDS.items():
        got = getattr(importlib.import_module(f"commbench.commands.{module}"), function)
        assert callable(got), name
        assert f"  {name} " in commands.USAGE, f"{name} is not in commbench's usage"


def test_only_commands_parse_a_command_line():
    """argparse and a `main`/`cmd_*` entry point only under commands/; config parses run's
    IMB-style options (its table), and nothing else takes argv apart."""
    found = []
    for path, tree in _modules():
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("commands/"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if "argparse" in names:
                    found.append(f"{rel}: imports argparse")
            if isinstance(node, ast.FunctionDef) and (
                node.name == "main" or node.name.startswith("cmd_")
            ):
                found.append(f"{rel}: def {node.name}")
    assert found == [], found


def test_no_module_hands_a_request_back_up_through_a_global_list_or_the_environment():
    """job.run returns its outcome; no module-level list collects requests for the command
    line, and no variable tells the ranks to leave storing to the launcher."""
    job = (PACKAGE / "mpi_job.py").read_text()
    assert "STORE_REQUEST" not in job
    for path, _ in _modules():
        assert "STORED_BY_LAUNCHER" not in path.read_text(), path


@pytest.mark.parametrize(
    "argv,says",
    [
        (["--alpha"], "--alpha needs a value (accepted: U)"),
        (["--out"], "--out needs OUT.html (accepted: U)"),
        (["--bogus"], "unknown option '--bogus' for demo (accepted: U)"),
        (["--alpha", "-5"], "--alpha '-5' is negative (accepted: --alpha 0.05)"),
        (["--alpha=x"], "--alpha 'x' is not a number (accepted: --alpha 0.05)"),
    ],
)
def test_the_parser_says_what_is_wrong_and_what_is_accepted(argv, says):
    from commbench.commands.parsing import checked

    def alpha(text):
        try:
            v = float(text)
        except ValueError:
            raise ValueError(f"--alpha {text!r} is not a number (accepted: --alpha 0.05)") from None
        if v < 0:
            raise ValueError(f"--alpha {text!r} is negative (accepted: --alpha 0.05)")
        return v

    p = Parser("commbench demo", "U")
    p.add_argument("paths", nargs="*")
    p.add_argument("--alpha", type=checked(alpha))
    p.add_argument("--out", metavar="OUT.html")
    with pytest.raises(ValueError) as e:
        p.read(["a", "b", *argv])
    assert str(e.value) == says


def test_the_parser_takes_options_and_arguments_in_any_order():
    p = Parser("commbench demo", "U")
    p.add_argument("paths", nargs="*")
    p.add_argument("--json")
    p.add_argument("-o")
    got = p.read(["a", "--json", "-", "b", "-o", "-", "c"])
    assert (got.paths, got.json, got.o) == (["a", "b", "c"], "-", "-")


def test_every_class_name_is_unique_in_the_package():
    """One name, one class: a reader (and a search) finds the class a name means (issue 47
    item 5: eleven classes were named Settings, four Row)."""
    where: dict[str, list[str]] = {}
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(path.relative_to(PACKAGE).as_posix())
    assert {k: v for k, v in where.items() if len(v) > 1} == {}
