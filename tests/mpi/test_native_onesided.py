"""The native engine's one-sided (IMB-EXT, IMB-RMA) and nonblocking (IMB-NBC, IMB-MPI4)
loops on real MPI: every benchmark of those families runs under --engine both with
-check, and the native rows have the same structure and the same check verdicts as
the mpi4py rows, with clean buffers and with a corrupted one (fault injection).
"""

import json

import pytest

from commbench.suites import ext, mpi4, nbc, rma
from tests.mpi.test_native import needs_native
from tests.support.mpirun import mpiexec, run_json

FAST = ["-iter", "20", "-time", "10", "-check", "--engine", "both"]
FAMILIES = {"ext": ext, "rma": rma, "nbc": nbc, "mpi4": mpi4}
NEVER_CHECKED = {"Window", "Ibarrier", "Ibarrier_pure", "Barrier_persist", "Barrier_persist_pure"}


def _all(family: str) -> list[str]:
    return [b.name for b in FAMILIES[family].BENCHMARKS]


def _rows(doc: dict) -> dict:
    """(benchmark, np, mode, bytes) -> {engine: record}."""
    out: dict = {}
    for r in doc["records"]:
        out.setdefault((r["benchmark"], r["np"], r["mode"], r["bytes"]), {})[
            r["extra"]["engine"]
        ] = r
    return out


def _same_rows_and_verdicts(doc: dict) -> dict:
    """Both engines measured every row alike; {row: verdict}."""
    verdicts = {}
    for key, by_engine in _rows(doc).items():
        assert set(by_engine) == {"native", "mpi4py"}, key
        nat, py = by_engine["native"], by_engine["mpi4py"]
        assert nat["status"] == py["status"] == "ok", (key, nat["message"], py["message"])
        assert nat["repetitions"] == py["repetitions"], key
        assert nat["components"] == py["components"], key
        assert nat["values"].keys() == py["values"].keys(), key
        for c in nat["components"]:  # the same ranks report times (targets: none)
            assert [t is None or t < 0 for t in nat["rank_times"][c]] == [
                t is None or t < 0 for t in py["rank_times"][c]
            ], (key, c)
        assert nat["extra"].get("check") == py["extra"].get("check"), key
        verdicts[key] = nat["extra"].get("check")
    return verdicts


@needs_native
@pytest.mark.parametrize(
    ("family", "np_", "opts", "names"),
    [
        ("ext", 2, [], None),
        ("rma", 2, [], None),
        (
            "rma",
            3,
            [],
            [
                "One_put_all",
                "One_get_all",
                "All_put_all",
                "All_get_all",
                "Put_all_local",
                "Get_all_local",
                "Exchange_put",
                "Exchange_get",
            ],
        ),
        (
            "nbc",
            2,
            ["--methodology", "imb2021"],
            None,
        ),  # -sync 1: every call timed alone, fixed root
        (
            "mpi4",
            2,
            ["--methodology", "imb4"],
            None,
        ),  # the root rotating: the requests of each root
    ],
)
def test_native_same_rows_and_verdicts_as_mpi4py(tmp_path, family, np_, opts, names):
    names = names or _all(family)
    p, doc = run_json(tmp_path, np_, "--suite", family, *FAST, "-msglog", "0:3", *opts, *names)
    assert doc["metadata"]["engine"] == "both"
    assert "native engine unavailable" not in p.stderr
    verdicts = _same_rows_and_verdicts(doc)
    assert {k[0] for k in verdicts} == set(names)
    for key, verdict in verdicts.items():
        assert verdict == ("not checked" if key[0] in NEVER_CHECKED else "successful"), key
    assert "BENCHMARKS SUCCESSFUL" in p.stdout and "FAILED" not in p.stdout


@needs_native
@pytest.mark.parametrize(
    ("family", "names"),
    [
        ("ext", ["Unidir_Put", "Bidir_Get", "Accumulate"]),
        (
            "rma",
            [
                "Unidir_put",
                "Unidir_get",
                "One_get_all",
                "Exchange_get",
                "Get_accumulate",
                "Compare_and_swap",
                "Truly_passive_put",
            ],
        ),
        ("nbc", ["Ibcast", "Iallreduce_pure", "Ialltoallv"]),
        ("mpi4", ["Gather_persist", "Reduce_scatter_persist_pure"]),
    ],
)
def test_corrupted_send_data_gives_the_same_verdicts(tmp_path, family, names):
    # Rank 0 sends corrupted data: every row fails on both engines but the rows whose
    # verifier cannot see rank 0's data (get origins) and those of 0 bytes.
    out = tmp_path / "r.json"
    p = mpiexec(
        2,
        "run",
        "--suite",
        family,
        *FAST,
        "-msglog",
        "2:3",
        *names,
        "-o",
        str(out),
        env={"COMMBENCH_FAULT_CORRUPT": "0"},
    )
    assert p.returncode == 1, p.stderr[-2000:]
    verdicts = _same_rows_and_verdicts(json.loads(out.read_text()))
    silent = {"Unidir_get", "One_get_all"}  # rank 0 is the get origin: its data is read by no one
    for key, verdict in verdicts.items():
        assert verdict == ("successful" if key[0] in silent or key[3] == 0 else "failed"), key
