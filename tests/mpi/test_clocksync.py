"""--sync-start window as real MPI jobs: clocks synchronized, collectives started at a common time.

Each rank's clock gets an injected offset (and drift) with
COMMBENCH_FAULT_CLOCK_OFFSET; the estimator (SKaMPI's ping-pong offsets over
HCA's binomial tree, commbench.harness.clocksync) must recover it within the
error bound it reports. On one host MPI_Wtime is one clock for every rank, so
the injected offset is the whole true offset. Late starts depend on the load
of this shared machine: only their bookkeeping is asserted, not their number.
"""

from __future__ import annotations

import pytest

from tests.support.mpirun import mpiexec, run_json, tables

INJECT = {1: 0.25, 2: -0.1}  # seconds: rank 1 ahead of rank 0, rank 2 behind
ENV = {"COMMBENCH_FAULT_CLOCK_OFFSET": ",".join(f"{r}:{o}" for r, o in INJECT.items())}


def _check_sync(rec: dict, drift: dict[int, float] | None = None) -> None:
    s = rec["extra"]["sync"]
    members = [r for g in rec["groups"] for r in g]
    assert s["reference"] == [g[0] for g in rec["groups"]]
    for r in range(rec["world_size"]):
        if r not in members:
            assert s["offsets"][r] is None and s["late"][r] is None
            continue
        ref = s["reference"][next(i for i, g in enumerate(rec["groups"]) if r in g)]
        if r == ref:
            assert s["offsets"][r] == 0.0 and s["errors"][r] == 0.0
        elif drift is None:
            truth = INJECT.get(r, 0.0) - INJECT.get(ref, 0.0)
            assert abs(s["offsets"][r] - truth) <= s["errors"][r], (
                r,
                s["offsets"][r],
                truth,
                s["errors"][r],
            )
        else:
            assert s["drift_errors"][r] is not None
            assert abs(s["drifts"][r] - drift.get(r, 0.0)) <= s["drift_errors"][r], (r, s)
            # and the bound is tight enough to say something: under half the injected drift,
            # so the estimate has its sign and is within 50 % of its size (a bound of any
            # width would pass the line above)
            assert s["drift_errors"][r] < abs(drift[r]) / 2, (r, s)
        assert 0 <= s["late"][r] <= s["invalid"]
    assert s["error"] == max(e for e in s["errors"] if e is not None) < 1e-3
    assert (
        max(x for x in s["late"] if x is not None)
        <= s["invalid"]
        <= sum(x for x in s["late"] if x is not None)
    )
    assert s["invalid"] <= s["repetitions"] == rec["repetitions"]
    assert s["window"] > 0
    if (
        s["invalid"] < s["repetitions"]
    ):  # the valid repetitions' times: no trace of the 0.25 s offsets
        assert 0 < rec["values"]["t_max"] < 1e5


@pytest.mark.parametrize("np_", [2, 4])
def test_recovers_injected_offsets(tmp_path, np_):
    p, doc = run_json(
        tmp_path,
        np_,
        "Allreduce",
        "Bcast",
        "PingPong",
        "-msglog",
        "0:2",
        "-iter",
        "100",
        "--sync-start",
        "window",
        env=ENV,
    )
    coll = [r for r in doc["records"] if r["kind"] == "collective"]
    assert {r["np"] for r in coll} == ({2} if np_ == 2 else {2, 4})
    for rec in coll:
        _check_sync(rec)
        assert rec["extra"]["sync"]["injected"] == {str(r): [o, 0.0] for r, o in INJECT.items()}
        assert "per_iteration" not in rec["extra"]
    if (
        np_ == 2
    ):  # two ranks on two cores: the starts work (a broken conversion would make all late)
        assert sum(r["extra"]["sync"]["invalid"] for r in coll) < sum(
            r["repetitions"] for r in coll
        )
    assert not any("sync" in r["extra"] for r in doc["records"] if r["kind"] != "collective")
    assert "late" in p.stdout and "# Start of collectives" in p.stdout


def test_recovers_injected_drift(tmp_path):
    """Rank 1's clock runs 1 % fast; the estimate lies within its bound, a bound under half of
    that (quiet: ~3e-4, docs/statistics.md)."""
    drift = {1: 1e-2}
    _, doc = run_json(
        tmp_path,
        2,
        "Allreduce",
        "-msglog",
        "0:1",
        "-iter",
        "200",
        "--sync-start",
        "window",
        env={"COMMBENCH_FAULT_CLOCK_OFFSET": "1:0:1e-2"},
    )
    for rec in doc["records"]:
        _check_sync(rec, drift=drift)


def test_window_with_per_iteration(tmp_path):
    p, doc = run_json(
        tmp_path,
        2,
        "Allreduce",
        "Barrier",
        "Sendrecv",
        "-msglog",
        "0:2",
        "-iter",
        "60",
        "--sync-start",
        "window",
        "--per-iteration",
        env=ENV,
    )
    for rec in doc["records"]:
        st = rec["extra"]["per_iteration"]
        if rec["benchmark"] == "Sendrecv":  # not a collective: barrier-aligned
            assert st["start"] == "barrier" and "sync" not in rec["extra"]
            continue
        _check_sync(rec)
        s = rec["extra"]["sync"]
        assert st["start"] == "window" and st["n"] == s["repetitions"] - s["invalid"] == len(
            st["values"]
        )
        shown = [
            st[k] if st[k] is not None else st["refused"].get(k)
            for k in ("p50", "p90", "p99", "max")
        ]
        if st["n"]:
            assert shown == sorted(shown)
    heads = [
        line.split()
        for line in p.stdout.splitlines()
        if line.strip().startswith(("#bytes", "#repetitions"))
    ]
    assert heads[0][-5:] == ["late", "P50[usec]", "P90[usec]", "P99[usec]", "max[usec]"]
    assert "late" not in heads[2]  # Sendrecv
    rows = tables(p.stdout)[("Allreduce", 2)]
    assert [int(r[heads[0].index("late")]) for r in rows] == [
        r["extra"]["sync"]["invalid"] for r in doc["records"] if r["benchmark"] == "Allreduce"
    ]


@pytest.mark.parametrize(
    "value,words",
    [
        ("1=0.25", "'1=0.25' is not rank:seconds[:drift]"),
        ("1:0.25:0.5", "|drift| < 0.1"),
    ],
)
def test_bad_fault_values_exit_2(value, words):
    p = mpiexec(
        2,
        "run",
        "Allreduce",
        "--sync-start",
        "window",
        timeout=60,
        env={"COMMBENCH_FAULT_CLOCK_OFFSET": value},
    )
    assert p.returncode == 2, p.stdout + p.stderr
    errors = [line for line in p.stderr.splitlines() if line.startswith("commbench: error: ")]
    assert len(errors) == 1 and words in errors[0], p.stderr
    assert "Traceback" not in p.stderr + p.stdout
