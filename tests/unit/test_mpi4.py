"""IMB-MPI4's catalog without MPI: its benchmarks mirror IMB-MPI1's operations and IMB-NBC's
own, with IMB-MPI4's default list; the run list and the options the parser takes. The
persistent requests in real MPI processes are tests/mpi/test_mpi4.py."""

from __future__ import annotations

import pytest

from commbench import run_config
from commbench.suites import mpi1, mpi4, nbc
from commbench.suites.base import Kind

ALL = [b.name for b in mpi4.BENCHMARKS]
# IMB-MPI4's default benchmark list (its DEFAULT flags)
DEFAULT = [
    "Bcast_persist",
    "Allgatherv_persist",
    "Gather_persist",
    "Gatherv_persist",
    "Scatter_persist",
    "Scatterv_persist",
    "Alltoall_persist",
    "Alltoallv_persist",
    "Reduce_persist",
    "Reduce_scatter_persist",
    "Allreduce_persist",
    "Barrier_persist",
]


def test_family_mirrors_mpi1_and_imb_mpi4():
    fam = mpi4.FAMILY
    assert fam.title == "IMB-MPI4" and fam.part == "MPI-4 part" and fam.methodology
    assert fam.default_list() == fam.default_list("imb2021") == DEFAULT  # IMB-MPI4's DEFAULT flags
    assert len(ALL) == 26 + 2 * len(nbc.OURS)  # IMB-MPI4's, then Scan_persist …
    for stem, _ in nbc.OPERATIONS + nbc.OURS:
        over, pure = fam.get(f"{stem}_persist"), fam.get(f"{stem}_persist_pure")
        assert not pure.default and over.default == (stem != "Allgather" and stem not in nbc.OWN)
        ref = mpi1.FAMILY.get(stem)
        for b in (over, pure):
            assert b.family == "mpi4" and b.unit == ref.unit and b.root_based == ref.root_based
            assert b.buffers(8, 4) == ref.buffers(8, 4) and b.int_extent is ref.int_extent
            # rooted verifiers re-run the operation per root with a persistent request of its own
            assert (b.expected is ref.expected) == (stem not in mpi1.ROOT_SWEPT), b.name
            assert b.setup is not None and b.teardown is not None  # requests bound per size, freed
        sync = stem == "Barrier"
        assert over.kind == (Kind.OVERLAP_SYNC if sync else Kind.OVERLAP)
        assert pure.kind == (Kind.SYNC if sync else Kind.COLLECTIVE)
        assert over.components == nbc.OVERLAP_COMPONENTS


def test_run_list_and_options():
    assert run_config.parse_run_args(["IMB-MPI4"]).benchmarks == tuple(DEFAULT)
    cfg = run_config.parse_run_args(
        ["--suite", "mpi4", "-include", "allgather_persist", "-exclude", "Bcast_persist"]
    )
    assert (
        cfg.family == "mpi4"
        and "Allgather_persist" in cfg.benchmarks
        and "Bcast_persist" not in cfg.benchmarks
    )
    assert run_config.parse_run_args(["Allreduce_persist_pure"]).family == "mpi4"
    cfg = run_config.parse_run_args(
        ["--mpi4-cpu-factor", "0.5", "Bcast_persist", "-sync", "on", "-root_shift", "on"]
    )
    assert (
        cfg.params == {"mpi4_cpu_factor": 0.5}
        and cfg.method.sync == 1
        and cfg.method.root_shift == 1
    )
    for bad in ("0", "x", "nan"):
        with pytest.raises(run_config.ConfigError, match="--mpi4-cpu-factor"):
            run_config.parse_run_args(["--mpi4-cpu-factor", bad, "Bcast_persist"])
