"""The C/Python boundary read from the C sources, where it is declared once (abi.h).

The C files declare their tables and structs as X-macros, one row a line of a
`#define NAME(P)` (CB_PATTERNS of kernels.c: a row a pattern; <NAME>_FIELDS: a row
`X(type, name, "doc")` a struct field); this module reads those rows the way the C
preprocessor sees them (continued lines joined, comments dropped), so Python knows
the patterns, the fields of every struct it fills (`fields`: the ctypes `_fields_`) and
the ABI numbers (`define`) without building anything. A pointer is an address on the
Python side (c_void_p); int, long long and double are themselves; `name[N]` an array.
commbench.native.extension checks each mirror's size against the compiled library's.
"""

from __future__ import annotations

import ctypes
import functools
import re
from dataclasses import dataclass
from pathlib import Path

# The C scalar types a field may have, and their ctypes; any pointer is c_void_p.
SCALARS: dict[str, type] = {
    "int": ctypes.c_int,
    "long long": ctypes.c_longlong,
    "double": ctypes.c_double,
}


@dataclass(frozen=True)
class Field:
    """One row X(type, name, "doc") of a struct's X-macro."""

    ctype: str  # the C type, spaces normalised: "const void *"
    name: str
    dim: int | None  # out[3]: 3
    doc: str

    def ctypes_type(self) -> type:
        base = ctypes.c_void_p if "*" in self.ctype else SCALARS.get(_unqualified(self.ctype))
        if base is None:
            raise RuntimeError(
                f"field {self.name}: C type {self.ctype!r} has no ctypes mirror here "
                f"(pointers, {', '.join(SCALARS)})"
            )
        return base * self.dim if self.dim else base


def _unqualified(ctype: str) -> str:
    return " ".join(w for w in ctype.split() if w not in ("const", "volatile"))


def _normalised(ctype: str) -> str:
    return " ".join(ctype.replace("*", " * ").split()).replace("* *", "**")


def preprocessed(source: Path) -> str | None:
    """The text of source as the preprocessor reads it: continued lines joined, comments
    dropped (string literals kept). None when source is missing. Read once a process while
    the file is unchanged (a rank reads a header's tables several times)."""
    try:
        st = source.stat()
    except OSError:
        return None
    return _preprocessed(str(source), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=32)
def _preprocessed(source: str, _mtime_ns: int, _size: int) -> str | None:
    try:
        text = Path(source).read_text()
    except OSError:
        return None
    return re.sub(
        r'"(?:[^"\\\n]|\\.)*"|/\*.*?\*/',
        lambda m: m.group(0) if m.group(0)[0] == '"' else " ",
        text.replace("\\\n", " "),
        flags=re.S,
    )


def _match(source: Path, pattern: str, what: str) -> re.Match | None:
    """The first line of source matching pattern; None when source is missing;
    RuntimeError naming `what` when no line matches."""
    text = preprocessed(source)
    if text is None:
        return None
    m = re.search(pattern, text, re.M)
    if m is None:
        raise RuntimeError(f"{source}: no {what}")
    return m


def macro(source: Path, name: str) -> tuple[str, str] | None:
    """(parameter, body) of `#define name(param) body` in source; None when source is
    missing; RuntimeError when it lacks the macro."""
    m = _match(
        source, rf"^[ \t]*#[ \t]*define[ \t]+{name}\([ \t]*(\w+)[ \t]*\)(.*)$", f"{name} table"
    )
    return None if m is None else (m.group(1), m.group(2))


def rows(source: Path, name: str, pattern: str) -> list[tuple[str, ...]]:
    """The rows `P(...)` of the X-macro `name` in source (P its parameter), each matched
    from its opening parenthesis by `pattern`: the regex groups, in order. [] when
    source is missing."""
    found = macro(source, name)
    if found is None:
        return []
    param, body = found
    return re.findall(rf"\b{param}\(\s*{pattern}", body)


_FIELD = r'([^,()"]+?)\s*,\s*(\w+)\s*(?:\[\s*(\d+)\s*\])?\s*,\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\)'


def read_fields(source: Path, name: str) -> list[Field]:
    """The fields of the X-macro `name` (rows X(type, name, "doc")) in source, in order;
    [] when source is missing."""
    return [
        Field(
            _normalised(t),
            n,
            int(d) if d else None,
            "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', doc)),
        )
        for t, n, d, doc in rows(source, name, _FIELD)
    ]


def fields(source: Path, name: str) -> list[tuple[str, type]]:
    """The ctypes `_fields_` of the struct whose X-macro is `name` in source."""
    return [(f.name, f.ctypes_type()) for f in read_fields(source, name)]


def codes(source: Path, name: str) -> dict[str, int]:
    """{name: code} of the code table `name` (rows C(CONSTANT, "name name ...")) in source:
    each row's names map to its index, the value its enum gives CONSTANT (abi.h's CB_CODE);
    RuntimeError when source is missing or has no such table."""
    found = rows(source, name, r'(\w+)\s*,\s*"([^"]*)"\s*\)')
    if not found:
        raise RuntimeError(f"{source}: no code table {name}")
    return {n: i for i, (_, names) in enumerate(found) for n in names.split()}


def define(source: Path, name: str) -> int | None:
    """The integer of `#define name N` in source (an ABI number); None when source is missing."""
    m = _match(source, rf"^[ \t]*#[ \t]*define[ \t]+{name}[ \t]+(\d+)[ \t]*$", f"#define {name}")
    return None if m is None else int(m.group(1))
