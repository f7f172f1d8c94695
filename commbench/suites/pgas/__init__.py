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

The package, top to bottom: this module (descriptors, FAMILY, configure);
settings (options, PgasSettings); pairing (the pairing rules, validate);
segment (the segment's geometry, window setup and teardown, random streams);
kernels (the timed loops); check (the check-mode verifiers).
"""

from __future__ import annotations

from dataclasses import replace

from commbench import policy
from commbench.suites.base import Benchmark, Family, Kind, Procs, same
from commbench.suites.pgas.check import (
    check_get,
    check_put,
    check_putget,
    check_random_get,
    check_random_put,
    check_reduction_inplace,
    check_reduction_separate,
    check_strided_get,
    check_strided_put,
)
from commbench.suites.pgas.kernels import (
    get_bidir_bw,
    get_bw,
    pingpong_kernel,
    put_bidir_bw,
    put_bw,
    putget_latency,
    random_get_bw,
    random_put_bw,
    reduction_inplace,
    reduction_separate,
    strided_get_bw,
    strided_put_bw,
)
from commbench.suites.pgas.pairing import PairingError, pairs, partners, validate
from commbench.suites.pgas.segment import (
    PgasSegment,
    close,
    geo_get,
    geo_put,
    geo_putget,
    geo_random_get,
    geo_random_put,
    inplace_setup,
    opener,
    random_draws,
    strided_setup,
)
from commbench.suites.pgas.segment import memory as segment_memory
from commbench.suites.pgas.settings import OPTIONS, PgasSettings

__all__ = [
    "BENCHMARKS",
    "FAMILY",
    "OPTIONS",
    "PROFILE",
    "PairingError",
    "PgasSegment",
    "PgasSettings",
    "configure",
    "pairs",
    "partners",
    "random_draws",
    "validate",
]

F = "pgas"

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
    name, kind, kernel, desc, setup, check, unit=1, dtype="float32", comments=(), memory="none"
):
    # Latency and bandwidth tests are fitted by `run --fit` (Hockney); reductions are not.
    return Benchmark(
        name,
        F,
        kind,
        kernel,
        desc,
        buffers=same,
        unit=unit,
        off_cache=False,
        procs=Procs(minimum=2),
        expected=check,
        setup=setup,
        teardown=close,
        dtype=dtype,
        comments=comments,
        fit="Reduction" not in name,
        memory=segment_memory(memory),
    )


LAT, BW, COLL = Kind.COLLECTIVE, Kind.PARALLEL, Kind.COLLECTIVE

BENCHMARKS = (
    _bench(
        "PutGet_latency",
        LAT,
        putget_latency,
        "lower rank of each pair: PUT then GET of M bytes, N times; latency (t2-t1)/N",
        opener(geo_putget),
        check_putget,
        memory="putget",
    ),
    _bench(
        "PutPut_latency",
        LAT,
        pingpong_kernel(True),
        "PUT to partner, synchronize with target, wait for the partner's PUT; latency (t2-t1)/N",
        opener(geo_put, flags=True),
        check_put(both=True),
        memory="put",
    ),
    _bench(
        "GetGet_latency",
        LAT,
        pingpong_kernel(False),
        "GET from partner, synchronize with target, wait for the partner's GET; latency (t2-t1)/N",
        opener(geo_get, flags=True),
        check_get(both=True),
        memory="get",
    ),
    _bench(
        "Put_bw",
        BW,
        put_bw,
        "lower rank of each pair PUTs M bytes N times; M*N/(t2-t1)",
        opener(geo_put),
        check_put(both=False),
        memory="put",
    ),
    _bench(
        "Get_bw",
        BW,
        get_bw,
        "lower rank of each pair GETs M bytes N times; M*N/(t2-t1)",
        opener(geo_get),
        check_get(both=False),
        memory="get",
    ),
    _bench(
        "Put_bidir_bw",
        BW,
        put_bidir_bw,
        "both ranks of each pair PUT M bytes to each other N times",
        opener(geo_put),
        check_put(both=True),
        memory="put",
    ),
    _bench(
        "Get_bidir_bw",
        BW,
        get_bidir_bw,
        "both ranks of each pair GET M bytes from each other N times",
        opener(geo_get),
        check_get(both=True),
        memory="get",
    ),
    _bench(
        "Strided_put_bw",
        BW,
        strided_put_bw,
        "lower rank PUTs M bytes (M/4 floats) with stride S (--pgas-stride) N times",
        strided_setup(True),
        check_strided_put,
        unit=4,
        memory="strided_put",
    ),
    _bench(
        "Strided_get_bw",
        BW,
        strided_get_bw,
        "lower rank GETs M bytes (M/4 floats) with stride S (--pgas-stride) N times",
        strided_setup(False),
        check_strided_get,
        unit=4,
        memory="strided_get",
    ),
    _bench(
        "Random_put_bw",
        BW,
        random_put_bw,
        "every rank PUTs M bytes to a random address at a random target N times",
        opener(geo_random_put),
        check_random_put,
        comments=RANDOM_NOTE,
        memory="random_put",
    ),
    _bench(
        "Random_get_bw",
        BW,
        random_get_bw,
        "every rank GETs M bytes from a random address at a random target N times",
        opener(geo_random_get),
        check_random_get,
        comments=RANDOM_NOTE,
        memory="random_get",
    ),
    _bench(
        "Reduction_separate",
        COLL,
        reduction_separate,
        "sum-to-all of M/4 ints into a non-overlapping target buffer, N times",
        opener(None),
        check_reduction_separate,
        unit=4,
        dtype="int32",
        comments=REDUCTION_NOTE,
    ),
    _bench(
        "Reduction_inplace",
        COLL,
        reduction_inplace,
        "sum-to-all of M/4 ints into the same source buffer, N times",
        inplace_setup,
        check_reduction_inplace,
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
