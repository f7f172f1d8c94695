"""The files a run writes: where the results go by default, and what -o / --csv may overwrite.

Checked before anything is measured (rank 0, commbench.mpi_job.parse_on_root): a
path that cannot be written, a file that is not commbench's, -o and --csv
naming one file. Default names are reserved exclusively, so runs started in
the same second never share one.
"""

from __future__ import annotations

import os
import time

from commbench.option_types import ConfigError


def normal_output(path: str | None) -> str | None:
    """-o /dev/null means no results file, as -o - does: the file is rewritten in place and
    replaced at the end, which a device cannot be (and must not be, as root)."""
    return "-" if path and path != "-" and _is_null(path) else path


def _is_null(path: str) -> bool:
    return os.path.exists(path) and os.path.realpath(path) == os.path.realpath(os.devnull)


def check_writable(option: str, path: str | None) -> None:
    """Refuse an output path that cannot be written, before anything is measured."""
    if path is None or path == "-":
        return
    form = f"accepted: {option} <file in a writable directory>" + (
        " or -o - for none" if option == "-o" else ""
    )
    if os.path.isdir(path):
        raise ConfigError(f"{option} {path!r}: is a directory ({form})")
    d = os.path.dirname(os.path.abspath(path))
    try:
        ensure_parent(path)
    except OSError as e:
        raise ConfigError(
            f"{option} {path!r}: cannot create directory {d!r} ({e.strerror}) ({form})"
        ) from None
    existed = os.path.exists(path)
    # a FIFO would block, a device refuse
    if existed and not os.path.isfile(path) and not _is_null(path):
        raise ConfigError(
            f"{option} {path!r}: is not a regular file (a device, a FIFO, a socket); commbench "
            "writes its files as records arrive and replaces the results file whole at the end "
            f"({form})"
        )
    if option == "-o" and existed and not _is_results_file(path):
        raise ConfigError(
            f"{option} {path!r}: exists and is not a commbench results file; it is left untouched "
            f"({form}, or remove it)"
        )
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as e:
        raise ConfigError(f"{option} {path!r}: cannot write ({e.strerror}) ({form})") from None
    if not existed:
        os.unlink(path)


def ensure_parent(path: str) -> None:
    """The one rule of every file commbench writes (-o, --csv, compare --json, report --csv and
    --html, import -o, plot -o): missing directories are made; OSError when they cannot be."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)


def default_output(family: str) -> str:
    """results/commbench-<family>-<date>.json, reserved (created empty, exclusively) so two
    runs started in the same second get different files (-2, -3 … on the second one)."""
    stem = os.path.join("results", f"commbench-{family}-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        os.makedirs("results", exist_ok=True)
    except OSError:
        return stem + ".json"  # check_writable says why it cannot be written
    for k in range(1, 1000):
        path = stem + (f"-{k}" if k > 1 else "") + ".json"
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            return path
        except FileExistsError:
            continue
        except OSError:
            return path
    return stem + f"-{os.getpid()}.json"


def check_distinct(output: str | None, csv_path: str | None) -> None:
    if (
        output
        and csv_path
        and output != "-"
        and os.path.realpath(output) == os.path.realpath(csv_path)
    ):
        raise ConfigError(
            f"--csv {csv_path!r} is the results file of -o (accepted: two different files)"
        )


def _is_results_file(path: str) -> bool:
    """Empty (a reserved name) or a commbench results file: what -o may overwrite."""
    try:
        if os.path.getsize(path) == 0:
            return True
        with open(path, "rb") as f:
            return b'"format": "commbench-results"' in f.read(256)
    except OSError:
        return True  # check_writable reports what is wrong with it
