"""The one parser of commbench's commands: argparse, from the standard library (no dependency
to install, and the help, usage and errors every Python user knows). `commbench run` reads IMB's
and OMB's own options (-msglog 3:20, -npmin, -load FILE) from one table instead
(commbench.run_config, commbench.run_options): argparse does not speak that grammar."""

from __future__ import annotations

import argparse
import re


class Parser(argparse.ArgumentParser):
    """argparse with commbench's errors: a ValueError saying what is wrong and the accepted
    form (`… (accepted: USAGE)`), which the command prints as `commbench: error: …` with exit
    status 2. No abbreviated option names (a script that works today keeps working when an
    option is added); an option's value may start with '-' (`--threshold -5%` is refused by the
    threshold's check, not taken for an unknown option); options and arguments in any order."""

    def __init__(self, prog: str, accepted: str, **kw) -> None:
        kw.setdefault("add_help", False)
        super().__init__(prog=prog, allow_abbrev=False, **kw)
        self.accepted = accepted

    def read(self, argv: list[str]) -> argparse.Namespace:
        """The namespace of argv; ValueError naming the first problem."""
        return self.parse_intermixed_args(self._joined(argv))

    def _joined(self, argv: list[str]) -> list[str]:
        """`--name VALUE` as `--name=VALUE` for an option taking one value, so that a VALUE
        beginning with '-' reaches the option's check."""
        valued = {s for a in self._actions if a.nargs is None for s in a.option_strings}
        out, i = [], 0
        while i < len(argv):
            a = argv[i]
            if a in valued and i + 1 < len(argv):
                out.append(f"{a}={argv[i + 1]}" if a.startswith("--") else a + argv[i + 1])
                i += 2
                continue
            out.append(a)
            i += 1
        return out

    def error(self, message: str):
        said = self._said(message)
        raise ValueError(said if "(accepted:" in said else f"{said} (accepted: {self.accepted})")

    def _said(self, message: str) -> str:
        m = re.fullmatch(r"unrecognized arguments: (\S+).*", message)
        if m:
            what = "option" if m.group(1).startswith("-") and m.group(1) != "-" else "argument"
            return f"unknown {what} {m.group(1)!r} for {self.prog.removeprefix('commbench ')}"
        m = re.fullmatch(r"argument (\S+?)(?:/\S+)?: (.*)", message)
        if m and m.group(2) == "expected one argument":
            action = next((a for a in self._actions if m.group(1) in a.option_strings), None)
            return f"{m.group(1)} needs {getattr(action, 'metavar', None) or 'a value'}"
        if m:  # a check's own message names its option already
            return m.group(2) if m.group(2).startswith(m.group(1)) else f"{m.group(1)} {m.group(2)}"
        return message


def checked(check):
    """An argparse type from a check that raises ValueError with its own message."""

    def parse(text: str):
        try:
            return check(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    parse.__name__ = getattr(check, "__name__", "value")
    return parse


def fraction(flag: str, example: str, zero: bool = True):
    """An argparse type: a fraction below 1, written 20% or 0.2 (0 itself unless zero=False)."""

    def parse(text: str) -> float:
        try:
            v = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            v = -1.0
        if not 0 <= v < 1 or (v == 0 and not zero):
            what = "below 1" if zero else "between 0 and 1"
            raise ValueError(f"{flag} {text!r}: a fraction {what} (accepted: {example})")
        return v

    return checked(parse)
