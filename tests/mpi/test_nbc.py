"""IMB-NBC in real MPI processes at 1, 2 and 4 ranks:
rows, columns, records, check mode, overlap. The catalog, the run list and
--nbc-cpu-factor, without MPI: tests/unit/test_nbc.py."""

import csv

import pytest

from commbench import policy, records
from commbench.suites import collops, nbc
from commbench.suites.base import Kind
from tests.support.mpirun import commbench, mpiexec, run_json, tables

ALL = [b.name for b in nbc.BENCHMARKS]
# -time generous so no row times out on a loaded 2-core machine; -iter bounds the work.
ARGS = ["-iter", "20", "-time", "10", "-msglog", "2", "-iter_policy", "auto"]
HEAD_OVERLAP = "       #bytes #repetitions t_ovrl[usec] t_pure[usec]  t_CPU[usec]   overlap[%]"
HEAD_IBARRIER = " #repetitions t_ovrl[usec] t_pure[usec]  t_CPU[usec]   overlap[%]"


def _rows_expected(name: str) -> int:
    b = nbc.FAMILY.get(name)
    return 1 if b.sync else len(policy.size_list(b.unit, 0, 2))


@pytest.mark.parametrize("np_", [1, 2, 4])
def test_every_benchmark_every_row(tmp_path, np_):
    csv_path = tmp_path / "r.csv"
    p, doc = run_json(tmp_path, np_, *ARGS, "-check", "--csv", str(csv_path), *ALL)
    out = p.stdout
    assert "#    commbench" in out and "MPI-NBC part" in out
    t = tables(out)
    nps = policy.np_sequence(np_, 2)
    for name in ALL:
        b = nbc.FAMILY.get(name)
        for n in nps:
            rows = t[(name, n)]
            assert len(rows) == _rows_expected(name), (name, n, rows)
            width = {Kind.OVERLAP: 7, Kind.OVERLAP_SYNC: 5, Kind.COLLECTIVE: 6, Kind.SYNC: 4}[
                b.kind
            ]
            for r in rows:
                assert len(r) == width, (name, r)  # check mode: defects column except sync-type
                assert all(float(v) >= 0 for v in r)
    overlap = sum(nbc.FAMILY.get(n).kind == Kind.OVERLAP for n in ALL)  # 12 of IMB's, Iscan …
    assert overlap == 12 + len(collops.OURS)
    assert out.count(HEAD_OVERLAP + "      defects\n") == overlap * len(nps)
    assert out.count(HEAD_IBARRIER + "\n") == len(nps)
    unchecked = out.count(
        ": not checked (no verifier looked at its data)"
    )  # Ibarrier(_pure): no data
    assert (
        unchecked >= 1
        and f"!!!!  ALL CHECKED BENCHMARKS SUCCESSFUL; {unchecked} NOT CHECKED !!!! " in out
    )
    assert "Ibarrier    : not checked (no verifier looked at its data)" in out
    assert "# All processes entering MPI_Finalize" in out

    assert doc["complete"] is True
    recs = [r for r in doc["records"] if r["status"] == "ok"]
    assert len(recs) == len(doc["records"]) == sum(len(v) for v in t.values())
    for r in recs:
        b = nbc.FAMILY.get(r["benchmark"])
        v = r["values"]
        if b.expected is not None:
            assert r["defects"] is not None and r["defects"] <= policy.TOL
        if b.root_based:  # -iter_policy auto: multiple_np, every rank root equally often
            assert r["repetitions"] % r["np"] == 0
            assert r["repetitions"] == policy.multiple_np_repetitions(
                r["bytes"] or 0, r["np"], 20, 2
            )
        else:
            assert 1 <= r["repetitions"] <= 20
        if b.kind in (Kind.OVERLAP, Kind.OVERLAP_SYNC):
            rt = r["rank_times"]
            ranks = range(r["np"])
            # every rank's loop contains its computation
            assert all(rt["t_ovrl"][k] >= rt["t_cpu"][k] > 0 and rt["t_pure"][k] > 0 for k in ranks)
            worst = max(ranks, key=lambda k: rt["t_ovrl"][k])  # the row is this rank's triple
            assert v["rank"] == worst
            assert v["t_ovrl"] == pytest.approx(rt["t_ovrl"][worst] * 1e6)
            assert v["t_pure"] == pytest.approx(rt["t_pure"][worst] * 1e6)
            assert v["t_cpu"] == pytest.approx(rt["t_cpu"][worst] * 1e6)
            assert 0.0 <= v["overlap"] <= 100.0
            assert v["overlap"] == pytest.approx(
                records.overlap_percent(
                    rt["t_ovrl"][worst], rt["t_pure"][worst], rt["t_cpu"][worst]
                )
            )
            printed = t[(r["benchmark"], r["np"])]
            row = next(x for x in printed if b.sync or int(x[0]) == r["bytes"])
            assert row[-2 if not b.sync else -1] == f"{v['overlap']:.2f}"
        else:
            assert v["t_min"] <= v["t_avg"] <= v["t_max"]

    with open(csv_path) as f:
        rows = [x for x in csv.DictReader(f)]
    assert len(rows) == len(recs)
    for rec, row in zip(recs, rows):
        assert row["benchmark"] == rec["benchmark"]
        if rec["kind"] in ("overlap", "overlap_sync"):
            assert float(row["overlap_pct"]) == pytest.approx(
                rec["values"]["overlap"], rel=1e-5, abs=1e-9
            )

    # the text rebuilt from the results file is the live text
    rep = commbench("report", str(tmp_path / f"r{np_}.json"))
    assert rep.returncode == 0, rep.stderr
    assert tables(rep.stdout) == t


def test_check_mode_catches_corrupted_data(tmp_path):
    p = mpiexec(
        2,
        "run",
        *ARGS,
        "-check",
        "-o",
        "-",
        "Ibcast",
        "Iallreduce_pure",
        "Ialltoallv",
        "Ibarrier",
        env={"COMMBENCH_FAULT_CORRUPT": "1"},
    )
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    assert "!!!!  3  BENCHMARKS FAILED     !!!! " in p.stdout
    for name in ("Ibcast", "Iallreduce_pure", "Ialltoallv"):
        assert f"{name}    : FAILED !! " in p.stdout
    assert "Ibarrier    : not checked" in p.stdout  # moves no data: no verifier


def test_cpu_factor_reaches_the_kernel(tmp_path):
    """--nbc-cpu-factor is recorded and sizes the computation to F·t_pure.

    The kernel is calibrated on its fastest chunk, so it never computes much
    less than its target; 50× t_pure against a 10× bound leaves wide margin.
    """
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
        "--nbc-cpu-factor",
        "50",
        "Ialltoall",
    )
    assert doc["config"]["params"] == {"nbc_cpu_factor": 50.0}
    assert [r["bytes"] for r in doc["records"]] == [0, 64]
    for r in doc["records"]:
        assert r["status"] == "ok" and 0.0 <= r["values"]["overlap"] <= 100.0
        rt = r["rank_times"]
        for k in range(2):
            assert rt["t_cpu"][k] >= 10 * rt["t_pure"][k], (r["bytes"], k, rt)
