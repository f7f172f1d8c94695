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
from functools import partial

from commbench.commands.errors import err
from commbench.commands.parsing import Parser
from commbench.importers import FORMATS, Log, budget, document, read, sniff
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


_err = partial(err, who="commbench import")


def _output(a) -> str | None:
    """The file to write (None: none); ConfigError when -o cannot be it."""
    if any(os.path.realpath(p) == os.path.realpath(a.output) for p in a.logs):
        raise ConfigError(f"-o {a.output!r} is one of the logs (accepted: another file)")
    path = normal_output(a.output)
    if path == "-":
        return None
    check_writable("-o", path)
    return path


def _each(paths: list[str], errors: list[str], get) -> list:
    """The logs get(path, index) recognizes (sniff, or read); each one's error, or why it
    cannot be read, said and kept in errors, and its warnings said."""
    logs = []
    for path in paths:
        try:
            log = get(path, len(logs))
        except OSError as e:
            error = f"{path}: cannot read ({e.strerror}) (accepted: a readable text file)"
            log = Log(path, len(logs), error=error)
        if log.error:
            errors.append(log.error)
            _err(log.error)
        if log.fmt:  # recognized: its records (possibly none) go into the file
            logs.append(log)
            _warned(log)
    return logs


def _warned(log: Log) -> None:
    kept = log.source.get("warnings", [])
    if kept:
        more = len(kept) + log.source.get("warnings_not_listed", 0) - 1
        where = f" (and {more} more, in metadata.source.logs[{log.index}].warnings)" if more else ""
        print(f"commbench import: warning: {log.path}: {kept[0]}{where}", file=sys.stderr)


def main(argv: list[str]) -> int:
    try:
        a = parser().read(argv)
        path = _output(a)
    except (ValueError, ConfigError) as e:
        return _err(str(e))
    errors: list[str] = []
    sniffed = _each(a.logs, errors, partial(sniff, fmt=a.format))
    if not sniffed:
        return 2
    try:
        records, size = budget.estimate([(s.path, s.fmt, s.source["json"]) for s in sniffed])
        if (why := budget.refusal(records, size, a.force)) is not None:
            return _err(why)
        out = document.Output(path)
    except OSError as e:
        return _err(
            f"{e.filename or a.output}: {e.strerror} (accepted: "
            "readable logs, -o in a writable directory)"
        )
    try:
        get = partial(read, fmt=a.format, np_hint=a.np, sink=out.record)
        logs = _each([s.path for s in sniffed], errors, get)
        if not logs:
            return 2
        out.write(document.build(logs, argv, errors))
    except OSError as e:
        return _err(
            f"-o {a.output!r}: cannot write ({e.strerror}) (accepted: a file in a writable "
            "directory with room for it)"
        )
    except ValueError as e:
        # a number JSON cannot hold (NaN): the importers leave those out, so never
        return _err(f"-o {a.output!r}: not written: {e} (accepted: logs whose numbers are finite)")
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
