"""Pure measurement policy: process-count sequences, size lists, repetition counts.

Everything here is arithmetic from ../shared/spec/imb.md §3.1, §4, §5 and §6.3;
nothing imports MPI, so it is unit-tested without processes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# The compute loop Q's element kinds (commbench.compute; seed 002)
COMPUTE_KINDS = ("int", "float")

# IMB 2021's -data_type / -red_data_type: name -> (numpy type, bytes, MPI datatype name).
# The buffers hold the same bytes whatever the type (spec §6.2's float pattern); a
# reduction interprets them as its type, and so does its verifier.
DATA_TYPES = {
    "byte": ("uint8", 1, "BYTE"),
    "char": ("int8", 1, "CHAR"),
    "int": ("int32", 4, "INT"),
    "float": ("float32", 4, "FLOAT"),
    "double": ("float64", 8, "DOUBLE"),
}


@dataclass(frozen=True)
class Profile:
    """The constant set of a family (spec §16): 'standard' or 'io'."""

    name: str
    minmsglog: int
    maxmsglog: int
    msgspersample: int
    msgs_nonaggr: int
    overall_vol: int  # bytes
    secs_per_sample: float
    npmin: int
    target_cpu_secs: float


STANDARD = Profile("standard", 0, 22, 1000, 100, 40 * 2**20, 10.0, 2, 0.01)
IO = Profile("io", 0, 24, 50, 10, 16 * 2**20, 10.0, 1, 0.1)

N_BARR = 2
N_WARMUP = 2
CACHE_SIZE_MB = 8.0
CACHE_LINE_SIZE = 64
MAX_MEM_GB = 1.0
TOL = 1e-2
# A row's per-repetition estimate (--per-iteration percentiles, --sync-start window's IMB
# columns) rests on its valid repetitions: fewer than this many, or under a window fewer
# than this share of those run, and the row is marked "few repetitions" (text, file, compare).
MIN_VALID_REPETITIONS = 10
MIN_VALID_SHARE = 0.5
WARMUP_PERCENT = 10  # IMB 2021: n/10 warm-up runs before every size


def warmup_each_size(n: int) -> int:
    """IMB 2021.11's warm-up runs before a size measured with n repetitions: n/10,
    at least 1 when n > 1 (IMB_warm_up.c); 0 means none."""
    w = n // WARMUP_PERCENT
    return 1 if w == 0 and n > 1 else w


def np_sequence(world_size: int, npmin: int) -> list[int]:
    """NPmin, 2·NPmin, 4·NPmin, … , P (spec §3.1)."""
    np_ = max(1, min(world_size, npmin))
    seq = [np_]
    while np_ < world_size:
        np_ = min(2 * np_, world_size)
        seq.append(np_)
    return seq


def size_list(unit: int, minlog: int, maxlog: int) -> list[int]:
    """Default transfer sizes 0, X1, 2·X1, …, Xmax with unit rounding (spec §4)."""
    xmax = (2**maxlog // unit) * unit
    sizes = [0]
    if xmax == 0:  # 2^maxlog below the unit (e.g. -msglog 1 for floats): 0 only, not 0 twice
        return sizes
    x = math.ceil(max(unit, 2**minlog) / unit) * unit
    x = min(x, xmax)
    while True:
        sizes.append(x)
        if x >= xmax:
            break
        x = min(2 * x, xmax)
    return sizes


def user_size_list(lengths: tuple[int, ...], unit: int, maxlog: int) -> tuple[list[int], list[str]]:
    """-msglen sizes rounded up to the unit and truncated to Xmax; returns (sizes, notes)."""
    xmax = (2**maxlog // unit) * unit
    sizes, notes, rounded = [], [], []
    for length in lengths:
        x = math.ceil(length / unit) * unit
        if x != length:
            rounded.append(f"{length} to {x}")
        if x > xmax:
            notes.append(f"Attention, msg size {x} truncated to {xmax}")
            x = xmax
        if x in sizes:  # one row per size: a rounded or repeated length is measured once
            continue
        sizes.append(x)
    if rounded:
        notes.append(
            f"# -msglen: sizes are multiples of {unit} bytes here: rounded up {', '.join(rounded)}"
            + ("; each size measured once" if len(sizes) < len(lengths) else "")
        )
    elif len(sizes) < len(lengths):
        notes.append("# -msglen: repeated sizes measured once")
    return sizes, notes


def base_repetitions(x: int, cap: int, overall_vol: int, sync: bool = False) -> int:
    """n0 of spec §5.1."""
    if x == 0 or sync:
        return cap
    return max(1, min(cap, overall_vol // x))


def multiple_np_repetitions(x: int, np_: int, msgspersample: int, maxlog: int) -> int:
    """The multiple_np policy of spec §5.2."""
    big = 2**maxlog
    m = round(msgspersample * big / (np_ * max(x, 4) + big))
    return max(np_, m - (m % np_))


def dynamic_target(t1: float, secs: float, n0: int) -> int:
    """t_s of spec §5.3 step 5: repetitions that fit SECS at t1 seconds each."""
    if t1 > 1e-8:
        ts = math.floor(1 + secs / t1)
        if ts < 2**31:
            return ts
    return n0


def preliminary_repetitions(t1: float, msgspersample: int) -> int:
    """r of spec §5.3 step 3: repetitions for the ~1 s preparatory run."""
    if t1 < 1.0 / msgspersample:
        return msgspersample
    if t1 < 1.0:
        return max(1, round(1.0 / t1))
    return 1


def dynamic_repetitions(
    n0: int, ts: int, n_prev: int, x: int, history: list[tuple[int, int]] | None
) -> int:
    """Step 6 of spec §5.3.

    Without -msglen (history None) the count never increases with the size. With
    -msglen, `history` is [(len_i, n_i)] of the sizes measured before: a smaller
    earlier size bounds the count from above, a larger one from below.
    """
    if history is None:
        return max(1, min(n0, n_prev, ts))
    for length, n_i in history:
        ts = min(ts, n_i) if length < x else max(ts, n_i)
    return max(1, min(n0, ts))


def time_budget(secs: float, maxlog: int, minlog: int, n_lens: int) -> float:
    """Seconds one (benchmark, NP, mode) may take before later sizes time out (spec §5.4)."""
    return max(max(n_lens, maxlog - minlog) - 1, 1) * secs


@dataclass(frozen=True)
class Slots:
    """K slots of stride S bytes (spec §6.3); K == 1 means a plain buffer."""

    count: int
    stride: int


def off_cache_slots(length: int, n0: int, cache_mb: float, line: int) -> Slots:
    cache = int(cache_mb * 2**20)
    stride = (math.ceil(length / line) + 2) * line
    count = max(1, min(n0, math.ceil(2 * cache / stride)))
    return Slots(count, stride)


def block_split(x: int, np_: int, k: int, unit: int = 4) -> tuple[int, int]:
    """(offset, length) in bytes of rank k's share of X (spec §6.7)."""
    ne = math.ceil(x / unit)
    b, m = divmod(ne, np_)
    if k < m:
        first, last = k * (b + 1), k * (b + 1) + b
    else:
        first, last = k * b + m, k * b + m + b - 1
    pos1 = first * unit
    pos2 = min(last * unit + unit - 1, x - 1)
    return pos1, max(0, pos2 - pos1 + 1)


def even_counts(items: int, np_: int) -> list[int]:
    """Reduce_scatter counts: L = r·NP + s, rank i gets r+1 if i < s else r (spec §6.7)."""
    r, s = divmod(items, np_)
    return [r + 1 if i < s else r for i in range(np_)]


def reduce_scatter_items(x: int, width: int, p: int, each: bool) -> int:
    """The elements Reduce_scatter sums at X bytes: X/width split over the p ranks (spec
    §6.7), or X/width to each rank (`each`: IMB 2021.11, Methodology.reduce_scatter_each)."""
    return x // width * (p if each else 1)


def map_key(rank: int, rows: int, cols: int) -> int:
    """Split key of -map AxB (spec §3.4): ranks fill columns, groups are taken row by row."""
    return (rank % rows) * cols + (rank // rows)


def repetition_settings(values: dict, given: list[str], prof: Profile) -> tuple[int, int, int, str]:
    """(MSGSPERSAMPLE, OVERALL_VOL, MSGS_NONAGGR, policy) from -iter and -iter_policy; given:
    the options' dests in the order given (a -load file's first)."""
    msgs, vol, nonaggr = prof.msgspersample, prof.overall_vol, prof.msgs_nonaggr
    pol = "dynamic"
    # -iter and -iter_policy: the later on the command line wins (spec §13.1).
    order = [d for d in given if d in ("iter", "iter_policy")]
    if "iter" in values:
        ints, ipol = values["iter"]
        if len(ints) >= 1:
            msgs = ints[0]
        if len(ints) >= 2:
            vol = ints[1] * 2**20
        if len(ints) >= 3:
            nonaggr = ints[2]
        if ipol:
            pol = ipol
    if "iter_policy" in values:
        iter_sets_policy = "iter" in values and values["iter"][1] is not None
        if not iter_sets_policy or order[-1] == "iter_policy":
            pol = values["iter_policy"]
    return msgs, vol, nonaggr, pol


def summarised(ranks: int, up_to: int | None) -> bool:
    """--rank-detail: do records of this many ranks keep a summary of the ranks' times
    instead of every rank's (records.summarise; None: always every rank's)?"""
    return up_to is not None and ranks > up_to
