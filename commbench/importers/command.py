"""`commbench import LOG [LOG ...] -o OUT.json [--format auto|imb|osu|nccl] [--np N]`.

Exit status 0 when every log was read to its end; 2 when one is malformed,
cut or unreadable: the message names the file and line, and OUT keeps every
record read before it (complete: false, the reason in summary.interrupted),
so nothing read is lost. Nothing is written when no log could be read at all.
"""

from __future__ import annotations

import argparse
import os
import sys

from commbench.importers import FORMATS, document, read

USAGE = "commbench import LOG [LOG ...] -o OUT.json [--format auto|imb|osu|nccl] [--np N]"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # the same form as every other commbench error
        print(f"commbench import: error: {message}\nusage: {USAGE}", file=sys.stderr)
        raise SystemExit(2)


def _np(s: str) -> int:
    if not s.isdigit() or int(s) < 1:
        raise argparse.ArgumentTypeError(f"{s!r} is not a process count (accepted: a positive integer)")
    return int(s)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="commbench import", usage=USAGE,
                description="Read IMB, OSU Micro-Benchmarks or nccl-tests output into a commbench results file, "
                            "for report, compare, fit and plot (docs/import.md).")
    p.add_argument("logs", nargs="+", metavar="LOG", help="the tool's output (text; nccl-tests -J: JSON)")
    p.add_argument("-o", "--output", required=True, metavar="OUT.json", help="the results file to write")
    p.add_argument("--format", choices=("auto", *FORMATS), default="auto",
                   help="which tool wrote the logs (default: auto, by their content)")
    p.add_argument("--np", type=_np, metavar="N",
                   help="processes of the run, where the log does not say (OSU collectives; nccl-tests without "
                        "its Rank lines)")
    return p


def _err(msg: str) -> None:
    print(f"commbench import: error: {msg}", file=sys.stderr)


def main(argv: list[str]) -> int:
    a = parser().parse_args(argv)
    out = os.path.abspath(a.output)
    if any(os.path.abspath(p) == out for p in a.logs):
        _err(f"-o {a.output!r} is one of the logs (accepted: another file)")
        return 2
    logs, errors = [], []
    for path in a.logs:
        try:
            log = read(path, len(logs), a.format, a.np)
        except OSError as e:
            errors.append(f"{path}: cannot read ({e.strerror}) (accepted: a readable text file)")
            _err(errors[-1])
            continue
        if log.error:
            errors.append(log.error)
            _err(log.error)
        if log.fmt:  # recognized: its records (possibly none) go into the file
            logs.append(log)
    if not logs:
        return 2
    doc = document.build(logs, argv, errors)
    try:
        document.write(doc, a.output)
    except OSError as e:
        _err(f"-o {a.output!r}: cannot write ({e.strerror}) (accepted: a file in a writable directory)")
        return 2
    n = len(doc["records"])
    if errors:
        print(f"commbench: the {n} records that could be read are in {a.output} (complete: false)", file=sys.stderr)
        return 2
    print(f"commbench: {n} records from {len(logs)} log{'s' if len(logs) > 1 else ''} written to {a.output}",
          file=sys.stderr)
    return 0
