"""IMB-MPI4 (persistent collectives) in real MPI processes at 2 and 4 ranks: rows, check
mode with off-cache slots, both methodologies and the root rotation, corrupted senders. The
catalog, the run list and the options, without MPI: tests/unit/test_mpi4.py."""

import pytest

from commbench import policy, run_config
from commbench.suites import mpi4
from commbench.suites.base import Kind
from commbench.suites.mpi4 import kernels as mpi4_kernels
from tests.support.mpirun import commbench, mpiexec, run_json, tables

ALL = [b.name for b in mpi4.BENCHMARKS]
# Small sizes and fixed repetitions: every benchmark of the family in ~2 s at 4 ranks.
ARGS = ["-msglog", "0:3", "-iter", "20", "-iter_policy", "off", "-time", "10"]


def test_refuses_an_mpi_without_persistent_collectives():
    """The capability is probed (persistent collectives run on MPI_COMM_SELF), never read
    off the version number; the one-line reason validate raises names the library, the
    version it reports and what failed (ConfigError: exit 2 on every rank)."""
    assert mpi4_kernels.probe() is None  # MPICH 5 and mpi4py 4 here run them
    assert mpi4.missing(None, "Open MPI v5.0.11", (3, 1)) is None  # the version alone: no reason
    why = mpi4.missing("NotImplementedError: MPI_Barrier_init", "Open MPI v4.1.5", (3, 1))
    assert "Open MPI v4.1.5, reporting MPI 3.1" in why and "MPI_Barrier_init" in why
    assert "\n" not in why and "accepted:" in why
    mpi4.FAMILY.validate(
        run_config.parse_run_args(["Bcast_persist"]), 2
    )  # passes with the MPI here


def test_list_shows_every_benchmark():
    p = commbench("list", "mpi4")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0].startswith("mpi4 (IMB-MPI4): MPI-4 persistent collectives")
    listed = [line.split()[0] for line in p.stdout.splitlines()[1:] if line.strip()]
    assert listed == ALL


def _rows(name: str) -> int:
    b = mpi4.FAMILY.get(name)
    return 1 if b.sync else len(policy.size_list(b.unit, 0, 3))


VARIANTS = {
    "imb4": [],  # loop timed as a whole, root i % NP
    "off_cache": ["-off_cache", "1"],  # 20 slots of 192 bytes: one request per slot (and root)
    "imb2021": ["--methodology", "imb2021"],  # each call timed alone with a barrier, root 0
    "imb2021_root_shift": ["--methodology", "imb2021", "-root_shift", "on", "-off_cache", "1"],
}


@pytest.mark.parametrize("np_", [2, 4])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_benchmark_checked(tmp_path, np_, variant):
    """-check verifies every receive slot of every row: a request bound to the wrong
    slot or root leaves some slot without its data, and the run fails."""
    opts = VARIANTS[variant]
    if "-off_cache" in opts:
        assert policy.off_cache_slots(8, 20, 1.0, 64).count == 20  # the slots really cycle
    p, doc = run_json(tmp_path, np_, *ARGS, "-check", *opts, *ALL)
    out = p.stdout
    assert "MPI-4 part" in out and "# All processes entering MPI_Finalize" in out
    assert (
        "!!!!  ALL CHECKED BENCHMARKS SUCCESSFUL; 2 NOT CHECKED !!!! " in out
    )  # the Barriers move no data
    method = doc["config"]["methodology"]
    assert (method["sync"], method["root_shift"]) == {
        "imb4": (0, 1),
        "off_cache": (0, 1),
        "imb2021": (1, 0),
        "imb2021_root_shift": (1, 1),
    }[variant]
    t = tables(out)
    nps = policy.np_sequence(np_, 2)
    for name in ALL:
        for n in nps:
            assert len(t[(name, n)]) == _rows(name), (name, n)
    assert doc["complete"] is True
    recs = doc["records"]
    assert len(recs) == sum(len(v) for v in t.values()) and all(r["status"] == "ok" for r in recs)
    for r in recs:
        b = mpi4.FAMILY.get(r["benchmark"])
        assert r["repetitions"] == 20
        if b.expected is not None:
            assert r["defects"] is not None and r["defects"] <= policy.TOL, r
        if b.kind in (Kind.OVERLAP, Kind.OVERLAP_SYNC):
            rt = r["rank_times"]
            assert all(
                rt["t_ovrl"][k] >= rt["t_cpu"][k] > 0 and rt["t_pure"][k] > 0
                for k in range(r["np"])
            )
            assert 0.0 <= r["values"]["overlap"] <= 100.0
        else:
            assert 0 < r["values"]["t_min"] <= r["values"]["t_avg"] <= r["values"]["t_max"]


@pytest.mark.parametrize("np_,bad", [(2, 0), (2, 1), (4, 3)])
def test_check_mode_catches_a_corrupted_sender(np_, bad):
    """Root 0 fixed (imb2021): Bcast/Scatterv from another rank are only seen by the per-root
    sweep."""
    names = [
        "Bcast_persist",
        "Scatterv_persist_pure",
        "Gather_persist",
        "Reduce_scatter_persist_pure",
        "Alltoall_persist",
        "Barrier_persist",
    ]
    p = mpiexec(
        np_,
        "run",
        *ARGS,
        "--methodology",
        "imb2021",
        "-check",
        "-o",
        "-",
        *names,
        env={"COMMBENCH_FAULT_CORRUPT": str(bad)},
    )
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    assert "!!!!  5  BENCHMARKS FAILED     !!!! " in p.stdout
    for name in names[:-1]:
        assert f"{name}    : FAILED !! " in p.stdout
    assert "Barrier_persist    : not checked" in p.stdout


def test_cpu_factor_reaches_the_kernel(tmp_path):
    """--mpi4-cpu-factor is recorded and sizes the computation to F·t_pure (as IMB-NBC's)."""
    sizes = tmp_path / "sizes"
    sizes.write_text("0\n64\n")
    _, doc = run_json(
        tmp_path,
        2,
        "-iter",
        "10",
        "-iter_policy",
        "off",
        "-msglen",
        str(sizes),
        "--mpi4-cpu-factor",
        "50",
        "Alltoall_persist",
    )
    assert doc["config"]["params"] == {"mpi4_cpu_factor": 50.0}
    assert [r["bytes"] for r in doc["records"]] == [0, 64]
    for r in doc["records"]:
        rt = r["rank_times"]
        assert all(rt["t_cpu"][k] >= 10 * rt["t_pure"][k] for k in range(2)), (r["bytes"], rt)
