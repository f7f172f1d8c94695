"""-dump and -load: a run's options in a file a user can read, edit and run again.

IMB 2021 writes YAML (with yaml-cpp); commbench writes JSON, which the standard
library reads and writes and every editor knows:

    {"format": "commbench-options 1",
     "argv": ["-msglog", "0:10", "--methodology", "imb2021", "PingPong"],
     "resolved": {... every setting the run resolved, as in the results file ...}}

`argv` is what `-load` reads back: the options and benchmark names as given (the
-dump/-load themselves left out). `resolved` records what they meant (defaults
filled in) and is not read back: edit `argv`. On `-load`, options given on the
command line win over the file's, and benchmark names given there replace the
file's. Nothing here imports MPI.
"""

from __future__ import annotations

import json
import os

from commbench.option_types import ConfigError, Option, readable_file, text

FORMAT = "commbench-options 1"

OPTIONS: tuple[Option, ...] = (
    Option(
        ("-dump",),
        "dump",
        "<file.json>",
        "write this run's options to a file (JSON) that -load reads",
        text,
    ),
    Option(
        ("-load",),
        "load",
        "<file.json>",
        "read options and benchmark names from a -dump file; the command line's win",
        readable_file("-load"),
    ),
)


def given(argv: list[str]) -> list[str]:
    """argv without its -dump/-load and their values."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in ("-dump", "-load"):
            skip = True
        else:
            out.append(a)
    return out


def read(path: str) -> list[str]:
    """The argv a -dump file holds; ConfigError naming what is wrong with it."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"-load {path}: cannot read it ({e})") from None
    except json.JSONDecodeError as e:
        raise ConfigError(
            f"-load {path}: not JSON ({e.msg} at line "
            f"{e.lineno}) (accepted: a file written by -dump)"
        ) from None
    argv = doc.get("argv") if isinstance(doc, dict) else None
    if doc.get("format") != FORMAT if isinstance(doc, dict) else True:
        raise ConfigError(
            f"-load {path}: not a commbench options file (accepted: a file written by -dump, "
            f'"format": "{FORMAT}")'
        )
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise ConfigError(
            f'-load {path}: "argv" must be a list of strings (accepted: a file written by -dump)'
        )
    if "-load" in argv or "-dump" in argv:
        raise ConfigError(
            f"-load {path}: its argv names -load/-dump itself (accepted: options and names only)"
        )
    return argv


def write(path: str, argv: list[str], resolved: dict) -> None:
    """The -dump file, written whole or not at all."""
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(
                {"format": FORMAT, "argv": given(argv), "resolved": resolved},
                f,
                indent=1,
                default=str,
            )
            f.write("\n")
        os.replace(tmp, path)
    except OSError as e:
        raise ConfigError(f"-dump {path}: cannot write it ({e.strerror})") from None
