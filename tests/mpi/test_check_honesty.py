"""Check mode says only what it checked (issue: "Check mode says only what it checked").

Every benchmark of every family either has a verifier that fails on a
corrupted buffer (the fault injection COMMBENCH_FAULT_CORRUPT=<rank> makes that
rank send corrupted data) or is reported as "not checked" — in the results
(record extra "check") and in the IMB trailer — never "Successful".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from commbench import run_options, suites
from commbench.suites import option_use
from commbench.suites.base import Benchmark
from tests.support.check_families import DRIVER_FAMILIES, KERNEL_FAMILIES
from tests.support.mpirun import ENV, MPIEXEC, mpiexec, run_json


def check_options(iters: int = 40, msglog: str = "0:5") -> list[str]:
    """> 32 repetitions: repeated in-place sums wrap to 0 mod 2^32 after 32 at NP 2.
    Sizes up to 32 bytes: at NP 4 every rank holds a share of a split IO buffer."""
    return ["-iter", str(iters), "-iter_policy", "off", "-msglog", msglog, "-check"]


def _ranks(*r):
    return lambda np_: set(r)


def _upper(np_):
    return set(range(np_ // 2, np_))


def _lower(np_):
    return set(range(np_ // 2))


def _all_but_0(np_):
    return set(range(1, np_))


# Group ranks whose own data no verifier can see, by the benchmark's design:
# put targets and accumulate targets (their window starts as zeros), get
# origins (they read, their buffers are not read), COMMS1's echoing rank (it
# returns what it received) and an IO read's processes other than the file's
# creator of a shared file (the file is the data), Exscan's last rank. A corrupted buffer
# anywhere else must fail.
SILENT = {
    ("ext", "Unidir_Get"): _ranks(1),  # reference: rank 1 gets from rank 0
    ("ext", "Unidir_Put"): _ranks(1),
    ("comms", "COMMS1"): _ranks(1),
    ("mpi1", "Uniband"): _upper,  # the second half only receives (and acks with a byte of its own)
    **{
        ("rma", b): _ranks(1)
        for b in (
            "Unidir_put",
            "Put_local",
            "Accumulate",
            "Get_accumulate",
            "Fetch_and_op",
            "Compare_and_swap",
            "Truly_passive_put",
        )
    },
    **{("rma", b): _ranks(0) for b in ("Unidir_get", "Get_local", "One_get_all", "Get_all_local")},
    ("rma", "One_put_all"): _all_but_0,
    ("rma", "Put_all_local"): _all_but_0,
    # MPI_Exscan: the last rank's data reaches no rank (rank i gets ranks 0 … i-1's sum)
    **{
        (f, b): lambda np_: {np_ - 1}
        for f, b in (
            ("mpi1", "Exscan"),
            ("nbc", "Iexscan"),
            ("nbc", "Iexscan_pure"),
            ("mpi4", "Exscan_persist"),
            ("mpi4", "Exscan_persist_pure"),
        )
    },
    ("pgas", "Put_bw"): _upper,  # the pairs' upper halves are the targets
    ("pgas", "Strided_put_bw"): _upper,
    ("pgas", "Get_bw"): _lower,
    ("pgas", "Strided_get_bw"): _lower,
    **{
        ("io", b.name): _all_but_0
        for b in suites.family("io").benchmarks
        if b.variant is not None and not b.variant.write and not b.variant.per_process
    },
}


def _if_used(family: str, names: list[str], flag: str, value: str) -> list[str]:
    """[flag, value] where a benchmark of names uses it (comms has no NP sequence: -npmin is
    refused there, commbench.suites.option_use), else nothing."""
    opt = next(o for o in run_options.OPTIONS if flag in o.names)
    values = run_options.split_run_argv([flag, value])[0]
    fam = suites.family(family)
    why = option_use.why_unused(
        opt, fam, names, values, run_options.OPTIONS, run_options.RUN_LEVEL, suites.families
    )
    return [flag, value] if why is None else []


def verdicts(family: str, np_: int, corrupt: int | None, tmp_path: Path) -> dict[str, set[str]]:
    """benchmark -> the check verdicts of its rows at np_ processes, from a kernel-level run."""
    # fixed-size benchmarks run in the 2-process jobs only (see the test below)
    names = [b.name for b in suites.family(family).benchmarks if np_ == 2 or b.procs.fixed is None]
    check, extra = check_options(), []
    if family == "io":  # no in-place sums to wrap: 10 repetitions, a third of the time
        # File IO on oversubscribed cores is the suite's slowest check (~7 s a run at NP 4):
        # the corrupted runs take the two largest sizes, where every rank holds a share of
        # the buffer; the clean run keeps every size (no false failure at any).
        check = check_options(10, "0:5" if corrupt is None else "4:5")
        extra = ["--iodir", str(tmp_path)]
    env = dict(os.environ, **ENV)
    if corrupt is not None:
        env["COMMBENCH_FAULT_CORRUPT"] = str(corrupt)
    cmd = [
        MPIEXEC,
        "-n",
        str(np_),
        sys.executable,
        str(Path(__file__).parents[1] / "support" / "kernel_job.py"),
        family,
        *names,
        "--",
        *check,
        *_if_used(family, names, "-npmin", str(np_)),
        *extra,
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    out: dict[str, set[str]] = {}
    for line in p.stdout.splitlines():
        row = json.loads(line) if line.startswith("{") else {}
        if "benchmark" in row and row["status"] == "ok" and (np_ == 2 or row["np"] == np_):
            out.setdefault(row["benchmark"], set()).add(row["check"])
    return out


@pytest.mark.parametrize("np_", [2, 4])
@pytest.mark.parametrize("family", KERNEL_FAMILIES)
def test_every_verifier_fails_on_a_corrupted_buffer_or_says_not_checked(family, np_, tmp_path):
    """The fault injection on each rank in turn: every verifier reports it, except
    on a rank whose data the benchmark never moves (SILENT, with the reason)."""
    # fixed-size benchmarks (2 ranks, IMB-IO's S_ on 1) run in the 2-process jobs
    benches = [
        b
        for b in suites.family(family).benchmarks
        if b.procs.minimum <= np_ and (b.procs.fixed is None or np_ == 2)
    ]
    clean = verdicts(family, np_, None, tmp_path)
    bad = {r: verdicts(family, np_, r, tmp_path) for r in range(np_)}
    missed = []
    for b in benches:
        assert isinstance(b, Benchmark)
        if b.expected is None:
            assert clean[b.name] == {"not checked"}, b.name
            assert all(v[b.name] == {"not checked"} for v in bad.values()), b.name
            continue
        assert clean[b.name] == {"successful"}, (b.name, clean[b.name])
        silent = SILENT.get((family, b.name), _ranks())(np_)
        members = range(b.procs.fixed or np_)  # a rank outside the group sends nothing
        missed += [
            (b.name, r) for r in members if r not in silent and "failed" not in bad[r][b.name]
        ]
        # the table must not excuse a rank whose corruption is in fact caught
        assert not [r for r in silent if "failed" in bad[r][b.name]], (b.name, "not silent")
    assert not missed, f"corruption on these (benchmark, rank) passed the check: {missed}"


@pytest.mark.parametrize("family", list(DRIVER_FAMILIES))
def test_driver_families_refuse_check(family, tmp_path):
    """No verifier looks at their data, so -check is refused, not recorded as used."""
    p = mpiexec(
        2,
        "run",
        "--suite",
        family,
        "-check",
        *DRIVER_FAMILIES[family],
        "-o",
        str(tmp_path / "r.json"),
    )
    assert p.returncode == 2 and f"-check: the {family} family does not use it" in p.stderr, (
        p.stderr[-2000:]
    )
    assert not (tmp_path / "r.json").exists()


def test_trailer_names_the_unchecked(tmp_path):
    p, _ = run_json(tmp_path, 2, "-check", "-msglog", "0:2", "-iter", "5", "Allreduce", "Barrier")
    assert "!!!!  ALL CHECKED BENCHMARKS SUCCESSFUL; 1 NOT CHECKED !!!! " in p.stdout
    assert "Allreduce    : Successful" in p.stdout
    assert "Barrier    : not checked (no verifier looked at its data)" in p.stdout
    assert "Barrier    : Successful" not in p.stdout
