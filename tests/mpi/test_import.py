"""`commbench import`: real IMB, OSU and nccl-tests output as results files (issue 18 item 1).

Fit, compare (against a real commbench run), plot and report work on the
imported files; bad input through the command line stops with the file and
line, exit status 2, no traceback; an import warning reaches the report and
the HTML page. The imports themselves, every number checked against its log,
and malformed and cut logs are tests/unit/test_import.py and
tests/unit/test_import_cut.py.
"""

from __future__ import annotations

import json
from pathlib import Path

from commbench.commands import fit, plot
from tests.support.import_logs import cut_log as _cut
from tests.support.import_logs import imb_rows, imported
from tests.support.mpirun import FAST, commbench, run_json

DATA = Path(__file__).parents[1] / "data"


def test_fit_compare_plot_report_on_imported_files(tmp_path, capsys):
    """The commands work unchanged on imported files: compare against a real commbench
    run of the same benchmark, fit and plot IMB and OSU, report each tool's file."""
    imb_log = DATA / "import" / "imb-mpi1-pingpong-np2.txt"
    imported(tmp_path, imb_log)
    imb = tmp_path / "imb-mpi1-pingpong-np2.json"
    imported(tmp_path, DATA / "import" / "osu_latency.txt")
    imported(tmp_path, DATA / "import" / "nccl_all_reduce_perf.json")
    run_json(tmp_path, 2, "PingPong", "-msglog", "0:4", *FAST)  # writes r2.json
    p = commbench("compare", str(imb), str(tmp_path / "r2.json"))
    # the rows match; with no --samples in an imported log the gate cannot test them: refused
    assert p.returncode == 2 and "# REFUSED [nothing-tested]" in p.stdout, p.stderr
    assert "# 6 matched rows" in p.stdout and p.stdout.count("PingPong") == 6
    # fit and plot in this process (no MPI in them; their imports are paid once)
    assert fit.main([str(imb), "--json"]) == 0
    assert [f["benchmark"] for f in json.loads(capsys.readouterr().out)["fits"]] == ["PingPong"]
    assert fit.main([str(tmp_path / "osu_latency.json")]) == 0
    assert "Hockney fit of latency, 2 processes" in capsys.readouterr().out
    assert (
        plot.main([str(imb), str(tmp_path / "osu_latency.json"), "-o", str(tmp_path / "fig.png")])
        == 0
    )
    assert (tmp_path / "fig.png").stat().st_size > 0
    p = commbench("report", str(imb))
    assert p.returncode == 0, p.stderr
    log_rows = [
        ln for n, ln in enumerate(imb_log.read_text().splitlines(), 1) if n in imb_rows(imb_log)
    ]
    assert all(ln in p.stdout.splitlines() for ln in log_rows), (
        "IMB's rows again, as IMB printed them"
    )
    assert "imported from IMB-MPI1 2021.11" in p.stdout and "# Benchmarking PingPong" in p.stdout
    for name in ("osu_latency.json", "nccl_all_reduce_perf.json"):
        p = commbench("report", str(tmp_path / name))
        assert p.returncode == 0 and "# Benchmarking" in p.stdout, p.stderr


def test_bad_input_through_the_command_line(tmp_path):
    """As a user types it: exit status 2, the line, no traceback, no file for a non-log."""
    src = DATA / "imb2021" / "ext-np2.txt"
    cut = _cut(tmp_path, src, 60)
    out = tmp_path / "ext.json"
    p = commbench("import", str(cut), "-o", str(out))
    assert (
        p.returncode == 2
        and f"{cut}:60: the log ends before" in p.stderr
        and "Traceback" not in p.stderr
    )
    assert "complete: false" in p.stderr and json.loads(out.read_text())["records"]
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n")
    p = commbench("import", str(junk), "-o", str(tmp_path / "junk.json"))
    assert p.returncode == 2 and f"{junk}:1: neither IMB, OSU nor nccl-tests output" in p.stderr
    assert not (tmp_path / "junk.json").exists() and "Traceback" not in p.stderr
    p = commbench("import", str(junk))
    assert p.returncode == 2 and "(accepted: commbench import LOG" in p.stderr and "-o" in p.stderr


def test_import_warnings_are_in_the_report_the_html_page_and_the_schema(tmp_path):
    """A cell the import left out (IMB printed nan) is said at import, and again by
    `commbench report` and the HTML page, from the file; the schema types the fields."""
    from commbench import schema

    log = (Path(__file__).parents[1] / "data" / "import" / "imb-mpi1-pingpong-np2.txt").read_text()
    bad = tmp_path / "nan.txt"
    bad.write_text(log.replace("4          200         4.13", "4          200          nan", 1))
    out, page = tmp_path / "nan.json", tmp_path / "nan.html"
    p = commbench("import", str(bad), "-o", str(out))
    said = "PingPong: t[usec] printed as 'nan', left out of the record"
    assert p.returncode == 0 and said in p.stderr, p.stderr
    doc = json.loads(out.read_text())
    assert doc["summary"]["warnings"] == 1
    p = commbench("report", str(out))
    assert p.returncode == 0 and f"# Import warning        : line 38: {said}" in p.stdout
    assert commbench("report", "--html", str(page), str(out)).returncode == 0
    assert f"import warning: {bad}: line 38: {said}".replace("'", "&#x27;") in page.read_text()
    logs = schema.load()["$defs"]["source"]["properties"]["logs"]["items"]["properties"]
    assert {"warnings", "warnings_not_listed"} <= set(logs)
    assert "warnings" in schema.load()["$defs"]["summary"]["properties"]
