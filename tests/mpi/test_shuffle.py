"""--shuffle <seed|random>: sizes and benchmarks measured in an order drawn from a recorded seed,
in real MPI runs. The order the plan draws, and the seed random records:
tests/unit/test_shuffle.py."""

from __future__ import annotations

from commbench.records import Measurement
from commbench.views import series
from tests.support.mpirun import mpiexec, run_json, tables

ARGS = ("PingPong", "Sendrecv", "-msglog", "0:8", "-iter", "20")
IMB_SIZES = [0, 1, 2, 4, 8, 16, 32, 64, 128, 256]


def _measured(doc: dict) -> list[tuple[str, int]]:
    recs = sorted(doc["records"], key=lambda r: r["extra"]["position"])
    assert [r["extra"]["position"] for r in recs] == list(range(len(recs)))
    assert recs == doc["records"]  # stored (and printed) as measured
    return [(r["benchmark"], r["bytes"]) for r in recs]


def test_the_same_seed_gives_the_same_order_and_every_size_once(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, doc_a = run_json(tmp_path / "a", 2, *ARGS, "--shuffle", "7")
    _, doc_b = run_json(tmp_path / "b", 2, *ARGS, "--shuffle", "7")
    order = _measured(doc_a)
    assert order == _measured(doc_b)
    assert (
        doc_a["config"]["measuring"]["shuffle"] == 7
        and doc_a["config"]["measuring"]["shuffle_seed"] == 7
    )
    for name in ("PingPong", "Sendrecv"):
        sizes = [x for b, x in order if b == name]
        assert sorted(sizes) == IMB_SIZES and sizes != IMB_SIZES  # each once, not in IMB's order
        printed = [int(r[0]) for r in tables(a.stdout)[(name, 2)]]
        assert printed == sizes
    assert (
        "shuffled, seed 7 (sizes of each sweep and benchmarks); rows are printed as measured"
        in a.stdout
    )
    tabs = series.from_records(
        [Measurement.from_dict(r) for r in doc_a["records"]]
    )  # plots and --fit
    assert len(tabs) == 2 and all(list(t.n) == sorted(IMB_SIZES) for t in tabs)


def test_random_records_the_seed_that_repeats_the_run(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _, doc = run_json(tmp_path / "a", 2, *ARGS, "--shuffle", "random")
    m = doc["config"]["measuring"]
    assert m["shuffle"] == "random" and isinstance(m["shuffle_seed"], int)
    _, again = run_json(tmp_path / "b", 2, *ARGS, "--shuffle", str(m["shuffle_seed"]))
    assert _measured(doc) == _measured(again)


def test_shuffled_sizes_keep_the_repetitions_of_imb_order(tmp_path):
    """-iter 1000,1: n0 = min(1000, 1 MiB / X). Had the policy taken the previous size's n
    as a cap (IMB's rule for ascending sizes), a large size measured early would cut
    every later one."""
    _, doc = run_json(
        tmp_path, 2, "PingPong", "-msglog", "0:20", "-iter", "1000,1", "--shuffle", "3"
    )
    order = [r["bytes"] for r in doc["records"]]
    assert order[0] == 2**20  # this seed measures 1 MiB first
    for r in doc["records"]:
        assert r["repetitions"] == (1000 if r["bytes"] == 0 else min(1000, 2**20 // r["bytes"])), r[
            "bytes"
        ]


def test_bad_shuffle_values_exit_2_on_every_rank():
    for argv, want in (
        (["--shuffle", "soon"], "--shuffle needs a seed (an integer >= 0) or 'random'"),
        (["--shuffle", "-3"], "--shuffle needs a seed"),
        (
            ["--suite", "overhead", "--shuffle", "3"],
            "--shuffle: the overhead family does not use it",
        ),
    ):
        p = mpiexec(2, "run", *argv, "-o", "-", timeout=60)
        assert p.returncode == 2, (argv, p.stderr[-1000:])
        assert want in p.stderr and "Traceback" not in p.stderr + p.stdout, (argv, p.stderr)
