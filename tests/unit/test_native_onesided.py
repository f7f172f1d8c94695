"""The native engine's one-sided (IMB-EXT, IMB-RMA) and nonblocking (IMB-NBC, IMB-MPI4)
benchmarks each have a pattern of the C table, found without a build. Those loops on real
MPI are tests/mpi/test_native_onesided.py."""

from __future__ import annotations

from commbench import native
from commbench.suites import ext, mpi4, nbc, rma

FAMILIES = {"ext": ext, "rma": rma, "nbc": nbc, "mpi4": mpi4}


def test_every_onesided_and_nonblocking_benchmark_has_a_native_pattern():
    for fam in FAMILIES.values():
        for b in fam.BENCHMARKS:
            assert native.pattern_of(b) is not None, b.name
