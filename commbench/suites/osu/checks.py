"""The osu family's checks before anything runs: OMB's buffer operands (`latency D D`),
the options against the run's programs and process count (validate), and the memory
pre-flight that counts every array a run allocates (memory).

Buffer operands: OMB 7.4 reads two letters after its options for the send and the
receive buffer, H (host), D (device) or M (managed memory), as ReFrame's hpctestlib OSU
tests pass them (`osu_latency -m 8 -x 10 -i 100 D D`). The CPU build of OMB 7.4 here
(../shared/peers/osu) runs with any of them, for every program, prints nothing of them
and moves host memory; its -d (the accelerator) is "Invalid option". So commbench takes
H, D and M after the benchmark names of any osu program, refuses none of them (it
refuses -d, as that build), records them (config.params.osu_buffers, each record's
extra.buffer_operands) and prints where the buffers were, in the line OMB's
accelerator builds print before the column line ("# Send Buffer on HOST (H) and
Receive Buffer on HOST (H)"): host memory, whatever the letters say. Unlike OMB, whose
getopt stops at its first operand (`osu_latency D D -c` runs without -c), commbench
reads the options wherever they stand, as it reads them around the benchmark names.
"""

from __future__ import annotations

from dataclasses import replace

from commbench.option_types import ConfigError
from commbench.suites.osu.settings import (
    INT_MAX,
    LETTER,
    MEM_DEFAULT,
    NOT_OFFERED,
    SCOPE,
    OsuSettings,
    benchmarks_of,
    sizes,
)
from commbench.suites.osu.spec import unfit

LETTERS = {
    "H": "HOST (H)",
    "D": "DEVICE (D)",
    "M": "MANAGED (M)",
}  # OMB's buffer operands, as it prints them
USED = "HOST (H)"  # where commbench's (and the CPU build's) buffers are, whatever the letters
MOST_PROCS = 4096  # how far a refusal looks for a process count that runs


def operands(words: list[str]) -> tuple[list[str], dict]:
    """(the benchmark names among the bare words, {"osu_buffers": "D D"} when OMB's buffer
    letters are among them): at most two, the send and the receive buffer, in that order."""
    letters = [w for w in words if w in LETTERS]
    if len(letters) > 2:
        raise ConfigError(
            f"{' '.join(letters)}: OMB takes two buffer operands, the send and the receive "
            "buffer's (H host, D device, M managed) (accepted: e.g. latency D D, or none)"
        )
    return [w for w in words if w not in LETTERS], (
        {"osu_buffers": " ".join(letters)} if letters else {}
    )


def buffer_line(given: str | None) -> str | None:
    """OMB's accelerator builds' line for the operands, saying where commbench's buffers are."""
    return f"Send Buffer on {USED} and Receive Buffer on {USED}" if given else None


def suggest(benches, s: OsuSettings, size: int) -> str:
    """-n P: the smallest process count at which one of the run's programs runs (OSU's rules)."""
    for p in range(2, MOST_PROCS + 1):
        if p != size and any(unfit(b, s, p) is None for b in benches):
            return (
                f"-n {p}, the smallest process count at which "
                f"{', '.join(b.name for b in benches)} can run"
            )
    return "a process count one of them runs at"


def validate(cfg, size: int) -> None:
    """Options no benchmark of the run takes, process counts, empty size ranges, counts past a
    C int: refused (exit 2), each naming the option that causes it."""
    benches = benchmarks_of(cfg)
    names = ", ".join(b.name for b in benches)
    for k, (_meta, why) in NOT_OFFERED.items():  # the flags among them (no value to parse)
        if cfg.params.get(f"osu_not_{k}") is not None:
            raise ConfigError(f"-{k}: {why} (accepted: leave out -{k})")
    for dest in cfg.params:
        letter = LETTER.get(dest)
        if letter and not any(letter in b.takes for b in benches):
            raise ConfigError(
                f"-{letter}: none of the benchmarks of this run ({names}) takes it; in OMB 7.4 it "
                f"belongs to {SCOPE.get(letter, 'other programs')} (accepted: no -{letter})"
            )
    s = OsuSettings.of(cfg.params)
    why = {b.name: w for b in benches if (w := unfit(b, s, size))}
    if len(why) == len(benches):  # the others print OSU's words as their row
        said = "; ".join(f"{n}: {w}" for n, w in why.items())
        raise ConfigError(
            f"nothing to measure with {size} processes ({said}) (OSU's rules; accepted: "
            f"{suggest(benches, s, size)})"
        )
    if s.validation_warmup is not None and not s.validate:
        raise ConfigError(
            "-u: OSU's validation warm-up (untimed repetitions before each validated round) "
            "applies with -c only (accepted: -c -u N, or no -u)"
        )
    for b in benches:
        if b.validate is not None:
            b.validate(s)
        if b.world is not None:
            b.world(s, size)
        if not unfit(b, s, size):
            sized(b, s, size)


def sized(b, s: OsuSettings, p: int) -> None:
    """Refuse a range that leaves b no size at p processes, naming -m or -M (whichever
    emptied it), and sizes whose P blocks' displacements pass a C int."""
    lo, hi = s.message_size or (None, None)
    m = (
        f"-m {'' if lo is None else f'{lo}:'}{'' if hi is None else hi}"
        if s.message_size
        else "the default sizes"
    )
    if s.message_size and hi is None:
        m += f" (up to {b.name}'s default {b.defaults.max_size})"
    unlimited = {t: sizes(b, s, t) for t in s.types}
    if not any(unlimited.values()):
        raise ConfigError(
            f"{m}: no message size of {b.name} in that range (accepted: MIN <= MAX, MAX >= 1 and "
            f">= the -T type's size; {b.name}'s default range is "
            f"{b.defaults.min_size}:{b.defaults.max_size})"
        )
    got = {t: sizes(b, s, t, p) for t in s.types}
    if not any(got.values()):  # the memory limit (OSU's check_mem_limit) cut every size away
        least = min(x[0] for x in unlimited.values() if x)
        need = next(
            (k for k in (least, least * p) if b.limit(replace(s, mem_limit=k), p) >= least),
            least * p,
        )
        given = f"-M {s.mem_limit}" if s.mem_limit is not None else f"-M's default {MEM_DEFAULT}"
        raise ConfigError(
            f"{given}: {b.name} measures at most {b.limit(s, p)} bytes at {p} processes under it "
            f"(the limit{' / P' if need > least else ''}, as OMB 7.4), which leaves no size of {m} "
            f"(accepted: -M {need} or more, or sizes up to {b.limit(s, p)})"
        )
    top = max((max(xs) for xs in got.values() if xs), default=0)
    k = max(b.extent(p, s)) if b.extent is not None else 1
    if (k - 1) * top > INT_MAX:
        raise ConfigError(
            f"{b.name} at {top} bytes and {p} processes: its {k} blocks' displacements reach "
            f"{(k - 1) * top} bytes, past the C int ({INT_MAX}) of MPI's displacements and of the "
            f"C loops (accepted: sizes up to {INT_MAX // (k - 1)} bytes, -m or -M)"
        )


# The memory pre-flight: bytes per process of every array, as the driver allocates them.
# Per-iteration bytes were measured (rank 0's peak RSS at -i 202000 less at -i 2000, -z, 2 ranks):
# 61 latency, 60 put_latency, 61 latency_mt, 94 bw, 107 multi_lat, 98 allreduce and iallreduce
# (every rank's values gathered: 49 a value); tests/mpi/test_osu_limits.py keeps them under these.
TIME = 8  # a float64 per timed iteration, on every rank (driver.measure's `times`)
# rank 0 per value of its row: Python floats in lists, numpy scalars, sorted copies
# (spec.latency_row …)
ROW = 112
GATHER = 16  # rank 0 per gathered value: the pickled arrays and their copies (comm.gather)
REQUEST = 128  # a request of a window (the C array, mpi4py's Request objects and their list)
# -c: bytes of temporaries per byte of the buffers (the patterns, the expected data, compares)
CHECK = 3


def demand(b, s: OsuSettings, dtype: str, p: int) -> tuple[int, str]:
    """(bytes, what) that one program needs at once on its busiest rank at p processes."""
    xs = sizes(b, s, dtype, p)
    if not xs:
        return 0, ""
    top = max(xs)
    ks, kr = b.extent(p, s) if b.extent is not None else (1, 1)
    window = s.window or b.defaults.window
    bufs = (max(b.buffers, ks + kr) + b.per_window * (window if "W" in b.takes else 0)) * top
    n = max(b.defaults.counts(x, s.iterations, s.warmup)[0] for x in xs)
    rows = n * (p if b.gather else 1)
    times = TIME * n + (ROW + (GATHER if b.gather else 0)) * rows
    reqs = 2 * REQUEST * window if "W" in b.takes else 0
    check = CHECK * (ks + kr) * top if s.validate else 0
    what = (
        f"{b.name} at {top} bytes (-m): buffers {bufs}"
        + (f" ({ks} + {kr} blocks)" if b.extent else "")
        + (f" (-W {window})" if b.per_window else "")
        + (
            f", per-iteration times of {n} iterations "
            f"(-i){f' x {p} ranks' if b.gather else ''} {times}"
        )
        + (f", {2 * window} requests (-W) {reqs}" if reqs else "")
        + (f", -c's data {check}" if check else "")
    )
    return bufs + times + reqs + check, what


def memory(params: dict, p: int) -> tuple[int, str]:
    """Bytes per process (its busiest rank, rank 0): for the program and type that need most,
    the buffers of the largest size (P blocks, the neighbourhoods' degree, one-sided windows of
    -W sizes), the per-iteration times and their row's lists, -W's requests, -c's data."""
    from commbench.suites.osu import BY_NAME

    s, need, what = OsuSettings.of(params), 0, "nothing"
    for b in (BY_NAME[n] for n in params.get("osu_run", ())):
        for t in s.types:
            n, w = demand(b, s, t, p)
            if n > need:
                need, what = n, w
    return need, f"osu: {what}; {need} bytes per process"
