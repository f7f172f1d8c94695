"""Option vocabulary shared by the core and the families: the lowest layer.

An Option names a command-line flag, where its value goes and how it is
parsed; the parsers turn one argv string into a value or raise ConfigError
with the problem and the accepted form. Only commbench.policy (the IMB
constants) is imported here, so every layer may declare options (commbench.run_config reads
them all; the families declare their own in their modules).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from commbench import policy


class ConfigError(Exception):
    """Invalid command line: the message names the problem and the accepted form."""


class RunError(RuntimeError):
    """A problem a run meets that its message explains in full (a file in the way, a
    full disk): reported without a traceback; the run ends keeping its records."""


class HelpRequested(Exception):
    pass


@dataclass(frozen=True)
class Option:
    names: tuple[str, ...]
    dest: str
    metavar: str  # "" for a flag
    help: str
    parse: Callable[[str], Any] | None = None  # None: flag
    multi_names: bool = False  # -include / -exclude: names until the next option
    default: Any = None  # family options: value recorded in cfg.params when not given
    # the value only glued to the name (-z50,90, -clog:dir); alone a flag (True)
    glued: bool = False
    # A family option that only some of its benchmarks use: uses(descriptor) -> bool (None: every
    # one). A run whose selected benchmarks all say False refuses it (commbench.suites.option_use).
    uses: Callable[[Any], bool] | None = None


def near_names(arg: str, names) -> list[str]:
    """The option names an unknown `arg` may have meant: compared without their dashes (so
    --msglog finds -msglog), none for a stem under 2 characters (`--`, `-x`: anything would
    be as close), a stricter match for short stems; each option once, in arg's dash style."""
    stem = arg.split("=", 1)[0].lstrip("-").lower()
    if len(stem) < 2:
        return []
    by_stem: dict[str, list[str]] = {}
    for n in names:
        by_stem.setdefault(n.lstrip("-").lower(), []).append(n)
    dashes = len(arg) - len(arg.lstrip("-"))
    import difflib  # here: only a mistyped name needs it (start-up)

    hits = difflib.get_close_matches(
        stem, list(by_stem), n=3, cutoff=0.75 if len(stem) < 4 else 0.6
    )
    out = []
    for h in hits:
        spellings = by_stem[h]
        out.append(
            next((n for n in spellings if len(n) - len(n.lstrip("-")) == dashes), spellings[0])
        )
    return out


def split_argv(
    argv: list[str], options, given: dict | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Options into raw values, the rest into bare benchmark names. A `glued` option's value
    follows its letter (getopt's optional argument: -z50,90); alone it is a flag. given, when
    passed, receives dest -> [raw value of each time it was given] in the order first given:
    what a reader of the configuration asks instead of the raw command line (a -load file's
    options are given too)."""
    table: dict[str, Option] = {}
    for opt in options:
        for n in opt.names:
            table[n] = opt
    values: dict[str, Any] = {}
    first: dict[str, tuple[str, str | None]] = {}  # dest -> (name, raw value) as first given
    given = {} if given is None else given
    names: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        key, inline = arg, None
        if arg.startswith("--") and "=" in arg:
            key, inline = arg.split("=", 1)
        opt = table.get(key)
        if opt is None and len(arg) > 2 and getattr(table.get(arg[:2]), "glued", False):
            opt, key, inline = table[arg[:2]], arg[:2], arg[2:]
        if opt is None:
            if arg.startswith("-") and arg != "-":
                near = near_names(key, table)
                hint = f" (did you mean {', '.join(near)}?)" if near else " (see commbench run -h)"
                raise ConfigError(f"unknown option {arg!r}{hint}")
            names.append(arg)
            i += 1
            continue
        if opt.dest == "help":
            raise HelpRequested()
        if opt.multi_names:
            got = _names_after(argv, i)
            values.setdefault(opt.dest, []).extend(got)
            i += 1 + len(got)
            continue
        if opt.parse is None or (opt.glued and inline is None):
            _once(first, opt, key, None)
            given.setdefault(opt.dest, []).append(None)
            values[opt.dest], i = True, i + 1
            continue
        if inline is None:
            if i + 1 >= len(argv):
                raise ConfigError(f"{arg} needs a value (accepted: {arg} {opt.metavar})")
            inline, i = argv[i + 1], i + 2
        else:
            i += 1
        _once(first, opt, key, inline)
        given.setdefault(opt.dest, []).append(inline)
        try:
            values[opt.dest] = opt.parse(inline)
        except ConfigError as e:
            if "accepted" in str(e):
                raise
            raise ConfigError(f"{e} (accepted: {key} {opt.metavar})") from None
    return values, names


def _names_after(argv: list[str], i: int) -> list[str]:
    """-include / -exclude: the names after argv[i] up to the next option (at least one)."""
    got = []
    for a in argv[i + 1 :]:
        if a.startswith("-"):
            break
        got.append(a)
    if not got:
        raise ConfigError(
            f"{argv[i]} needs at least one benchmark name (accepted: {argv[i]} <b1> [b2 ...])"
        )
    return got


def _once(given: dict, opt: Option, key: str, raw: str | None) -> None:
    """An option given twice with different values: one of them would be silently ignored
    (two -load files, -msglog 3 … -msglog 5), so the command line is refused."""
    first = given.setdefault(opt.dest, (key, raw))
    if first[1] != raw:
        was, now = (f"{n} {v}" if v is not None else n for n, v in (first, (key, raw)))
        raise ConfigError(
            f"{key} given twice ({was!r}, then {now!r}): one would be silently ignored "
            f"(accepted: one {opt.names[0]}{' ' + opt.metavar if opt.metavar else ''})"
        )


C_INT_MAX = 2**31 - 1  # the options that C loops take as an int (native/*.c)


def integer(name: str, low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """An integer option, at least `low` and at most `high` when given (high C_INT_MAX: a C
    int of a native loop, which a larger value would wrap round to a negative one)."""

    def parse(s: str) -> int:
        try:
            v = int(s)
        except ValueError:
            raise ConfigError(f"{name} needs an integer, got {s!r}") from None
        if low is not None and v < low:
            raise ConfigError(f"{name} must be >= {low}, got {v}")
        if high is not None and v > high:
            what = " (a C int of the C loops)" if high == C_INT_MAX else ""
            raise ConfigError(f"{name} must be <= {high}{what}, got {v}")
        return v

    return parse


TAG_MAX = 200  # characters of a results store's tag (its column on every back end)


def store_tag(text: str) -> str:
    """A tag as the results store keeps it: ValueError for one it cannot, the same on SQLite
    and PostgreSQL (whose column holds TAG_MAX characters), before anything is measured."""
    if not text or len(text) > TAG_MAX or "," in text or not text.isprintable():
        raise ValueError(
            f"tag {text[:40]!r}{'…' if len(text) > 40 else ''} ({len(text)} characters) is not "
            f"a tag the store keeps (accepted: 1 to {TAG_MAX} printable characters, no comma)"
        )
    return text


def store_tags(text: str) -> str:
    """--tag T[,T]: each a store_tag (ConfigError otherwise); the text as given."""
    for t in filter(None, text.split(",")):
        try:
            store_tag(t)
        except ValueError as e:
            raise ConfigError(f"--tag: {e}") from None
    return text


def positive_float(name: str, zero_ok: bool = False) -> Callable[[str], float]:
    def parse(s: str) -> float:
        try:
            v = float(s)
        except ValueError:
            raise ConfigError(f"{name} needs a number, got {s!r}") from None
        if not math.isfinite(v) or v < 0 or (v == 0 and not zero_ok):
            what = "a non-negative number (0 = off)" if zero_ok else "a positive number"
            raise ConfigError(f"{name} must be {what}, got {s!r}")
        return v

    return parse


def choice(name: str, choices: tuple[str, ...]) -> Callable[[str], str]:
    """One of `choices`, case-insensitive, returned in lower case."""

    def parse(s: str) -> str:
        if s.lower() not in choices:
            raise ConfigError(f"{name} must be one of {'|'.join(choices)}, got {s!r}")
        return s.lower()

    return parse


BYTE_SUFFIXES = {"k": 2**10, "m": 2**20, "g": 2**30}


def byte_count(s: str, suffixes: str = "kmg") -> int | None:
    """A non-negative byte count with an optional binary suffix ("64k", "16m"), else None."""
    t = s.strip().lower()
    mult = BYTE_SUFFIXES[t[-1]] if t[-1:] and t[-1] in suffixes else 1
    digits = t[:-1] if mult != 1 else t
    return int(digits) * mult if digits.isdigit() else None


def byte_list(name: str) -> Callable[[str], tuple[int, ...]]:
    """A comma list of positive byte counts (k/m/g suffixes), ascending and distinct."""
    one = bytes_option(name, positive=True)

    def parse(s: str) -> tuple[int, ...]:
        vals = tuple(one(x.strip()) for x in s.split(","))
        if list(vals) != sorted(set(vals)):
            raise ConfigError(
                f"{name} {s!r}: accepted ascending distinct sizes, e.g. {name} 4k,64k"
            )
        return vals

    return parse


def bytes_option(name: str, positive: bool = False) -> Callable[[str], int]:
    """A byte-count option: k/m/g suffixes; `positive` refuses 0."""

    def parse(s: str) -> int:
        v = byte_count(s)
        if positive and (v is None or v < 1):
            raise ConfigError(
                f"{name} needs a positive byte count (e.g. 65536, 64k, 1m), got {s!r}"
            )
        if v is None:
            raise ConfigError(
                f"{name} {s!r}: accepted a byte count with optional k/m/g suffix (e.g. 16m)"
            )
        return v

    return parse


# ---------------------------------------------------------------- the core options' parsers

THREAD_LEVELS = ("single", "funneled", "serialized", "multiple")
POLICIES = ("dynamic", "multiple_np", "auto", "off")
ALLOC_KINDS = ("numpy", "mpi", "mmap")
HUGEPAGES = ("default", "on", "off")
ENGINES = ("native", "mpi4py", "both")


def parse_multi(s: str) -> int:
    if s not in ("0", "1"):
        raise ConfigError(
            "-multi takes 0 or 1 (-multi 0: one row per "
            f"size; -multi 1: one row per group), got {s!r}"
        )
    return int(s)


def parse_off_cache(s: str) -> tuple[float, int]:
    form = "accepted: -off_cache -1, -off_cache <cache MB>, -off_cache <cache MB>,<line bytes>"
    parts = s.split(",")
    if len(parts) > 2:
        raise ConfigError(f"-off_cache {s!r}: too many values; {form}")
    try:
        cs = float(parts[0])
    except ValueError:
        raise ConfigError(f"-off_cache {s!r}: {parts[0]!r} is not a number; {form}") from None
    if not math.isfinite(cs) or cs == 0:
        raise ConfigError(f"-off_cache {s!r}: cache size must be non-zero; {form}")
    if cs < 0:
        return (policy.CACHE_SIZE_MB, policy.CACHE_LINE_SIZE)
    line = policy.CACHE_LINE_SIZE
    if len(parts) == 2:
        try:
            line = int(parts[1])
        except ValueError:
            raise ConfigError(
                f"-off_cache {s!r}: line size {parts[1]!r} is not an integer; {form}"
            ) from None
        if line <= 0:
            raise ConfigError(f"-off_cache {s!r}: line size must be positive; {form}")
    return (cs, line)


def parse_iter(s: str) -> tuple[tuple[int, ...], str | None]:
    form = (
        "accepted: -iter <msgs>[,<overall MB>[,<msgs nonaggr>]][,<policy>], policy one of "
        + "|".join(POLICIES)
    )
    tokens = s.split(",")
    if not 1 <= len(tokens) <= 4 or any(t == "" for t in tokens):
        raise ConfigError(f"-iter {s!r}: {form}")
    ints: list[int] = []
    pol = None
    for tok in tokens:
        try:
            v = int(tok)
        except ValueError:
            if tok.lower() not in POLICIES:
                raise ConfigError(f"-iter {s!r}: unknown token {tok!r}; {form}") from None
            pol = tok.lower()
            continue
        if v <= 0:
            raise ConfigError(f"-iter {s!r}: counts must be positive; {form}")
        if v > C_INT_MAX:  # the C loops take repetitions as an int: it would wrap round
            raise ConfigError(f"-iter {s!r}: counts must be at most {C_INT_MAX}; {form}")
        ints.append(v)
    if len(ints) > 3:
        raise ConfigError(f"-iter {s!r}: at most three numbers; {form}")
    return tuple(ints), pol


def parse_msglog(s: str) -> tuple[int | None, int]:
    form = "accepted: -msglog <maxlog> or -msglog <minlog>:<maxlog>, 0 <= minlog < maxlog < 31"
    parts = s.split(":")
    try:
        if len(parts) == 1:
            lo, hi = None, int(parts[0])
        elif len(parts) == 2:
            lo, hi = int(parts[0]), int(parts[1])
        else:
            raise ValueError
    except ValueError:
        raise ConfigError(f"-msglog {s!r}: {form}") from None
    if hi <= 0 or hi >= 31 or (lo is not None and not 0 <= lo < hi):
        raise ConfigError(f"-msglog {s!r}: {form}")
    return lo, hi


def parse_map(s: str) -> tuple[int, int]:
    form = "accepted: -map <A>x<B> with positive integers, e.g. -map 2x2"
    parts = s.lower().split("x")
    try:
        a, b = (int(p) for p in parts)
    except ValueError:
        raise ConfigError(f"-map {s!r}: {form}") from None
    if a < 1 or b < 1:
        raise ConfigError(f"-map {s!r}: {form}")
    return a, b


def readable_file(name: str) -> Callable[[str], str]:
    def parse(s: str) -> str:
        if os.path.isdir(s):
            raise ConfigError(
                f"{name} {s!r}: is a directory (accepted: {name} <readable text file>)"
            )
        if os.path.exists(s) and not os.path.isfile(s):
            raise ConfigError(
                f"{name} {s!r}: not a regular file (accepted: {name} <readable text file>)"
            )
        if not os.path.isfile(s):
            raise ConfigError(f"{name} {s!r}: no such file (accepted: a readable text file)")
        if not os.access(s, os.R_OK):
            raise ConfigError(f"{name} {s!r}: file is not readable")
        return s

    return parse


def text(s: str) -> str:
    return s


# ---------------------------------------------------------------- option files (-input, -msglen)


def _entries(option: str, path: str, accepted: str) -> list[tuple[int, str]]:
    """(line number, first token) of every line of a text file that is not blank or a # comment."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(
            f"{option} {path!r}: cannot read "
            f"({e.strerror if isinstance(e, OSError) else 'not text'}) (accepted: {option} <text "
            f"file>, {accepted})"
        ) from None
    out = []
    for num, line in enumerate(lines, 1):
        s = line.strip()
        if s and not s.startswith("#"):
            out.append((num, s.split()[0]))
    return out


def read_name_file(path: str) -> list[str]:
    names = [token for _, token in _entries("-input", path, "one benchmark name per line")]
    if len(names) > 100:
        raise ConfigError(f"-input {path!r}: more than 100 benchmark names")
    if not names:  # IMB would run the whole default list: not what an empty file asks for
        raise ConfigError(
            f"-input {path!r}: no benchmark name in it (accepted: one benchmark name per line; "
            "# comments and blank lines are skipped)"
        )
    return names


def read_msglen_file(path: str) -> tuple[int, ...]:
    sizes = []
    for num, token in _entries(
        "-msglen", path, "one non-negative integer per line, optional k/m suffix"
    ):
        size = byte_count(token, suffixes="km")
        # IMB skips such lines; a run without the sizes asked for is not what was meant
        if size is None:
            raise ConfigError(
                f"-msglen {path}:{num}: {token!r} is not a byte count (accepted: one non-negative "
                "integer per line, optional k/m suffix; # comments)"
            )
        sizes.append(size)
    if not sizes:
        raise ConfigError(
            f"-msglen {path!r}: no valid message length (accepted: one non-negative integer per "
            "line, optional k/m suffix)"
        )
    return tuple(sizes)
