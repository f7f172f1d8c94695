"""Records beyond --rank-detail ranks: each row's distribution over ranks and its slowest
ranks with their hosts instead of every rank's times (docs/scale.md), read by report,
compare and plot as records with every rank's times are."""

from __future__ import annotations

import json
import math

import pytest

from commbench import records
from commbench.views import results_file
from tests.support.mpirun import FAST, commbench, mpiexec

BENCHES = ["PingPong", "Allreduce", "Barrier"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The same 4-rank run twice: summarised beyond 2 ranks, and with every rank's times."""
    d = tmp_path_factory.mktemp("rank_detail")
    out = {}
    for name, extra in (("summary", ["--rank-detail", "2"]), ("full", [])):
        path = d / f"{name}.json"
        p = mpiexec(4, "run", *BENCHES, "-msglog", "0:3", *FAST, *extra, "-o", str(path))
        assert p.returncode == 0, p.stderr[-2000:]
        out[name] = (path, p.stdout, json.loads(path.read_text()))
    return out


def test_rows_beyond_the_threshold_keep_a_summary(runs):
    path, stdout, doc = runs["summary"]
    hosts = doc["metadata"]["rank_hosts"]
    assert doc["config"]["rank_detail"] == 2
    assert any("more than --rank-detail 2" in n for n in doc["notes"])
    assert "more than --rank-detail 2" in stdout  # said before the tables, as IMB's notes are
    ok = [r for r in doc["records"] if r["status"] == "ok"]
    assert {r["benchmark"] for r in ok} == set(BENCHES)
    for r in ok:
        s = r["rank_summary"]
        assert r["rank_times"] == {} and s["ranks"] == 4 and s["kept_up_to"] == 2
        timed = r["np"]  # the ranks of the row's group; the others idle
        t = s["components"]["t"]
        assert t["n"] == timed and len(s["slowest"]) == timed
        order = [x["t"] for x in s["slowest"]]
        assert order == sorted(order, reverse=True)  # the slowest first
        assert t["min"] <= t["p1"] <= t["p50"] <= t["p99"] <= t["max"] == order[0]
        assert t["min"] == order[-1] and math.isclose(t["mean"], sum(order) / timed)
        assert all(x["host"] == hosts[x["rank"]] for x in s["slowest"])
        # the row's numbers are the same reduction as ever: t_max is the slowest rank's
        assert math.isclose(r["values"]["t_max"], order[0] * 1e6, rel_tol=1e-9)
        assert math.isclose(r["values"]["t_min"], order[-1] * 1e6, rel_tol=1e-9)
    if any(r["benchmark"] == "PingPong" for r in ok):  # 2 of 4 ranks timed: ranks 0 and 1
        ping = next(r for r in ok if r["benchmark"] == "PingPong")
        assert {x["rank"] for x in ping["rank_summary"]["slowest"]} == {0, 1}


def test_full_records_are_unchanged_below_the_threshold(runs):
    _, _, doc = runs["full"]
    assert doc["config"]["rank_detail"] == records.RANK_DETAIL
    assert not any("--rank-detail" in n for n in doc["notes"])
    for r in doc["records"]:
        assert "rank_summary" not in r  # files of ordinary runs look as before
        if r["status"] == "ok":
            assert len(r["rank_times"]["t"]) == 4


def test_summarise_agrees_with_every_ranks_times(runs):
    """The summary of a full record is what the run would have kept beyond the threshold."""
    _, _, doc = runs["full"]
    hosts = doc["metadata"]["rank_hosts"]
    for d in doc["records"]:
        rec = records.Measurement.from_dict(d)
        s = records.summarise(rec, 2, hosts)
        assert s.rank_times == {} and s.values == rec.values
        timed = sorted(t for t in rec.rank_times["t"] if t is not None and t >= 0)
        if not timed:
            continue
        c = s.rank_summary["components"]["t"]
        assert (c["n"], c["min"], c["max"]) == (len(timed), timed[0], timed[-1])
        assert records.summarise(rec, 4, hosts) is rec  # at the threshold: kept whole
        assert records.summarise(rec, None, hosts) is rec  # --rank-detail all


def test_report_compare_and_plot_read_summarised_files(runs, tmp_path):
    a, _, _ = runs["summary"]
    b, _, _ = runs["full"]
    rep = commbench("report", str(a))
    assert rep.returncode == 0, rep.stderr
    assert "more than --rank-detail 2" in rep.stdout and "Allreduce" in rep.stdout
    cmp_ = commbench("compare", str(b), str(a), "--json", str(tmp_path / "c.json"))
    # compared row by row (exit 2: rows without --samples cannot be tested, as for any runs)
    assert cmp_.returncode in (0, 1, 2) and not cmp_.stderr.strip(), cmp_.stderr
    rows = json.loads((tmp_path / "c.json").read_text())["rows"]
    assert len(rows) >= 12 and all(r["old_us"] and r["new_us"] for r in rows)
    png = tmp_path / "a.png"
    pl = commbench("plot", str(a), "-o", str(png))
    assert pl.returncode == 0 and png.stat().st_size > 0, pl.stderr
    html = tmp_path / "a.html"
    assert commbench("report", str(a), "--html", str(html)).returncode == 0
    assert results_file.read(str(a))[1][0].rank_summary  # the reader keeps it


def test_rank_detail_all_and_refusals(tmp_path):
    out = tmp_path / "all.json"
    p = mpiexec(
        2, "run", "PingPong", "-msglog", "0:1", *FAST, "--rank-detail", "all", "-o", str(out)
    )
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["config"]["rank_detail"] is None
    assert all(len(r["rank_times"]["t"]) == 2 for r in doc["records"] if r["status"] == "ok")
    bad = commbench("run", "-n", "2", "PingPong", "--rank-detail", "0", "-o", str(tmp_path / "x"))
    assert bad.returncode == 2 and "--rank-detail must be >= 1" in bad.stderr, bad.stderr
    # a procedure family's rows go through the same emission
    p2p = tmp_path / "p2p.json"
    p = mpiexec(
        2, "run", "--suite", "p2p", "-msglog", "0:1", "-iter", "20", "--rank-detail", "1",
        "-o", str(p2p),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    ok = [r for r in json.loads(p2p.read_text())["records"] if r["status"] == "ok"]
    assert ok and all(r["rank_summary"]["ranks"] == 2 and not r["rank_times"] for r in ok)


HEAVY = {"scipy", "matplotlib", "rich", "jsonschema", "sqlalchemy", "pandas"}
START_UP = [
    ["-msglog", "0:1", *FAST],  # IMB-MPI1's default list
    ["--suite", "p2p", "-msglog", "0:1", "-iter", "20"],
    ["--suite", "osu", "allreduce", "-m", "1:8", "-i", "20", "-x", "2"],
    ["--suite", "net", "-time", "0.02", "--net-samples", "2"],
    ["--suite", "msgrate", "--iters", "10", "--peers", "2"],
    ["PingPong", "-msglog", "0:1", "--samples", "6", *FAST],
]


def _modules(tmp_path, args: list[str], np_: int = 2) -> list[set[str]]:
    from pathlib import Path

    import tests.support.mpirun as m

    job = Path(__file__).parents[1] / "support" / "modules_job.py"
    cmd = [m.MPIEXEC, "-n", str(np_), m.sys.executable, str(job), str(tmp_path), "run", *args]
    p = m.subprocess.run(
        [*cmd, "-o", str(tmp_path / "m.json")],
        capture_output=True,
        text=True,
        timeout=180,
        env=dict(m.os.environ, **m.ENV),
    )
    assert p.returncode == 0, p.stderr[-2000:]
    return [set((tmp_path / f"modules.{r}").read_text().split()) for r in range(np_)]


@pytest.mark.parametrize("args", START_UP, ids=lambda a: " ".join(a[:2]))
def test_ranks_import_only_what_they_use(args, tmp_path):
    """No rank loads scipy, matplotlib, rich, jsonschema or SQLAlchemy in a default run."""
    for rank, mods in enumerate(_modules(tmp_path, args, np_=3)):
        assert not mods & HEAVY, (rank, sorted(mods & HEAVY))
        assert {"commbench", "numpy", "mpi4py"} <= mods


@pytest.mark.parametrize(
    "args",
    [
        ["PingPong", "-msglog", "0:3", "--fit", "--per-iteration", *FAST],
        ["--suite", "comms", "-msglog", "0:3", *FAST],  # fits by default, as COMMS does
    ],
    ids=["fit", "comms"],
)
def test_only_rank_0_loads_scipy_where_it_computes_intervals(args, tmp_path):
    """Fits and --per-iteration: rank 0 computes confidence intervals with scipy.stats;
    the other ranks never load it."""
    zero, *others = _modules(tmp_path, args, np_=3)
    assert "scipy" in zero and not zero & (HEAVY - {"scipy"})
    assert all(not mods & HEAVY for mods in others)
