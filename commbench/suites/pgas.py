"""The PGAS microbenchmark suite (seed 004, University of Houston HPCTools).

Every latency and bandwidth test runs on communicating pairs, all pairs at
once: by default {i, N/2+i}; with a partner offset Q the seed's other rule
(see `partners`). Rows sweep the message size M over the normal size list
(-msglog / -msglen); the repetition count N is the harness's (fix it with
--pgas-reps N). Latency = (t2 - t1) / N and bandwidth = M*N / (t2 - t1) per
process, exactly as the seed defines them.

Backend: MPI-3 one-sided communication through mpi4py. Each process's
"symmetric segment" is an MPI window from MPI_Win_allocate (the analogue of
shmalloc: MPICH maps it into shared memory, so puts and gets on one node are
real one-sided copies; MPI_Win_create on user memory falls back to messages
that need the target's progress and ran 9-230x slower here, see
benchmarks/pgas_choices.py). The segment is
locked for passive-target access (MPI_Win_lock_all) for a whole measurement;
puts complete with MPI_Win_flush, gets with MPI_Win_flush_local. The segment
holds an R area (where puts land) and an S area (the owner's data that gets
read). See docs/pgas.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from mpi4py import MPI

from commbench import buffers, policy
from commbench.config import ConfigError, Option
from commbench.suites.base import Benchmark, Family, Kind

F = "pgas"
Wtime = MPI.Wtime

# PGAS runs every pair at once on all P processes: NPmin >= P makes the process
# count sequence just [P] (policy.np_sequence clamps NPmin to P); -npmin still
# gives IMB's sequence NPmin, 2*NPmin, ..., P where every count must be even.
PROFILE = replace(policy.STANDARD, name="pgas", npmin=2**31 - 1)

DEFAULT_STRIDE = 4
DEFAULT_SPAN = 2**20
DEFAULT_SEED = 1
STRIDED_KINDS = ("target", "origin", "both")
SYNC_KINDS = ("p2p", "barrier")


# ---------------------------------------------------------------- pairing rules

class PairingError(ValueError):
    """No valid pairing for this process count and partner offset."""


def partners(n: int, offset: int | None = None) -> list[int]:
    """partner[i] for ranks i = 0 .. n-1 of one group, by the seed's rules.

    Default: pairs {i, N/2+i} for i = 0 .. N/2-1. With a partner offset Q:
    {i, i+Q} where i mod 2Q < Q and {i-Q, i} where i mod 2Q >= Q.

    The seed writes the offset rule "for i in [0, N/2-1]", but read literally
    over that range it pairs only ranks below N/2 (and their partners): for
    N=8, Q=1 it gives {0,1}, {2,3} and leaves 4..7 without a partner, against
    the seed's own "all the latency and bandwidth tests use communicating
    pairs". Only Q = N/2 (the default pairing) would survive. So the rule is
    applied to every rank i in [0, N-1]; its two clauses then name each pair
    from both ends, and it pairs every rank exactly when N is a multiple of 2Q.
    Q = N/2 reproduces the default pairs.
    """
    if n < 2 or n % 2:
        raise PairingError(f"the PGAS tests pair processes: {n} is not an even number of processes")
    if offset is None:
        half = n // 2
        return [(i + half) % n for i in range(n)]
    q = offset
    if q < 1:
        raise PairingError(f"--pgas-offset must be >= 1, got {q}")
    out = [i + q if i % (2 * q) < q else i - q for i in range(n)]
    bad = [i for i, p in enumerate(out) if not 0 <= p < n]
    if bad:
        i = bad[0]
        good = [d for d in range(1, n // 2 + 1) if n % (2 * d) == 0]
        raise PairingError(
            f"--pgas-offset {q} leaves rank {i} of {n} processes without a partner "
            f"(rank {out[i]} does not exist; the rule {{i, i+Q}} for i mod 2Q < Q, {{i-Q, i}} for i mod 2Q >= Q pairs {n} "
            f"processes only when {n} is a multiple of 2Q = {2 * q}); accepted for {n} processes: "
            f"{', '.join(map(str, good))}")
    for i, p in enumerate(out):  # the rule is symmetric by construction; keep it honest
        if out[p] != i or p == i:
            raise PairingError(f"--pgas-offset {q}: rank {i} and {p} are not a pair")
    return out


def pairs(n: int, offset: int | None = None) -> list[tuple[int, int]]:
    """The pairs {lower, upper} in order of the lower rank."""
    part = partners(n, offset)
    return [(i, p) for i, p in enumerate(part) if i < p]


# ---------------------------------------------------------------- options

def _int_option(name: str, low: int) -> Callable[[str], int]:
    def parse(s: str) -> int:
        try:
            v = int(s)
        except ValueError:
            raise ConfigError(f"{name} needs an integer, got {s!r}") from None
        if v < low:
            raise ConfigError(f"{name} must be >= {low}, got {v}")
        return v

    return parse


def _bytes_option(name: str) -> Callable[[str], int]:
    def parse(s: str) -> int:
        mult = {"k": 2**10, "m": 2**20, "g": 2**30}.get(s[-1:].lower(), 1)
        digits = s[:-1] if mult != 1 else s
        if not digits.isdigit() or int(digits) * mult < 1:
            raise ConfigError(f"{name} needs a positive byte count (e.g. 65536, 64k, 1m), got {s!r}")
        return int(digits) * mult

    return parse


def _choice_option(name: str, choices: tuple[str, ...]) -> Callable[[str], str]:
    def parse(s: str) -> str:
        if s.lower() not in choices:
            raise ConfigError(f"{name} must be one of {'|'.join(choices)}, got {s!r}")
        return s.lower()

    return parse


OPTIONS = (
    Option(("--pgas-offset",), "pgas_offset", "<Q>",
           "partner offset: pairs {i,i+Q} for i mod 2Q < Q, else {i-Q,i} (default: pairs {i, N/2+i})",
           _int_option("--pgas-offset", 1)),
    Option(("--pgas-reps",), "pgas_reps", "<N>",
           "fixed repetitions N per size (same as -iter N -iter_policy off; default: IMB's dynamic policy)",
           _int_option("--pgas-reps", 1)),
    Option(("--pgas-stride",), "pgas_stride", "<S>",
           f"stride S in 4-byte elements of the strided tests (default {DEFAULT_STRIDE})",
           _int_option("--pgas-stride", 1), default=DEFAULT_STRIDE),
    Option(("--pgas-strided",), "pgas_strided", "<side>",
           "which side is strided: target (default) | origin | both", _choice_option("--pgas-strided", STRIDED_KINDS),
           default="target"),
    Option(("--pgas-sync",), "pgas_sync", "<p2p|barrier>",
           "'synchronize with target' of put-put / get-get: p2p one-sided flag (default) | barrier",
           _choice_option("--pgas-sync", SYNC_KINDS), default="p2p"),
    Option(("--pgas-seed",), "pgas_seed", "<seed>",
           f"seed of the random tests' targets and addresses (default {DEFAULT_SEED}; recorded)",
           _int_option("--pgas-seed", 0), default=DEFAULT_SEED),
    Option(("--pgas-span",), "pgas_span", "<bytes>",
           f"random tests: bytes of segment each origin may address at a target (default {DEFAULT_SPAN})",
           _bytes_option("--pgas-span"), default=DEFAULT_SPAN),
)


@dataclass(frozen=True)
class Settings:
    offset: int | None
    stride: int
    strided: str
    sync: str
    seed: int
    span: int

    @classmethod
    def of(cls, params: dict) -> Settings:
        return cls(offset=params.get("pgas_offset"), stride=params.get("pgas_stride", DEFAULT_STRIDE),
                   strided=params.get("pgas_strided", "target"), sync=params.get("pgas_sync", "p2p"),
                   seed=params.get("pgas_seed", DEFAULT_SEED), span=params.get("pgas_span", DEFAULT_SPAN))


def configure(cfg):
    """--pgas-reps N fixes the repetition count: IMB's -iter N -iter_policy off."""
    reps = cfg.params.get("pgas_reps")
    if reps is None:
        return cfg
    return replace(cfg, msgspersample=reps, msgs_nonaggr=reps, iter_policy="off")


def validate(cfg, size: int) -> None:
    """Every process group of the run must pair up under the chosen rule."""
    offset = cfg.params.get("pgas_offset")
    for np_ in policy.np_sequence(size, cfg.npmin):
        if np_ % 2:
            raise ConfigError(f"family pgas needs an even number of processes in every group: -npmin {cfg.npmin} "
                              f"with {size} processes gives a group of {np_} (accepted: an even -npmin, e.g. -npmin 2)")
        try:
            partners(np_, offset)
        except PairingError as e:
            raise ConfigError(str(e) + (f" (process count {np_} of the -npmin sequence)" if np_ != size else "")) from None


# ---------------------------------------------------------------- the segment

def _slot(x: int) -> int:
    return max(x, 1)


@dataclass
class Segment:
    """R area (put destinations) then S area (the owner's data for gets)."""

    r_len: int
    s_data: np.ndarray  # bytes of the S area

    @property
    def s_off(self) -> int:
        return self.r_len


Geometry = Callable[[Any, Settings], Segment]


def _no_s() -> np.ndarray:
    return np.empty(0, np.uint8)


def _mine(ctx, nbytes: int) -> np.ndarray:
    """My source data (the pattern the harness puts in send buffers), made here
    where a segment area or a strided buffer is longer than the send buffer.
    The harness's fault injection (COMMBENCH_FAULT_CORRUPT) applies here too."""
    data = buffers.pattern(ctx.world_rank, nbytes, ctx.bench.dtype).copy()
    if ctx.harness.corrupt:
        data ^= 0x5A
    return data


def geo_put(ctx, s: Settings) -> Segment:
    return Segment(_slot(ctx.x), _no_s())


def geo_get(ctx, s: Settings) -> Segment:
    return Segment(0, _mine(ctx, ctx.x))


def geo_putget(ctx, s: Settings) -> Segment:
    return Segment(_slot(ctx.x), _mine(ctx, ctx.x))


def geo_strided_put(ctx, s: Settings) -> Segment:
    return Segment(_slot(ctx.x * (s.stride if s.strided != "origin" else 1)), _no_s())


def geo_strided_get(ctx, s: Settings) -> Segment:
    return Segment(0, _mine(ctx, ctx.x * (s.stride if s.strided != "origin" else 1)))


def _random_slots(x: int, span: int) -> int:
    return max(1, span // _slot(x))


def geo_random_put(ctx, s: Settings) -> Segment:
    # One region of K slots per origin: concurrent puts from different origins
    # never overlap (overlapping concurrent puts are erroneous in MPI).
    return Segment(ctx.size * _random_slots(ctx.x, s.span) * _slot(ctx.x), _no_s())


def geo_random_get(ctx, s: Settings) -> Segment:
    k = _random_slots(ctx.x, s.span)
    one = np.zeros(_slot(ctx.x), np.uint8)
    one[: ctx.x] = _mine(ctx, ctx.x)
    return Segment(0, np.tile(one, k))


def _opener(geometry: Geometry | None, flags: bool = False):
    def setup(ctx) -> None:
        st = ctx.state
        s = Settings.of(ctx.params)
        part = partners(ctx.size, s.offset)[ctx.rank]
        st.update(settings=s, partner=part, peer=ctx.members[part], lower=ctx.rank < part)
        if geometry is None:
            return
        seg = geometry(ctx, s)
        total = seg.r_len + seg.s_data.nbytes
        win = MPI.Win.Allocate(max(total, 1), 1, comm=ctx.comm)
        mem = np.frombuffer(win.tomemory(), np.uint8)[:total]
        mem[: seg.r_len] = 0
        mem[seg.r_len:] = seg.s_data
        st.update(win=win, mem=mem, seg=seg)
        if flags and s.sync == "p2p":
            flag = MPI.Win.Allocate(8, 8, comm=ctx.comm)
            if flag.Get_attr(MPI.WIN_MODEL) != MPI.WIN_UNIFIED:
                raise RuntimeError("--pgas-sync p2p polls window memory and needs MPI's unified memory "
                                   "model; this MPI gives the separate model: use --pgas-sync barrier")
            flag_mem = np.frombuffer(flag.tomemory(), np.int64)[:1]
            flag_mem[0] = 0
            flag.Lock_all()
            st.update(flag=flag, flag_mem=flag_mem, seen=0, sent=0)
        win.Lock_all()
        win.Sync()
        ctx.comm.Barrier()  # every segment initialised before anyone reaches it

    return setup


def close(ctx) -> None:
    st = ctx.state
    st.pop("mem", None)  # views of window memory die with their windows
    st.pop("flag_mem", None)
    for key in ("win", "flag"):
        w = st.pop(key, None)
        if w is not None:
            w.Unlock_all()
            w.Free()
    for t in st.pop("types", ()):
        t.Free()


def _notifier(ctx) -> tuple[Callable[[], None], Callable[[], None]]:
    """'Synchronize with target' and 'wait for partner' of put-put / get-get.

    p2p: a one-sided notification like the SHMEM reference's shmem_int_inc /
    shmem_int_wait. Each process has a counter in a flag window; notify PUTs
    the next count into the partner's counter and flushes; wait polls its own
    counter (MPI_Win_sync, then a load: the unified memory model) until it
    equals the count it expects. Testing for equality is safe against a torn
    read of a concurrent put, and the protocol never lets the partner run more
    than one notification ahead. The data operation was flushed before the
    notification, so a raised flag means the put has landed (or the get has
    finished reading). An atomic MPI_Accumulate / MPI_Fetch_and_op flag worked
    too, but took 6-16 ms per round trip here against tens of microseconds
    (MPICH may send the atomics through its active-message path, which waits
    for the target's progress engine); benchmarks/pgas_choices.py compares.
    barrier: MPI_Barrier of the whole group, the reference's other variant.
    """
    st = ctx.state
    if st["settings"].sync == "barrier":
        b = ctx.comm.Barrier
        return b, b  # lower: op, B, B; upper: B, op, B (the reference's barrier variant)
    flag, part = st["flag"], st["partner"]
    put, flush, sync = flag.Put, flag.Flush, flag.Sync
    mine = st["flag_mem"]
    out = np.zeros(1, np.int64)
    origin, spec = [out, 1, MPI.INT64_T], (0, 1, MPI.INT64_T)
    yield_cpu = os.sched_yield

    def notify() -> None:
        st["sent"] += 1
        out[0] = st["sent"]
        put(origin, part, spec)
        flush(part)

    def wait() -> None:
        st["seen"] += 1
        want = st["seen"]
        sync()
        while mine[0] != want:
            yield_cpu()  # oversubscribed nodes: let the partner run
            sync()

    return notify, wait


# ---------------------------------------------------------------- latency kernels

def _specs(ctx):
    st = ctx.state
    x = ctx.x
    src = [ctx.sbuf[:x], MPI.BYTE]
    dst = [ctx.rbuf[:x], MPI.BYTE]
    return st["win"], st["partner"], src, dst, (0, x, MPI.BYTE), (st["seg"].s_off, x, MPI.BYTE)


def putget_latency(ctx, n):
    """Lower rank of each pair: PUT to the partner, then GET from it, N times."""
    if not ctx.state["lower"]:
        return -1.0
    win, part, src, dst, r_at, s_at = _specs(ctx)
    put, get, flush, flush_local = win.Put, win.Get, win.Flush, win.Flush_local
    t0 = Wtime()
    for _ in range(n):
        put(src, part, r_at)
        flush(part)
        get(dst, part, s_at)
        flush_local(part)
    return (Wtime() - t0) / n


def _pingpong_kernel(is_put: bool):
    def kernel(ctx, n):
        win, part, src, dst, r_at, s_at = _specs(ctx)
        if is_put:
            op, buf, at, done = win.Put, src, r_at, win.Flush
        else:
            op, buf, at, done = win.Get, dst, s_at, win.Flush_local
        notify, wait = _notifier(ctx)
        if ctx.state["lower"]:
            t0 = Wtime()
            for _ in range(n):
                op(buf, part, at)
                done(part)
                notify()  # synchronize with target
                wait()  # wait for the partner to do the same to me
            return (Wtime() - t0) / n
        t0 = Wtime()
        for _ in range(n):
            wait()
            op(buf, part, at)
            done(part)
            notify()
        return (Wtime() - t0) / n

    return kernel


# ---------------------------------------------------------------- bandwidth kernels

def put_bw(ctx, n):
    """Lower rank of each pair PUTs M bytes to its partner N times; one flush completes them."""
    if not ctx.state["lower"]:
        return -1.0
    return _put_stream(ctx, n)


def _put_stream(ctx, n):
    win, part, src, _, r_at, _ = _specs(ctx)
    put = win.Put
    t0 = Wtime()
    for _ in range(n):
        put(src, part, r_at)
    win.Flush(part)
    return (Wtime() - t0) / n


def get_bw(ctx, n):
    """Lower rank of each pair GETs M bytes from its partner N times (blocking gets, as in SHMEM)."""
    if not ctx.state["lower"]:
        return -1.0
    return _get_stream(ctx, n)


def _get_stream(ctx, n):
    win, part, _, dst, _, s_at = _specs(ctx)
    get, flush_local = win.Get, win.Flush_local
    t0 = Wtime()
    for _ in range(n):
        get(dst, part, s_at)
        flush_local(part)
    return (Wtime() - t0) / n


def put_bidir_bw(ctx, n):
    """Both processes of every pair PUT M bytes to each other N times."""
    return _put_stream(ctx, n)


def get_bidir_bw(ctx, n):
    """Both processes of every pair GET M bytes from each other N times."""
    return _get_stream(ctx, n)


# ---------------------------------------------------------------- strided kernels

def _vector(ctx, count: int, stride: int):
    t = MPI.FLOAT.Create_vector(count, 1, stride).Commit()
    ctx.state.setdefault("types", []).append(t)
    return t


def _strided_setup(is_put: bool):
    base = _opener(geo_strided_put if is_put else geo_strided_get)

    def setup(ctx):
        base(ctx)
        st = ctx.state
        s = st["settings"]
        count = ctx.x // 4
        origin_strided = s.strided in ("origin", "both")
        target_strided = s.strided in ("target", "both")
        span = ctx.x * s.stride if origin_strided else ctx.x
        # Local buffers of the strided origin are M*S long: made here (the
        # harness's buffers are M long); sources hold my pattern, sinks zeros.
        local = _mine(ctx, span) if is_put else np.zeros(span, np.uint8)
        o_type = _vector(ctx, count, s.stride) if origin_strided and count else MPI.FLOAT
        t_type = _vector(ctx, count, s.stride) if target_strided and count else MPI.FLOAT
        o_count = 1 if o_type is not MPI.FLOAT else count
        t_count = 1 if t_type is not MPI.FLOAT else count
        st.update(local=local, origin=[local, o_count, o_type],
                  target=(0 if is_put else st["seg"].s_off, t_count, t_type))

    return setup


def strided_put_bw(ctx, n):
    """Lower rank PUTs M bytes (M/4 floats) to its partner with stride S, N times."""
    st = ctx.state
    if not st["lower"]:
        return -1.0
    win, part, origin, target = st["win"], st["partner"], st["origin"], st["target"]
    put = win.Put
    t0 = Wtime()
    for _ in range(n):
        put(origin, part, target)
    win.Flush(part)
    return (Wtime() - t0) / n


def strided_get_bw(ctx, n):
    """Lower rank GETs M bytes (M/4 floats) from its partner with stride S, N times."""
    st = ctx.state
    if not st["lower"]:
        return -1.0
    win, part, origin, target = st["win"], st["partner"], st["origin"], st["target"]
    get, flush_local = win.Get, win.Flush_local
    t0 = Wtime()
    for _ in range(n):
        get(origin, part, target)
        flush_local(part)
    return (Wtime() - t0) / n


# ---------------------------------------------------------------- random kernels

def random_draws(seed: int, world_rank: int, group_rank: int, np_: int, slots: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first n (target group rank, slot) draws of one origin.

    Two PCG64 streams seeded with (seed, world rank, 0|1): the first n draws do
    not depend on how many are taken, so a target can recompute what any
    origin did (check mode) and a run can be repeated exactly.
    """
    t = np.random.default_rng([seed, world_rank, 0]).integers(0, np_ - 1, n, dtype=np.int64)
    t += t >= group_rank  # never myself
    k = np.random.default_rng([seed, world_rank, 1]).integers(0, slots, n, dtype=np.int64)
    return t, k


def _random_plan(ctx, n: int, region: bool) -> list[tuple[int, tuple]]:
    st = ctx.state
    s = st["settings"]
    slot = _slot(ctx.x)
    k = _random_slots(ctx.x, s.span)
    targets, slots = random_draws(s.seed, ctx.world_rank, ctx.rank, ctx.size, k, n)
    base = ctx.rank * k * slot if region else st["seg"].s_off
    st["max_n"] = max(st.get("max_n", 0), n)
    st["last_target"] = int(targets[-1]) if n else None
    x, BYTE = ctx.x, MPI.BYTE
    return [(int(t), (base + int(j) * slot, x, BYTE)) for t, j in zip(targets, slots)]


def random_put_bw(ctx, n):
    """Every process PUTs M bytes to a random slot at a random other process, N times."""
    plan = _random_plan(ctx, n, region=True)
    win = ctx.state["win"]
    put = win.Put
    src = [ctx.sbuf[: ctx.x], MPI.BYTE]
    t0 = Wtime()
    for target, at in plan:
        put(src, target, at)
    win.Flush_all()
    return (Wtime() - t0) / n


def random_get_bw(ctx, n):
    """Every process GETs M bytes from a random slot at a random other process, N times."""
    plan = _random_plan(ctx, n, region=False)
    win = ctx.state["win"]
    get, flush_local = win.Get, win.Flush_local
    dst = [ctx.rbuf[: ctx.x], MPI.BYTE]
    t0 = Wtime()
    for target, at in plan:
        get(dst, target, at)
        flush_local(target)
    return (Wtime() - t0) / n


# ---------------------------------------------------------------- reductions

def reduction_separate(ctx, n):
    """Sum-to-all of M/4 ints into a non-overlapping target buffer, N times."""
    op, SUM = ctx.comm.Allreduce, MPI.SUM
    count = ctx.x // 4
    src, dst = [ctx.sbuf[: 4 * count], count, MPI.INT], [ctx.rbuf[: 4 * count], count, MPI.INT]
    t0 = Wtime()
    for _ in range(n):
        op(src, dst, SUM)
    return (Wtime() - t0) / n


def _inplace_setup(ctx):
    _opener(None)(ctx)
    ctx.rbuf[: ctx.x] = ctx.sbuf[: ctx.x]  # the source buffer is also the result
    ctx.state["done"] = 0


def reduction_inplace(ctx, n):
    """Sum-to-all of M/4 ints back into the same source buffer, N times."""
    op, SUM, IN_PLACE = ctx.comm.Allreduce, MPI.SUM, MPI.IN_PLACE
    count = ctx.x // 4
    buf = [ctx.rbuf[: 4 * count], count, MPI.INT]
    t0 = Wtime()
    for _ in range(n):
        op(IN_PLACE, buf, SUM)
    t = (Wtime() - t0) / n
    ctx.state["done"] += n
    return t


# ---------------------------------------------------------------- check mode

def _dev(got: np.ndarray, exp: np.ndarray, dtype: str = "float32") -> float:
    return buffers.deviation(got, exp, dtype)


def _quiesce(ctx) -> None:
    """Every origin has flushed (its kernel returned) before a target reads its segment."""
    ctx.comm.Barrier()
    win = ctx.state.get("win")
    if win is not None:
        win.Sync()


def _peer_pattern(ctx, nbytes: int) -> np.ndarray:
    return buffers.pattern(ctx.state["peer"], nbytes, ctx.bench.dtype)


def check_putget(ctx, n):
    _quiesce(ctx)
    st = ctx.state
    if st["lower"]:  # fetched the partner's S area
        return _dev(ctx.rbuf[: ctx.x], _peer_pattern(ctx, ctx.x))
    return _dev(st["mem"][: ctx.x], _peer_pattern(ctx, ctx.x))  # the partner's put landed


def _check_put(both: bool):
    def check(ctx, n):
        _quiesce(ctx)
        st = ctx.state
        if st["lower"] and not both:
            return None
        return _dev(st["mem"][: ctx.x], _peer_pattern(ctx, ctx.x))

    return check


def _check_get(both: bool):
    def check(ctx, n):
        _quiesce(ctx)
        if not (both or ctx.state["lower"]):
            return None
        return _dev(ctx.rbuf[: ctx.x], _peer_pattern(ctx, ctx.x))

    return check


def _strided_expect(ctx, source: np.ndarray, from_strided: bool, to_strided: bool, out_len: int) -> np.ndarray:
    """Where the M/4 floats of `source` land: element j of the transfer is source
    element j (or j*S when the source is strided), stored at j (or j*S)."""
    s = ctx.state["settings"].stride
    count = ctx.x // 4
    src = source.view(np.float32)
    vals = src[: count * s : s] if from_strided else src[:count]
    out = np.zeros(out_len // 4, np.float32)
    if to_strided:
        out[: count * s : s] = vals
    else:
        out[:count] = vals
    return out.view(np.uint8)


def check_strided_put(ctx, n):
    _quiesce(ctx)
    st = ctx.state
    if st["lower"]:
        return None
    s = st["settings"]
    o, t = s.strided in ("origin", "both"), s.strided in ("target", "both")
    src_len = ctx.x * (s.stride if o else 1)
    exp = _strided_expect(ctx, _peer_pattern(ctx, src_len), o, t, st["seg"].r_len // 4 * 4)
    return _dev(st["mem"][: exp.nbytes], exp)


def check_strided_get(ctx, n):
    _quiesce(ctx)
    st = ctx.state
    if not st["lower"]:
        return None
    s = st["settings"]
    o, t = s.strided in ("origin", "both"), s.strided in ("target", "both")
    src_len = ctx.x * (s.stride if t else 1)
    local = st["local"]
    exp = _strided_expect(ctx, _peer_pattern(ctx, src_len), t, o, local.nbytes)
    return _dev(local[: exp.nbytes], exp)


def check_random_put(ctx, n):
    """My region for each origin: the slots it drew for me hold its data, the rest zeros."""
    _quiesce(ctx)
    st = ctx.state
    s = st["settings"]
    slot, k = _slot(ctx.x), _random_slots(ctx.x, s.span)
    m = st.get("max_n", 0)
    devs = []
    for o in range(ctx.size):
        if o == ctx.rank:
            continue
        w = ctx.members[o]
        targets, slots = random_draws(s.seed, w, o, ctx.size, k, m)
        exp = np.zeros((k, slot), np.uint8)
        exp[np.unique(slots[targets == ctx.rank]), : ctx.x] = buffers.pattern(w, ctx.x, ctx.bench.dtype)
        region = st["mem"][o * k * slot : (o + 1) * k * slot]
        devs.append(_dev(region, exp.reshape(-1)))
    return max(devs) if devs else None


def check_random_get(ctx, n):
    _quiesce(ctx)
    last = ctx.state.get("last_target")
    if last is None:
        return None
    exp = buffers.pattern(ctx.members[last], ctx.x, ctx.bench.dtype)
    return _dev(ctx.rbuf[: ctx.x], exp)


def _int_sum(ctx) -> np.ndarray:
    """Sum over the group of every rank's int32 pattern, with int32 wrap-around."""
    count = ctx.x // 4
    acc = np.zeros(count, np.int64)
    for w in ctx.members:
        acc += buffers.pattern(w, 4 * count, "int32").view(np.int32)
    return acc.astype(np.uint64) & np.uint64(0xFFFFFFFF)


def check_reduction_separate(ctx, n):
    exp = _int_sum(ctx).astype(np.uint32).view(np.uint8)
    return _dev(ctx.rbuf[: exp.nbytes], exp, "int32")


def check_reduction_inplace(ctx, n):
    """After k in-place sums every buffer holds NP^(k-1) * (the sum), modulo 2^32."""
    k = ctx.state["done"]
    if k == 0:
        return None
    factor = np.uint64(pow(ctx.size, k - 1, 2**32))
    exp = ((_int_sum(ctx) * factor) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.uint8)
    return _dev(ctx.rbuf[: exp.nbytes], exp, "int32")


# ---------------------------------------------------------------- descriptors

def same(x, np_):
    return max(x, 4), max(x, 4)


RANDOM_NOTE = ("random target (never itself) and slot from two PCG64 streams seeded with (--pgas-seed, world rank);",
               "the seed is recorded in the results file under config.params.pgas_seed")


REDUCTION_NOTE = ("MPI_Allreduce of M/4 MPI_INT with MPI_SUM (not MPI_FLOAT: integers, as in the reference,",
                  "keep the repeated in-place sums exact, so check mode can verify them)")


def _bench(name, kind, kernel, desc, setup, check, unit=1, dtype="float32", comments=()):
    # Latency and bandwidth tests are fitted by `run --fit` (Hockney); reductions are not.
    return Benchmark(name, F, kind, kernel, desc, buffers=same, unit=unit, off_cache=False, min_np=2,
                     expected=check, setup=setup, teardown=close, dtype=dtype, comments=comments,
                     extra={"fit": "Reduction" not in name})


LAT, BW, COLL = Kind.COLLECTIVE, Kind.PARALLEL, Kind.COLLECTIVE

BENCHMARKS = (
    _bench("PutGet_latency", LAT, putget_latency,
           "lower rank of each pair: PUT then GET of M bytes, N times; latency (t2-t1)/N",
           _opener(geo_putget), check_putget),
    _bench("PutPut_latency", LAT, _pingpong_kernel(True),
           "PUT to partner, synchronize with target, wait for the partner's PUT; latency (t2-t1)/N",
           _opener(geo_put, flags=True), _check_put(both=True)),
    _bench("GetGet_latency", LAT, _pingpong_kernel(False),
           "GET from partner, synchronize with target, wait for the partner's GET; latency (t2-t1)/N",
           _opener(geo_get, flags=True), _check_get(both=True)),
    _bench("Put_bw", BW, put_bw, "lower rank of each pair PUTs M bytes N times; M*N/(t2-t1)",
           _opener(geo_put), _check_put(both=False)),
    _bench("Get_bw", BW, get_bw, "lower rank of each pair GETs M bytes N times; M*N/(t2-t1)",
           _opener(geo_get), _check_get(both=False)),
    _bench("Put_bidir_bw", BW, put_bidir_bw, "both ranks of each pair PUT M bytes to each other N times",
           _opener(geo_put), _check_put(both=True)),
    _bench("Get_bidir_bw", BW, get_bidir_bw, "both ranks of each pair GET M bytes from each other N times",
           _opener(geo_get), _check_get(both=True)),
    _bench("Strided_put_bw", BW, strided_put_bw,
           "lower rank PUTs M bytes (M/4 floats) with stride S (--pgas-stride) N times",
           _strided_setup(True), check_strided_put, unit=4),
    _bench("Strided_get_bw", BW, strided_get_bw,
           "lower rank GETs M bytes (M/4 floats) with stride S (--pgas-stride) N times",
           _strided_setup(False), check_strided_get, unit=4),
    _bench("Random_put_bw", BW, random_put_bw,
           "every rank PUTs M bytes to a random address at a random target N times",
           _opener(geo_random_put), check_random_put, comments=RANDOM_NOTE),
    _bench("Random_get_bw", BW, random_get_bw,
           "every rank GETs M bytes from a random address at a random target N times",
           _opener(geo_random_get), check_random_get, comments=RANDOM_NOTE),
    _bench("Reduction_separate", COLL, reduction_separate,
           "sum-to-all of M/4 ints into a non-overlapping target buffer, N times",
           _opener(None), check_reduction_separate, unit=4, dtype="int32", comments=REDUCTION_NOTE),
    _bench("Reduction_inplace", COLL, reduction_inplace,
           "sum-to-all of M/4 ints into the same source buffer, N times",
           _inplace_setup, check_reduction_inplace, unit=4, dtype="int32", comments=REDUCTION_NOTE),
)

FAMILY = Family(
    name=F,
    title="PGAS",
    part="PGAS microbenchmarks part",
    benchmarks=BENCHMARKS,
    profile=PROFILE,
    description="PGAS microbenchmark suite: one-sided put/get latency, bandwidth, strided, random, reductions (seed 004)",
    aliases=("PGAS",),
    min_world=2,
    even_world=True,
    options=OPTIONS,
    configure=configure,
    validate=validate,
)
