"""IMB-NBC's catalog without MPI: its benchmarks mirror IMB-MPI1's collectives, each with a
_pure twin, in IMB-NBC's default order; the run list, --nbc-cpu-factor and the CPU time's cap
in check mode. The nonblocking kernels in real MPI processes are tests/mpi/test_nbc.py."""

from __future__ import annotations

import pytest

from commbench import run_config
from commbench.suites import collops, mpi1, nbc
from commbench.suites.base import Kind


def test_family_mirrors_mpi1():
    fam = nbc.FAMILY
    assert fam.title == "IMB-NBC" and fam.part == "MPI-NBC part"
    assert fam.default_list() == [
        "Ibcast",
        "Iallgather",
        "Iallgatherv",
        "Igather",
        "Igatherv",
        "Iscatter",
        "Iscatterv",
        "Ialltoall",
        "Ialltoallv",
        "Ireduce",
        "Ireduce_scatter",
        "Iallreduce",
        "Ibarrier",
    ]
    for name in fam.default_list():
        over, pure = fam.get(name), fam.get(name + "_pure")
        assert pure is not None and not pure.default
        ref = mpi1.FAMILY.get(name[1:])
        for b in (over, pure):
            assert b.unit == ref.unit and b.root_based == ref.root_based
            # rooted verifiers re-run the operation per root with the nonblocking call
            assert (b.expected is ref.expected) == (ref.name not in mpi1.ROOT_SWEPT), b.name
            assert b.buffers(8, 4) == ref.buffers(8, 4)
        if name == "Ibarrier":
            assert over.kind == Kind.OVERLAP_SYNC and pure.kind == Kind.SYNC
        else:
            assert over.kind == Kind.OVERLAP and pure.kind == Kind.COLLECTIVE
        assert over.components == ("t_ovrl", "t_pure", "t_cpu")
    assert {b.name for b in fam.benchmarks if b.unit == 4} == {
        "Ireduce",
        "Ireduce_pure",
        "Ireduce_scatter",
        "Ireduce_scatter_pure",
        "Iallreduce",
        "Iallreduce_pure",
        *(f"I{o.name}{s}" for o in collops.OURS for s in ("", "_pure")),  # Iscan, Iexscan
    }
    assert {b.name for b in fam.benchmarks if b.root_based} == {
        n + s
        for n in ("Ibcast", "Igather", "Igatherv", "Iscatter", "Iscatterv", "Ireduce")
        for s in ("", "_pure")
    }


def test_run_list():
    assert run_config.parse_run_args(["IMB-NBC"]).benchmarks == tuple(nbc.FAMILY.default_list())
    cfg = run_config.parse_run_args(
        ["--suite", "nbc", "-include", "ibarrier_pure", "-exclude", "Ibcast"]
    )
    assert cfg.benchmarks[0] == "Ibarrier_pure" and "Ibcast" not in cfg.benchmarks
    assert run_config.parse_run_args(["Iallreduce_pure", "Iallreduce"]).benchmarks == (
        "Iallreduce_pure",
        "Iallreduce",
    )


def test_cpu_factor_option_and_check_cap():
    cfg = run_config.parse_run_args(["--nbc-cpu-factor", "0.25", "Ibcast"])
    assert cfg.family == "nbc" and cfg.params == {"nbc_cpu_factor": 0.25}
    assert run_config.parse_run_args(["Ibcast"]).params == {}
    for bad in ("0", "-1", "x", "inf"):
        with pytest.raises(run_config.ConfigError, match="--nbc-cpu-factor"):
            run_config.parse_run_args(["--nbc-cpu-factor", bad, "Ibcast"])
    assert nbc.cpu_target(0.002, 4.0, False) == pytest.approx(0.008)
    assert nbc.cpu_target(0.002, 4.0, True) == nbc.CHECK_CPU_SECS  # spec §15: shrunk in CHECK mode
    assert nbc.cpu_target(1e-5, 1.0, True) == pytest.approx(1e-5)
