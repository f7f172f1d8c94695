"""OSU's options with OSU's spelling and meaning, and the checks of a run.

OMB 7.4's programs take single-letter options (getopt); commbench takes the
same letters with the same values, after `--suite osu` or before it:

  -m [MIN:]MAX   sizes MIN, 2 MIN, 4 MIN … <= MAX (OSU: -m 128, -m 2:128, -m 2:)
  -i ITER        timed iterations of every size (else each program's small/large counts)
  -x ITER        warm-up iterations of every size (likewise)
  -W SIZE        messages per window (bw, bibw …; default 64)
  -f             min/max/avg over ranks and iterations (collectives)
  -z             P50, P90 and P99 of the per-iteration values (OSU's -z<list> is not taken)
  -c             validation: buffers filled with a known pattern and verified
  -T TYPE        mpi_char (default), mpi_int, mpi_float or all
  -p PAIRS       pairs of multi-pair tests; -t CALLS|SEND:[RECV]: MPI_Test calls
                 (nonblocking collectives) or threads/processes (latency_mt/_mp);
                 -w create|allocate|dynamic and -s pscw|fence|lock|flush|flush_local|lock_all:
                 window creation and synchronization (one-sided); -I: MPI session
                 initialization (init); -M BYTES: memory limit per process (collectives)

An option is refused (exit 2) when no benchmark of the run takes it, naming the
OSU programs that do. commbench's general IMB options (-msglog, -iter, -check …)
are refused under osu: OSU's own say the same.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from commbench.options import ConfigError, Option, choice, integer
from commbench.suites.base import FamilySettings

TYPES = {"mpi_char": 1, "mpi_int": 4, "mpi_float": 4}  # OSU's -T and the bytes of one element
WINDOWS = ("create", "allocate", "dynamic")
SYNCS = ("pscw", "fence", "lock", "flush", "flush_local", "lock_all")
TAIL = (50, 90, 99)  # OSU's -z without a list: P50, P90, P99


def message_size(s: str) -> tuple[int | None, int | None]:
    """OSU's -m [MIN:]MAX: '128', '2:128', '2:' -> (min or None, max or None)."""
    lo, sep, hi = s.partition(":")
    try:
        vals = (int(lo) if sep else None, int(hi) if hi else None) if sep else (None, int(lo))
    except ValueError:
        vals = None
    if vals is None or any(v is not None and v < 0 for v in vals) or vals == (None, None):
        raise ConfigError(f"-m {s!r}: accepted -m [MIN:]MAX in bytes (e.g. -m 128, -m 2:128, -m 2:)")
    return vals


def calls(s: str) -> str:
    """-t CALLS or SEND:[RECV], each a count >= 1; kept as given."""
    parts = s.split(":")
    if len(parts) > 2 or not all(p.isdigit() and int(p) >= 1 for p in parts if p) or not parts[0]:
        raise ConfigError(f"-t {s!r}: accepted -t CALLS or -t SEND:[RECV], counts >= 1 (e.g. -t 100, -t 4:6)")
    return s


def type_choice(s: str) -> str:
    return choice("-T", (*TYPES, "all"))(s)


# (names, dest, metavar, help, parse); the letter is the option without its dash.
OPTIONS = (
    Option(("-m",), "osu_message_size", "[MIN:]MAX", "osu: message sizes MIN, 2 MIN … MAX bytes (OSU's -m)",
           message_size),
    Option(("-i",), "osu_iterations", "<ITER>", "osu: timed iterations of every size (OSU's -i)",
           integer("-i", 1)),
    Option(("-x",), "osu_warmup", "<ITER>", "osu: warm-up iterations of every size (OSU's -x)", integer("-x", 0)),
    Option(("-W",), "osu_window", "<SIZE>", "osu: messages per window (bw, bibw …; default 64)", integer("-W", 1)),
    Option(("-f",), "osu_full", "", "osu: full statistics, min/max/avg and iterations (collectives)"),
    Option(("-z",), "osu_tail", "", "osu: P50, P90, P99 of the per-iteration values (OSU's -z)"),
    Option(("-c",), "osu_validate", "", "osu: validation of the received data (OSU's -c; exit 1 on a failure)"),
    Option(("-T",), "osu_type", "<TYPE>", "osu: mpi_char (default) | mpi_int | mpi_float | all", type_choice),
    Option(("-p",), "osu_pairs", "<PAIRS>", "osu: pairs of multi-pair tests (mbw_mr …)", integer("-p", 1)),
    Option(("-t",), "osu_test_calls", "<CALLS|SEND:[RECV]>", "osu: MPI_Test calls (nonblocking collectives) "
           "or sender:receiver threads/processes (latency_mt, latency_mp)", calls),
    Option(("-w",), "osu_win", "<WIN>", "osu: window creation create|allocate|dynamic (one-sided)",
           choice("-w", WINDOWS)),
    Option(("-s",), "osu_sync", "<SYNC>", "osu: synchronization " + "|".join(SYNCS) + " (one-sided)",
           choice("-s", SYNCS)),
    Option(("-I",), "osu_session", "", "osu: MPI session initialization (init)"),
    Option(("-M",), "osu_mem_limit", "<BYTES>", "osu: memory limit per process (collectives; default 536870912)",
           integer("-M", 1)),
)
LETTER = {o.dest: o.names[0][1:] for o in OPTIONS}
# Which OMB 7.4 programs take each option (their -h, tests/data/osu/help.txt), for the messages.
SCOPE = {
    "W": "bw, bibw, mbw_mr, put_bw, get_bw, put_bibw and their _persistent forms",
    "f": "the blocking, nonblocking, persistent and neighborhood collectives",
    "z": "every program but init",
    "c": "point-to-point, the collectives, and acc_latency, fop_latency, cas_latency",
    "T": "point-to-point, the collectives, and acc_latency, fop_latency, cas_latency",
    "p": "mbw_mr", "t": "the nonblocking collectives; latency_mt, latency_mp",
    "w": "the one-sided programs", "s": "the one-sided programs",
    "I": "init (commbench starts MPI with MPI_Init_thread: it times no session initialization elsewhere)",
    "M": "the collectives",
}


@dataclass(frozen=True)
class Settings(FamilySettings):
    prefix: ClassVar[str] = "osu_"
    message_size: tuple = ()  # (min or None, max or None); () : each benchmark's defaults
    iterations: int | None = None
    warmup: int | None = None
    window: int | None = None
    full: bool = False
    tail: bool = False
    validate: bool = False
    type: str = "mpi_char"
    pairs: int | None = None
    test_calls: str | None = None
    win: str | None = None
    sync: str | None = None
    session: bool = False
    mem_limit: int | None = None

    @property
    def percentiles(self) -> tuple[int, ...]:
        return TAIL if self.tail else ()

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(TYPES) if self.type == "all" else (self.type,)


def sizes(bench, s: Settings, dtype: str = "mpi_char", nprocs: int | None = None) -> list[int]:
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
    largest buffer bytes per process go to params for the memory pre-flight."""
    s = Settings.of(cfg.params)
    need = max((b.buffers * max(sizes(b, s, t) or [0]) for b in benchmarks_of(cfg) for t in s.types), default=0)
    return replace(cfg, check=s.validate, params={**cfg.params, "osu_buffer_bytes": need})


def validate(cfg, size: int) -> None:
    """Options no benchmark of the run takes, process counts, empty size ranges: refused."""
    benches = benchmarks_of(cfg)
    names = ", ".join(b.name for b in benches)
    for dest in cfg.params:
        letter = LETTER.get(dest)
        if letter and not any(letter in b.takes for b in benches):
            raise ConfigError(f"-{letter}: none of the benchmarks of this run ({names}) takes it; in OMB 7.4 it "
                              f"belongs to {SCOPE.get(letter, 'other programs')} (accepted: no -{letter})")
    s = Settings.of(cfg.params)
    why = {b.name: b.nprocs(size) for b in benches if b.nprocs(size)}
    if len(why) == len(benches):  # the others print OSU's words as their row
        said = "; ".join(f"{n}: {w}" for n, w in why.items())
        raise ConfigError(f"nothing to measure with {size} processes ({said}) (OSU's rules; accepted: a process "
                          f"count one of them runs at, e.g. -n 2)")
    for b in benches:
        if b.validate is not None:
            b.validate(s)
        if b.world is not None:
            b.world(s, size)
        if not any(sizes(b, s, t, size) for t in s.types):
            lo, hi = s.message_size
            raise ConfigError(f"-m {'' if lo is None else f'{lo}:'}{'' if hi is None else hi}: no message size of "
                              f"{b.name} in that range (accepted: MIN <= MAX, MAX >= 1 and >= the -T type's "
                              f"size; {b.name}'s default range is {b.defaults.min_size}:{b.defaults.max_size})")


def memory(params: dict, p: int) -> tuple[int, str]:
    """Bytes per process: the buffers of the largest size of the run's benchmarks."""
    need = params.get("osu_buffer_bytes", 0)
    return need, f"osu: the send and receive buffers of the largest size, {need} bytes in all"
