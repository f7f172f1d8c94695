"""OSU's options with OSU's spelling and meaning, and the checks of a run.

OMB 7.4's programs take single-letter options (getopt); commbench takes the
same letters with the same values, after `--suite osu` or before it:

  -m [MIN:]MAX   sizes MIN, 2 MIN, 4 MIN … <= MAX (OSU: -m 128, -m 2:128, -m 2:)
  -i ITER        timed iterations of every size (else each program's small/large counts)
  -x ITER        warm-up iterations of every size (likewise)
  -W SIZE        messages per window (bw, bibw …; default 64)
  -f             min/max/avg over ranks and iterations (collectives)
  -z[P,P…]       P50, P90 and P99 of the per-iteration values; -z50,99.9 → up to 5 of its own
  -c             validation: every round's buffers filled with a known pattern and verified
  -u ITER        with -c: untimed repetitions before the timed one of every validated round
  -T TYPE        mpi_char (default), mpi_int, mpi_float or all
  -p PAIRS       pairs of multi-pair tests; -t CALLS|RECV|SEND:RECV: MPI_Test calls
                 (nonblocking collectives) or threads/processes (latency_mt/_mp);
                 -w create|allocate|dynamic and -s pscw|fence|lock|flush|flush_local|lock_all:
                 window creation and synchronization (one-sided); -I: MPI session
                 initialization (init); -M BYTES: memory limit per process (collectives);
                 -N cart:D:R|graph:FILE: the neighborhood collectives' topology

An option is refused (exit 2) when no benchmark of the run takes it, naming the
OSU programs that do. commbench's general IMB options (-msglog, -iter, -check …)
are refused under osu: OSU's own say the same.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from commbench.option_types import C_INT_MAX, ConfigError, Option, choice, integer
from commbench.suites.base import FamilySettings

TYPES = {"mpi_char": 1, "mpi_int": 4, "mpi_float": 4}  # OSU's -T and the bytes of one element
WINDOWS = ("create", "allocate", "dynamic")
SYNCS = ("pscw", "fence", "lock", "flush", "flush_local", "lock_all")
TAIL = (50, 90, 99)  # OSU's -z without a list: P50, P90, P99
MEM_DEFAULT, MEM_FLOOR = 512 << 20, 1 << 20  # OSU's -M default and its lower limit
VALIDATION_WARMUP, VALIDATION_WARMUP_MAX = 5, 10  # OSU's -u default and limit
# OMB 7.4's counts are C ints (-i 2147483648: "Invalid Number of Iterations"), as the C loops'
INT_MAX = C_INT_MAX


def count(letter: str, low: int, what: str):
    """A count option (-i, -x, -W, -M …) from low to INT_MAX: past it OMB 7.4 refuses the
    value or wraps it (atoi: -x 4294967296 runs 0 warm-up iterations), and the C loops'
    int would wrap it too; refused rather than run as another number than recorded."""
    base = integer(f"-{letter}", low)

    def parse(v: str) -> int:
        n = base(v)
        if n > INT_MAX:
            raise ConfigError(
                f"-{letter} {n}: at most {INT_MAX} {what}, the C int that OMB 7.4 and commbench's "
                f"C loops count in (accepted: -{letter} {low} … -{letter} {INT_MAX})"
            )
        return n

    return parse


def message_size(s: str) -> tuple[int | None, int | None]:
    """OSU's -m [MIN:]MAX: '128', '2:128', '2:' -> (min or None, max or None)."""
    lo, sep, hi = s.partition(":")
    try:
        vals = (int(lo) if sep else None, int(hi) if hi else None) if sep else (None, int(lo))
    except ValueError:
        vals = None
    if vals is None or any(v is not None and v < 0 for v in vals) or vals == (None, None):
        raise ConfigError(
            f"-m {s!r}: accepted -m [MIN:]MAX in bytes (e.g. -m 128, -m 2:128, -m 2:)"
        )
    if any(v is not None and v > INT_MAX for v in vals):
        raise ConfigError(
            f"-m {s}: sizes past {INT_MAX} bytes are not measured: OMB 7.4's sizes and counts are "
            "C ints, as commbench's C loops' (osu_latency -m 2147483648:4294967296 prints an "
            "empty table and -m 1:4294967296 stops at 1 GiB, without a word) (accepted: MIN and "
            f"MAX <= {INT_MAX})"
        )
    return vals


T_FORMS = (
    "-t CALLS for the nonblocking collectives (MPI_Test calls, 0 or more), -t RECV or -t "
    "SEND:RECV for latency_mt and latency_mp (threads or processes, each 1 to 127)"
)


def calls(s: str) -> str:
    """-t N or N:M (digits; kept as given): what each program takes of it is its own check
    (nonblocking.test_calls, pt2pt_variants.check_t), which names that program's form."""
    parts = s.split(":")
    if (
        len(parts) > 2
        or not all(x.isdigit() for x in parts)
        or any(int(x) > INT_MAX for x in parts)
    ):
        raise ConfigError(f"-t {s!r}: not a count nor a pair of counts (accepted: {T_FORMS})")
    return s


def tail_list(s: str) -> tuple[int, ...]:
    """OSU's -z<list> (glued: -z50,75,99): up to 5 percentiles (OMB 7.4 keeps 5 and writes past its
    array with more), each 1-100 (OSU takes 0 and reads before its array: its element is
    floor(n·P/100) - 1)."""
    parts = s.split(",")
    if not (1 <= len(parts) <= 5) or not all(x.isdigit() and 1 <= int(x) <= 100 for x in parts):
        raise ConfigError(
            f"-z{s}: accepted -z alone (P50, P90, P99) or -z<P1,P2,…> glued to the letter, up to 5 "
            "whole percentiles 1-100 (e.g. -z50,75,99)"
        )
    return tuple(int(x) for x in parts)


def neighborhood(s: str) -> tuple:
    """OSU's -N cart:<dims>:<radius> (each >= 1) or graph:<file> of "source,destination" lines
    ('#' lines skipped), read here once: ("cart", D, R) or ("graph", file, ((src, dst), …))."""
    kind, _, rest = s.partition(":")
    if kind == "cart":
        parts = rest.split(":")
        if len(parts) == 2 and all(x.isdigit() and int(x) >= 1 for x in parts):
            return ("cart", int(parts[0]), int(parts[1]))
    elif kind == "graph" and rest:
        try:
            with open(rest, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError as e:
            raise ConfigError(f"-N {s}: cannot read {rest!r} ({e.strerror})") from None
        edges = []
        for n, line in enumerate(lines, 1):
            if line.startswith("#") or not line.strip():
                continue
            pair = [x.strip() for x in line.split(",")]
            if len(pair) != 2 or not all(x.isdigit() for x in pair):
                raise ConfigError(
                    f"-N {s}: line {n} {line!r} is not 'source,destination' (two ranks >= 0)"
                )
            edges.append((int(pair[0]), int(pair[1])))
        return ("graph", rest, tuple(edges))
    raise ConfigError(
        f"-N {s!r}: accepted -N cart:<dims>:<radius> (e.g. cart:1:1, OSU's default; cart:2:1) or "
        "-N graph:<file> of 'source,destination' lines"
    )


def validation_warmup(v: str) -> int:
    n = integer("-u", 0)(v)
    if n > VALIDATION_WARMUP_MAX:
        raise ConfigError(
            f"-u {n}: at most {VALIDATION_WARMUP_MAX} (OMB 7.4's limit; accepted: -u 0 … -u 10)"
        )
    return n


def no_log(s: str) -> bool:
    """-c glued to a value: OSU's -clog:<dir> (a file per rank of every wrong element),
    not written here."""
    raise ConfigError(
        f"-c{s}: OSU's validation log (-clog:<dir>, a file per rank listing every wrong element) "
        "is not written by commbench; each row says Pass or Fail and its record holds the count "
        "of wrong bytes (defects) (accepted: -c)"
    )


def type_choice(s: str) -> str:
    return choice("-T", (*TYPES, "all"))(s)


# (names, dest, metavar, help, parse); the letter is the option without its dash.
OPTIONS = (
    Option(
        ("-m",),
        "osu_message_size",
        "[MIN:]MAX",
        "osu: message sizes MIN, 2 MIN … MAX bytes (OSU's -m)",
        message_size,
    ),
    Option(
        ("-i",),
        "osu_iterations",
        "<ITER>",
        "osu: timed iterations of every size (OSU's -i)",
        count("i", 1, "iterations"),
    ),
    Option(
        ("-x",),
        "osu_warmup",
        "<ITER>",
        "osu: warm-up iterations of every size (OSU's -x)",
        count("x", 0, "warm-up iterations"),
    ),
    Option(
        ("-W",),
        "osu_window",
        "<SIZE>",
        "osu: messages per window (bw, bibw …; default 64)",
        count("W", 1, "messages per window"),
    ),
    Option(
        ("-f",), "osu_full", "", "osu: full statistics, min/max/avg and iterations (collectives)"
    ),
    Option(
        ("-z",),
        "osu_tail",
        "[P,P…]",
        "osu: P50, P90, P99 of the per-iteration values, or -z<list> "
        "glued: up to 5 percentiles (OSU's -z)",
        tail_list,
        glued=True,
    ),
    Option(
        ("-c",),
        "osu_validate",
        "",
        "osu: validation of the received data (OSU's -c; exit 1 on a failure)",
        no_log,
        glued=True,
    ),
    Option(
        ("-u",),
        "osu_validation_warmup",
        "<ITER>",
        "osu: with -c, untimed repetitions before the timed one "
        "of every validated round (OSU's -u; default 5, at most 10)",
        validation_warmup,
    ),
    Option(
        ("-T",),
        "osu_type",
        "<TYPE>",
        "osu: mpi_char (default) | mpi_int | mpi_float | all",
        type_choice,
    ),
    Option(
        ("-p",),
        "osu_pairs",
        "<PAIRS>",
        "osu: pairs of multi-pair tests (mbw_mr …)",
        count("p", 1, "pairs"),
    ),
    Option(
        ("-t",),
        "osu_test_calls",
        "<CALLS|RECV|SEND:RECV>",
        "osu: MPI_Test calls (nonblocking collectives) "
        "or sender:receiver threads/processes (latency_mt, latency_mp)",
        calls,
    ),
    Option(
        ("-w",),
        "osu_win",
        "<WIN>",
        "osu: window creation create|allocate|dynamic (one-sided)",
        choice("-w", WINDOWS),
    ),
    Option(
        ("-s",),
        "osu_sync",
        "<SYNC>",
        "osu: synchronization " + "|".join(SYNCS) + " (one-sided)",
        choice("-s", SYNCS),
    ),
    Option(("-I",), "osu_session", "", "osu: MPI session initialization (init)"),
    Option(
        ("-N",),
        "osu_nhbr",
        "cart:<D>:<R>|graph:<file>",
        "osu: the neighborhood collectives' topology (default cart:1:1)",
        neighborhood,
    ),
    Option(
        ("-M",),
        "osu_mem_limit",
        "<BYTES>",
        "osu: memory limit per process (collectives; default 536870912)",
        integer("-M", 1),
    ),
)
# OMB 7.4's other options (their -h, tests/data/osu/help.txt): parsed with OSU's arity and
# refused with the reason, never taken as an unknown word or ignored.
NOT_OFFERED = {
    "b": (
        "<NUM>",
        "a buffer per message of a window (-b) is not offered: the windows send one buffer, OSU's "
        "default",
    ),
    "G": (
        "<tty,png,pdf>",
        "OSU's graphs (-G) are not drawn: `commbench plot` draws a results file, whose records "
        "hold -z's percentiles",
    ),
    "D": (
        "<TYPE:ARGS>",
        "derived datatypes (-D) are not offered; -T mpi_char|mpi_int|mpi_float|all are",
    ),
    "P": ("<EVENTS:PATH>", "PAPI counters (-P) are not read by commbench"),
    "a": ("<SIZE>", "-a sizes GPU arrays; commbench's osu family moves host memory only"),
    "d": (
        "<ACCEL>",
        "accelerator buffers (-d) are not offered; commbench's osu family moves host memory only",
    ),
    "k": (
        "<ROOT>",
        "another root than rank 0 (-k) is not offered: the roots are rank 0, OSU's default",
    ),
    "R": ("<0|1>", "mbw_mr's -R is not offered: its rows always carry Messages/s, OSU's default"),
    "l": (
        "",
        (
            "MPI_IN_PLACE (-l) is not offered: the calls use separate send and receive buffers, "
            "OSU's default"
        ),
    ),
    "V": ("", "mbw_mr's varied windows (-V) are not offered: -W sets one window size"),
    "v": (
        "",
        (
            "OSU's -v prints its version: commbench's osu family follows OMB 7.4, and every "
            "results file records commbench's own version"
        ),
    ),
}


def refuse(letter: str):
    def parse(_value: str):
        raise ConfigError(f"-{letter}: {NOT_OFFERED[letter][1]} (accepted: leave out -{letter})")

    return parse


OPTIONS += tuple(
    Option(
        (f"-{k}",),
        f"osu_not_{k}",
        meta,
        f"osu: OSU's -{k}, refused: {why.split(':')[0]}",
        refuse(k) if meta else None,
    )
    for k, (meta, why) in NOT_OFFERED.items()
)
LETTER = {o.dest: o.names[0][1:] for o in OPTIONS}
# Which OMB 7.4 programs take each option (their -h, tests/data/osu/help.txt), for the messages.
SCOPE = {
    "W": "bw, bibw, mbw_mr, put_bw, get_bw, put_bibw and their _persistent forms",
    "f": "the blocking, nonblocking, persistent and neighborhood collectives",
    "z": "every program but init",
    "c": "point-to-point, the collectives, and acc_latency, fop_latency, cas_latency",
    "T": "point-to-point, the collectives, and acc_latency, fop_latency, cas_latency",
    "p": "mbw_mr",
    "t": "the nonblocking collectives; latency_mt, latency_mp",
    "w": "the one-sided programs",
    "s": "the one-sided programs",
    "I": (
        "init (commbench starts MPI with MPI_Init_thread: "
        "it times no session initialization elsewhere)"
    ),
    "M": "the collectives",
    "u": "point-to-point and the blocking and persistent collectives, with -c",
    "N": "the neighborhood collectives",
}


@dataclass(frozen=True)
class OsuSettings(FamilySettings):
    prefix: ClassVar[str] = "osu_"
    message_size: tuple = ()  # (min or None, max or None); () : each benchmark's defaults
    iterations: int | None = None
    warmup: int | None = None
    window: int | None = None
    full: bool = False
    tail: bool | tuple = False  # -z: True; -z<list>: its percentiles
    validate: bool = False
    type: str = "mpi_char"
    pairs: int | None = None
    test_calls: str | None = None
    win: str | None = None
    sync: str | None = None
    session: bool = False
    mem_limit: int | None = None
    validation_warmup: int | None = (
        None  # -u: repetitions before the timed one of a validated round
    )
    nhbr: tuple | None = None  # -N: ("cart", D, R) or ("graph", file, edges); None: cart:1:1
    buffers: str | None = None  # OMB's buffer operands after the names ("D D"; checks.operands)

    @property
    def percentiles(self) -> tuple[int, ...]:
        return (
            tuple(self.tail) if isinstance(self.tail, (tuple, list)) else TAIL if self.tail else ()
        )

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(TYPES) if self.type == "all" else (self.type,)


def mem_limit(s: OsuSettings) -> int:
    """-M in bytes per process, as the binaries take it (default 512 MiB, at least 1 MiB)."""
    return max(s.mem_limit if s.mem_limit is not None else MEM_DEFAULT, MEM_FLOOR)


def sizes(bench, s: OsuSettings, dtype: str = "mpi_char", nprocs: int | None = None) -> list[int]:
    """OSU's sizes of a benchmark: MIN, 2 MIN, 4 MIN … <= MAX (MIN at least 1: OSU never
    measures 0 bytes), leaving out those smaller than one element of the type; at nprocs
    processes no more than the benchmark's limit (-M) allows."""
    if bench.sizes is not None:
        return bench.sizes(s, dtype)
    lo, hi = s.message_size or (None, None)
    d = bench.defaults
    size, top = max(lo if lo is not None else d.min_size, 1), hi if hi is not None else d.max_size
    if nprocs and bench.limit is not None:
        top = min(top, bench.limit(s, nprocs))
    out = []
    while size <= top:
        if size >= TYPES[dtype]:
            out.append(size)
        size *= 2
    return out


def benchmarks_of(cfg) -> list:
    from commbench.suites.osu import BY_NAME

    return [BY_NAME[n] for n in cfg.benchmarks]


def configure(cfg):
    """-c is the run's check mode (records say checked/failed; exit 1 on a failure); the
    run's benchmarks go to params for the memory pre-flight, which needs the process count."""
    s = OsuSettings.of(cfg.params)
    return replace(cfg, check=s.validate, params={**cfg.params, "osu_run": list(cfg.benchmarks)})
