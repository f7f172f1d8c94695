"""The structure of an IMB text, as a program that parses IMB 2021's output sees it:
`# Benchmarking`, `#processes`, `MODE` and waiting-process lines, column headers,
and each table row's size and field count (never the numbers)."""

from __future__ import annotations


def layout(text: str) -> list[tuple[str, ...]]:
    out = []
    for line in text.splitlines():
        if line.startswith(("# Benchmarking", "# #processes", "#    MODE", "# ( ")):
            out.append((" ".join(line.split()),))
        elif line.strip().startswith("#bytes") or line.strip().startswith("#repetitions"):
            out.append(tuple(line.split()))
        elif line.startswith(" ") and line.split() and line.split()[0].isdigit():
            out.append(("row", line.split()[0], str(len(line.split()))))
    return out
