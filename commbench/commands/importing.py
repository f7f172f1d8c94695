"""`commbench import LOG [LOG ...] -o OUT.json [--format auto|imb|osu|nccl] [--np N] [--force]`.

Exit status 0 when every log was read to its end; 2 when one is malformed,
cut or unreadable: the message names the file and line, and OUT keeps every
record read before it (complete: false, the reason in summary.interrupted),
so nothing read is lost. Nothing is written when no log could be read at all,
nor when the results file would pass the cap on a results file (budget.py),
which is checked before any log is read. -o is checked as a run's -o is
(outputs.check_writable: missing directories are made, a file that is not a
results file is left alone); -o - or /dev/null reads and checks the logs and
writes nothing.
"""

from __future__ import annotations

import argparse
import os
import sys

from commbench.commands.parsing import Parser
from commbench.importers import FORMATS, budget, document, read, sniff
from commbench.option_types import ConfigError
from commbench.outputs import check_writable, normal_output

USAGE = "commbench import LOG [LOG ...] -o OUT.json [--format auto|imb|osu|nccl] [--np N] [--force]"


def _np(s: str) -> int:
    if not s.isdigit() or int(s) < 1:
        raise argparse.ArgumentTypeError(
            f"{s!r} is not a process count (accepted: a positive integer)"
        )
    return int(s)


def parser() -> argparse.ArgumentParser:
    p = Parser(
        "commbench import",
        USAGE,
        add_help=True,
        usage=USAGE,
        description="Read IMB, OSU Micro-Benchmarks or nccl-tests output into a commbench "
        "results file, for report, compare, fit and plot (docs/import.md).",
    )
    p.add_argument(
        "logs", nargs="+", metavar="LOG", help="the tool's output (text; nccl-tests -J: JSON)"
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT.json",
        help="the results file to write (missing directories are made; - or /dev/null: none, the "
        "logs are only checked)",
    )
    p.add_argument(
        "--format",
        choices=("auto", *FORMATS),
        default="auto",
        help="which tool wrote the logs (default: auto, by their content)",
    )
    p.add_argument(
        "--np",
        type=_np,
        metavar="N",
        help="processes of the run, where the log does not say (OSU collectives; nccl-tests "
        "without its Rank lines)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help=f"write a results file past the cap of {budget.SAMPLES_FILE_LIMIT / 1e6:.0f} MB on a "
        "results file (the cap of commbench run --samples)",
    )
    return p


def _err(msg: str) -> None:
    print(f"commbench import: error: {msg}", file=sys.stderr)


def _output(a) -> str | None:
    """The file to write (None: none); ConfigError when -o cannot be it."""
    if any(os.path.realpath(p) == os.path.realpath(a.output) for p in a.logs):
        raise ConfigError(f"-o {a.output!r} is one of the logs (accepted: another file)")
    path = normal_output(a.output)
    if path == "-":
        return None
    check_writable("-o", path)
    return path


def _sniffed(a, errors: list[str]) -> list:
    """The logs in a format this reads (the others' errors in errors)."""
    found = []
    for path in a.logs:
        try:
            log = sniff(path, len(found), a.format)
        except OSError as e:
            errors.append(f"{path}: cannot read ({e.strerror}) (accepted: a readable text file)")
            _err(errors[-1])
            continue
        if log.error:
            errors.append(log.error)
            _err(log.error)
        else:
            found.append(log)
    return found


def _read_all(a, sniffed: list, out: document.Output, errors: list[str]) -> list:
    logs = []
    for s in sniffed:
        try:
            log = read(s.path, len(logs), a.format, a.np, sink=out.record)
        except OSError as e:
            errors.append(f"{s.path}: cannot read ({e.strerror}) (accepted: a readable text file)")
            _err(errors[-1])
            continue
        if log.error:
            errors.append(log.error)
            _err(log.error)
        if log.fmt:  # recognized: its records (possibly none) go into the file
            logs.append(log)
            kept = log.source.get("warnings", [])
            if kept:
                more = log.source.get("warnings_not_listed", 0)
                print(
                    f"commbench import: warning: {log.path}: {kept[0]}"
                    + (
                        (
                            f" (and {len(kept) + more - 1} more, in "
                            f"metadata.source.logs[{log.index}].warnings)"
                        )
                        if len(kept) + more > 1
                        else ""
                    ),
                    file=sys.stderr,
                )
    return logs


def main(argv: list[str]) -> int:
    try:
        a = parser().read(argv)
    except ValueError as e:
        _err(str(e))
        return 2
    try:
        path = _output(a)
    except ConfigError as e:
        _err(str(e))
        return 2
    errors: list[str] = []
    sniffed = _sniffed(a, errors)
    if not sniffed:
        return 2
    try:
        records, size = budget.estimate([(s.path, s.fmt, s.source["json"]) for s in sniffed])
        if (why := budget.refusal(records, size, a.force)) is not None:
            _err(why)
            return 2
        out = document.Output(path)
    except OSError as e:
        _err(
            f"{e.filename or a.output}: {e.strerror} (accepted: "
            "readable logs, -o in a writable directory)"
        )
        return 2
    try:
        logs = _read_all(a, sniffed, out, errors)
        if not logs:
            return 2
        doc = document.build(logs, argv, errors)
        out.write(doc)
    except OSError as e:
        _err(
            f"-o {a.output!r}: cannot write ({e.strerror}) (accepted: a file in a writable "
            "directory with room for it)"
        )
        return 2
    except (
        ValueError
    ) as e:  # a number JSON cannot hold (NaN): the importers leave those out, so never
        _err(f"-o {a.output!r}: not written: {e} (accepted: logs whose numbers are finite)")
        return 2
    finally:
        out.close()
    n = out.count
    where = a.output if path is not None else "no file (-o " + a.output + ")"
    if errors:
        print(
            f"commbench: the {n} records that could be read are in {where} (complete: false)",
            file=sys.stderr,
        )
        return 2
    print(
        f"commbench: {n} records from {len(logs)} "
        f"log{'s' if len(logs) > 1 else ''} written to {where}",
        file=sys.stderr,
    )
    return 0
