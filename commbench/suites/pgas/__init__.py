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

The package, top to bottom: this module (descriptors, FAMILY, configure, the
segment's sizes: slot_len, random_slots, memory); settings (options,
PgasSettings); pairing (the pairing rules, validate); segment (the segment's
geometry, window setup and teardown, random streams); kernels (the timed
loops); check (the check-mode verifiers). The catalog (this module, settings
and pairing) imports neither MPI nor numpy; it names the kernels, verifiers,
setups and teardown of kernels, check and segment as base.Lazy, imported by the
ranks that run them (issue 47 item 4).
"""

from __future__ import annotations

from dataclasses import replace

from commbench import policy
from commbench.suites.base import Benchmark, Family, Kind, Lazy, Procs, hooks
from commbench.suites.pgas.pairing import PairingError, pairs, partners, validate
from commbench.suites.pgas.settings import OPTIONS, PgasSettings

__all__ = [
    "BENCHMARKS",
    "FAMILY",
    "OPTIONS",
    "PROFILE",
    "PairingError",
    "PgasSettings",
    "configure",
    "memory",
    "pairs",
    "partners",
    "random_slots",
    "slot_len",
    "validate",
]

F = "pgas"
KERNELS = "commbench.suites.pgas.kernels"
CHECK = "commbench.suites.pgas.check"
SEGMENT = "commbench.suites.pgas.segment"

# PGAS runs every pair at once on all P processes: NPmin >= P makes the process
# count sequence just [P] (policy.np_sequence clamps NPmin to P); -npmin still
# gives IMB's sequence NPmin, 2*NPmin, ..., P where every count must be even.
PROFILE = replace(policy.STANDARD, name="pgas", npmin=2**31 - 1)


def configure(cfg):
    """--pgas-reps N fixes the repetition count: IMB's -iter N -iter_policy off."""
    reps = PgasSettings.of(cfg.params).reps
    if reps is None:
        return cfg
    return replace(cfg, msgspersample=reps, msgs_nonaggr=reps, iter_policy="off")


# ---------------------------------------------------------------- the segment's sizes


def slot_len(x: int) -> int:
    return max(x, 1)


def random_slots(x: int, span: int) -> int:
    return max(1, span // slot_len(x))


def memory(kind: str):
    """(params, X, NP) -> bytes a test allocates beyond the harness's buffers at size X:
    its segment (the geometry, segment.geo_*), the numpy copy of the segment's S area, and a
    strided origin's local buffer (segment.strided_setup). Counted by -mem and the
    pre-flight, so a huge --pgas-stride or --pgas-span is refused or skipped
    as out-of-mem instead of meeting the OOM killer."""

    def need(params: dict, x: int, np_: int) -> int:
        s = PgasSettings.of(params)
        slot = slot_len(x)
        t_stride = s.stride if s.strided != "origin" else 1
        o_span = x * s.stride if s.strided in ("origin", "both") else x
        k = random_slots(x, s.span)
        return {
            "putget": 2 * slot + x,
            "put": slot,
            "get": 2 * x,
            "strided_put": slot_len(x * t_stride) + o_span,
            "strided_get": 2 * x * t_stride + o_span,
            "random_put": np_ * k * slot,
            "random_get": 2 * k * slot,
            "none": 0,
        }[kind]

    return need


# ---------------------------------------------------------------- descriptors

RANDOM_NOTE = (
    (
        "random target (never itself) and slot from two PCG64 streams seeded with (--pgas-seed, "
        "world rank);"
    ),
    "the seed is recorded in the results file under config.params.pgas_seed",
)


REDUCTION_NOTE = (
    "MPI_Allreduce of M/4 MPI_INT with MPI_SUM (not MPI_FLOAT: integers, as in the reference,",
    "keep the repeated in-place sums exact, so check mode can verify them)",
)


def _bench(
    name, kind, kernel, desc, setup, check, unit=1, dtype="float32", comments=(), need="none"
):
    # Latency and bandwidth tests are fitted by `run --fit` (Hockney); reductions are not.
    return Benchmark(
        name,
        F,
        kind,
        kernel,
        desc,
        unit=unit,
        off_cache=False,
        procs=Procs(minimum=2),
        expected=check,
        setup=setup,
        teardown=Lazy(SEGMENT, "close"),
        dtype=dtype,
        comments=comments,
        fit="Reduction" not in name,
        memory=memory(need),
    )


_kernel = hooks(KERNELS)
_check = hooks(CHECK)
_segment = hooks(SEGMENT)


def _open(geometry, flags=False):
    """segment.opener's setup over the geometry segment.<geometry> (None: no segment)."""
    return _segment("opener", geometry and Lazy(SEGMENT, geometry), flags)


LAT, BW, COLL = Kind.COLLECTIVE, Kind.PARALLEL, Kind.COLLECTIVE

BENCHMARKS = (
    _bench(
        "PutGet_latency",
        LAT,
        _kernel("putget_latency"),
        "lower rank of each pair: PUT then GET of M bytes, N times; latency (t2-t1)/N",
        _open("geo_putget"),
        _check("check_putget"),
        need="putget",
    ),
    _bench(
        "PutPut_latency",
        LAT,
        _kernel("pingpong_kernel", True),
        "PUT to partner, synchronize with target, wait for the partner's PUT; latency (t2-t1)/N",
        _open("geo_put", True),
        _check("check_put", True),
        need="put",
    ),
    _bench(
        "GetGet_latency",
        LAT,
        _kernel("pingpong_kernel", False),
        "GET from partner, synchronize with target, wait for the partner's GET; latency (t2-t1)/N",
        _open("geo_get", True),
        _check("check_get", True),
        need="get",
    ),
    _bench(
        "Put_bw",
        BW,
        _kernel("put_bw"),
        "lower rank of each pair PUTs M bytes N times; M*N/(t2-t1)",
        _open("geo_put"),
        _check("check_put", False),
        need="put",
    ),
    _bench(
        "Get_bw",
        BW,
        _kernel("get_bw"),
        "lower rank of each pair GETs M bytes N times; M*N/(t2-t1)",
        _open("geo_get"),
        _check("check_get", False),
        need="get",
    ),
    _bench(
        "Put_bidir_bw",
        BW,
        _kernel("put_bidir_bw"),
        "both ranks of each pair PUT M bytes to each other N times",
        _open("geo_put"),
        _check("check_put", True),
        need="put",
    ),
    _bench(
        "Get_bidir_bw",
        BW,
        _kernel("get_bidir_bw"),
        "both ranks of each pair GET M bytes from each other N times",
        _open("geo_get"),
        _check("check_get", True),
        need="get",
    ),
    _bench(
        "Strided_put_bw",
        BW,
        _kernel("strided_put_bw"),
        "lower rank PUTs M bytes (M/4 floats) with stride S (--pgas-stride) N times",
        _segment("strided_setup", True),
        _check("check_strided_put"),
        unit=4,
        need="strided_put",
    ),
    _bench(
        "Strided_get_bw",
        BW,
        _kernel("strided_get_bw"),
        "lower rank GETs M bytes (M/4 floats) with stride S (--pgas-stride) N times",
        _segment("strided_setup", False),
        _check("check_strided_get"),
        unit=4,
        need="strided_get",
    ),
    _bench(
        "Random_put_bw",
        BW,
        _kernel("random_put_bw"),
        "every rank PUTs M bytes to a random address at a random target N times",
        _open("geo_random_put"),
        _check("check_random_put"),
        comments=RANDOM_NOTE,
        need="random_put",
    ),
    _bench(
        "Random_get_bw",
        BW,
        _kernel("random_get_bw"),
        "every rank GETs M bytes from a random address at a random target N times",
        _open("geo_random_get"),
        _check("check_random_get"),
        comments=RANDOM_NOTE,
        need="random_get",
    ),
    _bench(
        "Reduction_separate",
        COLL,
        _kernel("reduction_separate"),
        "sum-to-all of M/4 ints into a non-overlapping target buffer, N times",
        _open(None),
        _check("check_reduction_separate"),
        unit=4,
        dtype="int32",
        comments=REDUCTION_NOTE,
    ),
    _bench(
        "Reduction_inplace",
        COLL,
        _kernel("reduction_inplace"),
        "sum-to-all of M/4 ints into the same source buffer, N times",
        _segment("inplace_setup"),
        _check("check_reduction_inplace"),
        unit=4,
        dtype="int32",
        comments=REDUCTION_NOTE,
    ),
)

FAMILY = Family(
    name=F,
    title="PGAS",
    part="PGAS microbenchmarks part",
    benchmarks=BENCHMARKS,
    profile=PROFILE,
    description=(
        "PGAS microbenchmark suite: one-sided put/get latency, bandwidth, strided, random, "
        "reductions (seed 004)"
    ),
    aliases=("PGAS",),
    min_world=2,
    even_world=True,
    options=OPTIONS,
    configure=configure,
    validate=validate,
)
