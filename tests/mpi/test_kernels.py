"""Kernel-level tests: benchmarks run through the Harness API, without the CLI.

On COMM_SELF inside the test process every per-size benchmark of every family
that can run on one process runs (two-process ones give their 'invalid' row),
with check mode on; at 2
ranks a small job (tests/support/kernel_job.py) drives the point-to-point, one-sided
and PGAS kernels. The end-to-end tests cover the same kernels through
`commbench run`; these isolate the kernel + harness layer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mpi4py import MPI

from commbench import policy, records, run_config, run_options, suites
from commbench.harness.core import Harness
from commbench.session import Session
from commbench.suites import option_use
from commbench.suites.base import Benchmark
from commbench.views import Collector
from tests.support.mpirun import ENV, MPIEXEC

FAST = ["-iter", "3", "-iter_policy", "off", "-msglog", "0:3", "-check"]
KERNEL_FAMILIES = ("mpi1", "ext", "rma", "nbc", "mpi4", "comms", "pgas", "io")


def fast(family: str, names: list[str]) -> list[str]:
    """FAST less what none of these benchmarks uses (-msglog for Barrier, -check without a
    verifier): a run refuses an option it would not use (commbench.suites.option_use)."""
    fam, out, i = suites.family(family), [], 0
    while i < len(FAST):
        opt = next(o for o in run_options.OPTIONS if FAST[i] in o.names)
        given = FAST[i : i + (1 if opt.parse is None else 2)]
        i += len(given)
        values = run_options.split_run_argv(given)[0]
        if (
            option_use.why_unused(
                opt,
                fam,
                names,
                values,
                run_options.OPTIONS,
                run_options.RUN_LEVEL,
                suites.families,
            )
            is None
        ):
            out += given
    return out


def run_self(family: str, names: list[str], *extra: str, corrupt: bool = False) -> tuple[list, int]:
    """One in-process run on COMM_SELF: (records, check failures)."""
    # No world size: the per-world checks would refuse a run of only 2-rank benchmarks on
    # one process (nothing to measure); here the harness's 'invalid' rows are the point.
    cfg = run_config.parse_run_args(["--suite", family, *names, *fast(family, names), *extra])
    sink = Collector()
    session = Session(cfg, MPI.COMM_SELF, [sink])
    session.corrupt = corrupt
    failures = Harness(session).run()
    return sink.records, failures


def _kernel_benchmarks():
    for fam in KERNEL_FAMILIES:
        if suites.family(fam).min_world > 1:
            continue  # PGAS pairs: at 2 ranks below
        for b in suites.family(fam).benchmarks:
            assert isinstance(b, Benchmark), f"{fam}.{b.name} is not a kernel benchmark"
            yield pytest.param(fam, b, id=f"{fam}-{b.name}")


@pytest.mark.parametrize(("family", "bench"), list(_kernel_benchmarks()))
def test_every_kernel_runs_on_comm_self(family, bench, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    extra = ["--iodir", str(tmp_path)] if family == "io" else []
    recs, failures = run_self(family, [bench.name], *extra)
    assert recs, "no record"
    assert {r.benchmark for r in recs} == {bench.name}
    if not bench.procs.allows(1):
        assert [r.status for r in recs] == [records.INVALID]
        return
    assert all(r.status == records.OK for r in recs), [(r.bytes, r.status, r.message) for r in recs]
    assert failures == 0, [(r.bytes, r.defects) for r in recs]
    if bench.expected is not None:
        assert all(r.defects is not None and r.defects <= policy.TOL for r in recs)
    sizes = [r.bytes for r in recs if r.mode == bench.modes[0]]
    if bench.has_size and not bench.fixed_sizes:
        assert sizes == [s for s in (0, 1, 2, 4, 8) if s % bench.unit == 0]
    assert all(r.values for r in recs), "a row without numbers"


# Collectives whose verifier reads data that came through MPI even at NP 1 (the
# root receives its own block): a corrupted send buffer must be caught.
CAUGHT_AT_NP1 = [
    "Allreduce",
    "Reduce",
    "Reduce_scatter",
    "Allgather",
    "Allgatherv",
    "Gather",
    "Gatherv",
    "Scatter",
    "Scatterv",
    "Alltoall",
    "Alltoallv",
]


@pytest.mark.parametrize("name", CAUGHT_AT_NP1)
def test_a_corrupted_buffer_is_caught_at_kernel_level(name):
    recs, failures = run_self("mpi1", [name], corrupt=True)
    assert failures == 1
    assert any(r.defects and r.defects > policy.TOL for r in recs)


def kernel_job(np_: int, family: str, *names: str, options: tuple[str, ...] = ()) -> list[dict]:
    cmd = [
        MPIEXEC,
        "-n",
        str(np_),
        sys.executable,
        str(Path(__file__).parents[1] / "support" / "kernel_job.py"),
        family,
        *names,
        "--",
        *fast(family, list(names)),
        *options,
    ]
    p = subprocess.run(
        cmd, capture_output=True, text=True, timeout=180, env=dict(os.environ, **ENV)
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


@pytest.mark.parametrize(
    ("family", "names"),
    [
        ("mpi1", ["PingPong", "PingPing", "Sendrecv", "Exchange", "Bcast", "Barrier"]),
        ("comms", ["COMMS1", "COMMS2"]),
        ("ext", ["Unidir_Put", "Bidir_Get", "Accumulate"]),
        ("rma", ["Unidir_put", "One_put_all", "Exchange_get", "Fetch_and_op"]),
        ("pgas", ["PutGet_latency", "Strided_put_bw", "Random_get_bw", "Reduction_inplace"]),
    ],
)
def test_kernels_at_two_ranks(family, names):
    out = kernel_job(2, family, *names)
    rows, summary = out[:-1], out[-1]
    assert summary == {"check_failures": 0}
    assert {r["benchmark"] for r in rows} == set(names)
    two = [r for r in rows if r["np"] == 2]
    assert two and all(r["status"] == "ok" and r["t"] is not None and r["t"] >= 0 for r in two)
