"""--per-iteration as real MPI jobs: every repetition timed on its own, P50/P90/P99/max per row.

Timings are never asserted (the machine is shared): what is checked is the
layout (IMB's columns kept, the percentile columns appended only with the
option), that the numbers follow from the recorded repetitions (order
statistics, their CIs, the slowest rank per repetition), the timer floor and
the refusal of percentiles below it (a coarse timer injected with
COMMBENCH_FAULT_TIMER_TICK), and that call i of a native C loop uses its own
slot and root (check mode verifies every slot).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from tests.support.imb_layout import layout
from tests.support.mpirun import ENV, MPIEXEC, mpiexec, run_json, tables

P_COLS = ("P50[usec]", "P90[usec]", "P99[usec]", "max[usec]")
QS = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))
SMALL = ["-msglog", "0:3", "-iter", "30", "-time", "10"]


def _headers(text: str) -> list[tuple[str, ...]]:
    return [e for e in layout(text) if e[0] in ("#bytes", "#repetitions")]


def _check_distribution(rec: dict) -> None:
    """The row's percentiles are the order statistics of its per-repetition maxima."""
    st = rec["extra"]["per_iteration"]
    members = [r for g in rec["groups"] for r in g]
    timed = [st["rank_values"][r] for r in members if st["rank_values"][r] is not None]
    assert timed and all(len(v) == st["repetitions"] for v in timed)
    per_rep = np.max(np.array(timed), axis=0)
    assert np.allclose(per_rep, st["values"])  # barrier start: every repetition counts
    assert st["n"] == st["repetitions"] == rec["repetitions"] == len(st["values"])
    values = np.array(st["values"])
    assert st["floor"] == pytest.approx(st["resolution"] + st["overhead"])
    assert st["resolution"] > 0 and st["overhead"] >= 0 and st["wtick"] > 0
    shown = []
    for name, q in (*QS, ("max", 1.0)):
        v = st[name] if st[name] is not None else st["refused"][name]
        expect = values.max() if q == 1 else np.quantile(values, q, method="inverted_cdf")
        assert v == pytest.approx(expect)
        assert (st[name] is None) == (v < st["floor"]), (name, v, st["floor"])
        ci = st["ci95"][name]
        if ci is not None:
            assert (ci[0] is None or ci[0] <= v) and (ci[1] is None or v <= ci[1])
        shown.append(v)
    assert shown == sorted(shown)  # P50 <= P90 <= P99 <= max


def test_columns_only_with_the_option(tmp_path):
    names = ["PingPong", "Sendrecv", "Allreduce", "Barrier", "Uniband"]
    plain, _ = run_json(tmp_path, 2, *names, *SMALL)
    p, doc = run_json(tmp_path / "pi", 2, *names, *SMALL, "--per-iteration")
    before, after = _headers(plain.stdout), _headers(p.stdout)
    assert len(before) == len(after) == 5
    assert not any(c in h for h in before for c in P_COLS)  # without it: IMB's layout
    for b, a in zip(before, after):
        uniband = "Msg/sec" in b
        assert a == b if uniband else a == (*b, *P_COLS)
    assert "# Per-iteration" in p.stdout and "# Per-iteration" not in plain.stdout
    for head, rows in zip(after, tables(p.stdout).values()):
        assert rows and all(len(r) == len(head) for r in rows)
    for rec in doc["records"]:
        if rec["benchmark"] == "Uniband":
            assert "bandwidth row" in rec["extra"]["per_iteration"]["skipped"]
        else:
            _check_distribution(rec)


def test_refused_below_the_timer_floor(tmp_path):
    """A 1 ms timer: most repetitions read 0, below the floor, so P50 is refused ('-')."""
    env = {"COMMBENCH_FAULT_TIMER_TICK": "0.001"}
    p, doc = run_json(
        tmp_path, 2, "Allreduce", "-msglog", "0:2", "-iter", "40", "--per-iteration", env=env
    )
    for rec in doc["records"]:
        st = rec["extra"]["per_iteration"]
        assert st["resolution"] == pytest.approx(1000.0)
        assert st["p50"] is None and st["refused"]["p50"] < st["floor"]
        _check_distribution(rec)
    rows = tables(p.stdout)[("Allreduce", 2)]
    p50 = _headers(p.stdout)[0].index("P50[usec]")
    assert rows and all(r[p50] == "-" for r in rows)


def test_check_mode_and_groups_four_ranks(tmp_path):
    """End to end at 4 ranks: check mode passes with every call timed alone (rooted
    collectives, off-cache slots), and -multi 1 gives each group its percentiles."""
    names = ["Reduce", "Gather", "Scatterv", "Bcast", "Exchange"]
    p, doc = run_json(
        tmp_path,
        4,
        *names,
        "-check",
        "-off_cache",
        "1",
        "-msglog",
        "2:3",
        "-iter",
        "12",
        "--per-iteration",
    )
    assert "ALL BENCHMARKS SUCCESSFUL" in p.stdout, p.stdout[-2000:]
    for rec in doc["records"]:
        _check_distribution(rec)
    _, multi = run_json(
        tmp_path / "m",
        4,
        "Allreduce",
        "-multi",
        "1",
        "-npmin",
        "2",
        "-msglog",
        "0:1",
        "-iter",
        "20",
        "--per-iteration",
    )
    grouped = [r for r in multi["records"] if len(r["groups"]) == 2]
    assert grouped
    for rec in grouped:
        st = rec["extra"]["per_iteration"]
        assert len(st["groups"]) == 2 and all(g["n"] == rec["repetitions"] for g in st["groups"])
        worst = max(
            (g["max"] if g["max"] is not None else g["refused"]["max"]) for g in st["groups"]
        )
        assert worst == pytest.approx(st["max"] if st["max"] is not None else st["refused"]["max"])


JOB = """
import sys
from mpi4py import MPI
from commbench import run_config
from commbench.harness import iteration_times
from commbench.harness.core import Harness
from commbench.session import Session

engine, suite, mode, names = sys.argv[1], sys.argv[2], sys.argv[3].strip(), sys.argv[4:]
comm = MPI.COMM_WORLD
cfg = run_config.parse_run_args(["--suite", suite, *names, "-off_cache", "1", "-msglog", "2:3", "--per-iteration",
                             "-check", "--engine", engine], world_size=comm.Get_size())
h = Harness(Session(cfg, comm, []))
for bench in h.plan.benchmarks():
    layout = h.layout(comm.Get_size())
    ctx = h.prepare(bench, layout, mode, 8, 12)
    assert ctx.slots > 1
    h.engines_for(bench)
    ctx.rbuf[:] = 0  # every byte checked below comes from the per-repetition calls
    iteration_times.arm(ctx, cfg.measuring, engine)
    h.timed(ctx, 12, engine)
    iteration_times.finish(ctx)
    defect = comm.allreduce(bench.expected(ctx, 12) or 0.0, op=MPI.MAX)
    if comm.Get_rank() == 0:
        print(bench.name, defect, flush=True)
    h.close(ctx)
    layout.free()
"""  # noqa: E501


@pytest.mark.parametrize("engine", ["native", "mpi4py"])
@pytest.mark.parametrize(
    "np_,suite,mode,names",
    [
        (4, "mpi1", "", ["Reduce", "Bcast", "Scatterv", "Gather", "Allgather", "Exchange"]),
        (4, "nbc", "", ["Ibcast_pure", "Ireduce_pure", "Igatherv_pure"]),
        (2, "ext", "NON-AGGREGATE", ["Unidir_Put", "Bidir_Get", "Accumulate"]),
        (2, "rma", "NON-AGGREGATE", ["Unidir_put", "Bidir_get"]),
    ],
)
def test_call_i_alone_writes_call_is_slot_and_root(tmp_path, engine, np_, suite, mode, names):
    """Only the per-repetition calls write the receive buffers: every off-cache slot holds
    what call i (its slot, its rotating root) put there, or the verifier finds a defect."""
    job = tmp_path / "mpi_job.py"
    job.write_text(JOB)
    p = subprocess.run(
        [MPIEXEC, "-n", str(np_), sys.executable, str(job), engine, suite, mode or " ", *names],
        capture_output=True,
        text=True,
        timeout=180,
        env=dict(os.environ, **ENV),
    )
    assert p.returncode == 0, p.stdout + p.stderr
    got = dict(line.split() for line in p.stdout.splitlines() if line.split()[0] in names)
    assert len(got) == len(names) and all(float(d) == 0.0 for d in got.values()), got


@pytest.mark.parametrize(
    "argv,env,words",
    [
        (["--sync-start", "sometimes"], {}, "--sync-start must be one of barrier|window"),
        (
            ["--per-iteration"],
            {"COMMBENCH_FAULT_TIMER_TICK": "coarse"},
            "COMMBENCH_FAULT_TIMER_TICK: 'coarse'",
        ),
        (["--per-iteration"], {"COMMBENCH_FAULT_TIMER_TICK": "5"}, "0 < step <= 1"),
    ],
)
def test_bad_values_exit_2_on_every_rank(argv, env, words):
    p = mpiexec(2, "run", "Allreduce", *argv, timeout=60, env=env)
    assert p.returncode == 2, p.stdout + p.stderr
    errors = [line for line in p.stderr.splitlines() if line.startswith("commbench: error: ")]
    assert len(errors) == 1 and words in errors[0], p.stderr
    assert "Traceback" not in p.stderr + p.stdout and "# Benchmarking" not in p.stdout
