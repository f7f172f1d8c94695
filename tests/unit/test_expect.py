"""`commbench expect`: a site's expectations against a results file (no process; the run that
makes a fresh file is in tests/mpi/test_expect_run.py). The file: tests/data/mpis/mpich.json,
PingPong and Allreduce at 0-1 KiB on 2 ranks, hosts ['vm']."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from commbench.commands import main
from commbench.models import expectations as ex

RUN = str(Path(__file__).resolve().parents[1] / "data" / "mpis" / "mpich.json")


def _rules(tmp_path: Path, text: str) -> str:
    p = tmp_path / "site.toml"
    p.write_text(text)
    return str(p)


def _expect(tmp_path, capsys, text: str, *more: str) -> tuple[int, str, str]:
    rc = main(["expect", _rules(tmp_path, text), RUN, *more])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_pass_fail_and_no_data_with_their_exit_status(tmp_path, capsys):
    rc, out, _ = _expect(
        tmp_path, capsys, '[[expect]]\nbenchmark = "PingPong"\nbytes = "0..8"\nt = "<= 1 ms"\n'
    )
    assert rc == 0 and out.count("\npass ") == 5, out
    assert "5 pass, 0 fail, 0 no data" in out
    rc, out, _ = _expect(
        tmp_path,
        capsys,
        '[[expect]]\nbenchmark = "PingPong"\nbytes = 0\nt = "<= 1 ns"\n\n'
        '[[expect]]\nbenchmark = "Allreduce"\nbytes = ">= 1MiB"\nt = "<= 1 s"\n',
    )
    assert rc == 1, out  # a failure wins over no data
    assert "FAIL     PingPong np=2 bytes=0" in out and "site.toml:1" in out
    assert "no data" in out and "site.toml:6" in out and "no row of the run is selected" in out
    rc, out, _ = _expect(
        tmp_path, capsys, '[[expect]]\nbenchmark = "Allreduce"\nnp = 4\nt = "<= 1 s"\n'
    )
    assert rc == 2 and "0 pass, 0 fail, 1 no data" in out
    rc, _, _ = _expect(
        tmp_path, capsys, '[[expect]]\nbenchmark = "Allreduce"\nnp = 4\nt = "<= 1 s"\n',
        "--allow-no-data",
    )  # fmt: skip
    assert rc == 0


def test_bandwidth_units_and_the_reframe_reference(tmp_path, capsys):
    # PingPong 1024 B at 1.376 us: 1024 / 1.376e-6 = 744 MB/s
    rc, out, _ = _expect(
        tmp_path,
        capsys,
        '[[expect]]\nbenchmark = "PingPong"\nbytes = "1KiB"\nbandwidth = ">= 0.5 GB/s"\n\n'
        '[[expect]]\nbenchmark = "PingPong"\nbytes = 512\nbandwidth = ">= 1 Gb/s"\n\n'
        '[[expect]]\nbenchmark = "Allreduce"\nbytes = 8\nt = [0.657, -inf, 0.5, "us"]\n',
    )
    assert rc == 0, out
    assert "744 MB/s" in out
    b = ex.bound([2.0, -0.1, 0.1, "us"], "t", "f:1")
    assert math.isclose(b.low, 1.8) and math.isclose(b.high, 2.2)
    b = ex.bound(">= 25 Gb/s", "bandwidth", "f:1")
    assert b.low == 25e9 / 8 and b.high is None
    assert ex.bound("1..3 ms", "t", "f:1").low == 1000.0


def test_json_and_junit(tmp_path, capsys):
    junit, js = tmp_path / "r.xml", tmp_path / "r.json"
    rc, _, _ = _expect(
        tmp_path,
        capsys,
        '[[expect]]\nbenchmark = "PingPong"\nbytes = "<= 2"\nt = "<= 1.165 us"\n\n'
        '[[expect]]\nbenchmark = "PingPong"\nnp = 8\nt = "<= 1 us"\n',
        "--junit", str(junit), "--json", str(js),
    )  # fmt: skip
    assert rc == 1
    doc = json.loads(js.read_text())
    assert doc["exit_status"] == 1 and doc["counts"] == {"pass": 2, "fail": 1, "no data": 1}
    failed = [v for v in doc["verdicts"] if v["verdict"] == "fail"][0]
    assert failed["row"] == "PingPong np=2 bytes=2 engine=native" and failed["unit"] == "us"
    assert failed["value"] > 1.165 and failed["rule"].endswith("site.toml:1")
    suite = ET.parse(junit).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("4", "1", "1")
    cases = suite.findall("testcase")
    assert sum(c.find("failure") is not None for c in cases) == 1
    assert sum(c.find("skipped") is not None for c in cases) == 1


def test_write_proposes_a_file_its_own_run_meets(tmp_path, capsys):
    out = tmp_path / "proposed.toml"
    assert main(["expect", "--write", str(out), RUN, "--margin", "0"]) == 0
    text = out.read_text()
    assert text.count("[[expect]]") == 22 and "hosts: vm" in text
    assert main(["expect", str(out), RUN]) == 0  # rounded outwards: the run meets its own file
    assert "22 pass, 0 fail, 0 no data" in capsys.readouterr().out
    assert main(["expect", "--write", str(out), RUN]) == 0  # 20 % room by default
    assert 't = "<= 1.35 us"' in out.read_text()  # PingPong 0 B at 1.12 us


BAD = [
    ("[[expect]\n", "not TOML"),
    ('[[expect]]\nbenchmark = "PingPongg"\nt = "<= 1 us"\n', "benchmark 'PingPongg' is none of"),
    ('[[expect]]\nbenchmark = "PingPong"\nt = "<= 2 parsecs"\n', "'parsecs' is not a unit"),
    ('[[expect]]\nbenchmark = "PingPong"\nt = "<= 2"\n', "is not a bound"),
    ('[[expect]]\nbenchmark = "PingPong"\nbandwidth = ">= 2 us"\n', "'us' is a time"),
    ('[[expect]]\nbenchmark = "PingPong"\nt = ">= 2 GB/s"\n', "'GB/s' is a rate of bytes"),
    ('[[expect]]\nbenchmark = "PingPong"\nlatency = "<= 2 us"\n', "unknown key 'latency'"),
    ('[[expect]]\nbenchmark = "PingPong"\n', "at least one of t, bandwidth, rate"),
    ('[[expect]]\nbenchmark = "PingPong"\nbytes = "big"\nt = "<= 2 us"\n', "is not a size"),
    ('[[expect]]\nbenchmark = "PingPong"\nt = [2.0, 0.1, 0.1, "us"]\n', "lower in -1..0"),
    ('[[expect]]\nbenchmark = "PingPong"\nhosts = "node*"\nt = "<= 2 us"\n', "match no host"),
    ("[limits]\nx = 1\n", "unknown table or key 'limits'"),
    (
        '\n[[expect]]\nbenchmark = "PingPong"\nt = "<= 2 us"\n\n'
        '[[expect]]\nbenchmark = "Ping*"\nbytes = 0\nt = "<= 3 us"\n',
        "site.toml:2 and ",
    ),
]


@pytest.mark.parametrize("text,said", BAD, ids=[s for _, s in BAD])
def test_bad_expectations_are_refused_naming_file_and_line(tmp_path, capsys, text, said):
    rc, out, err = _expect(tmp_path, capsys, text)
    assert rc == 2 and out == ""
    assert said in err and "site.toml" in err, err


def test_the_disagreeing_rules_are_both_named_by_line(tmp_path, capsys):
    _, _, err = _expect(tmp_path, capsys, BAD[-1][0])
    assert "site.toml:2 and " in err and "site.toml:6" in err and "bytes=0" in err


def test_stored_runs_are_judged_by_selector(tmp_path, capsys):
    db = str(tmp_path / "s.db")
    assert main(["store", "add", RUN, "--store", db, "--tag", "nightly"]) == 0
    rules = _rules(tmp_path, '[[expect]]\nbenchmark = "Allreduce"\nbytes = 8\nt = "<= 1 us"\n')
    capsys.readouterr()
    assert main(["expect", rules, "--stored", "tag=nightly", "--store", db]) == 0
    out = capsys.readouterr().out
    assert "pass     Allreduce np=2 bytes=8" in out and "1 pass, 0 fail" in out
    assert main(["expect", rules, RUN, "--stored", "tag=nightly", "--store", db]) == 0
    assert "2 pass, 0 fail" in capsys.readouterr().out  # the file and the stored run
    assert main(["expect", rules, "--stored", "tag=weekly", "--store", db]) == 2
    assert "no run matches tag=weekly" in capsys.readouterr().err


def test_the_report_page_has_a_section_of_the_verdicts(tmp_path, capsys):
    rules = _rules(
        tmp_path,
        '[[expect]]\nbenchmark = "PingPong"\nbytes = 0\nt = "<= 1 ns"\n\n'
        '[[expect]]\nname = "<b>bold</b>"\nbenchmark = "Allreduce"\nnp = 4\nt = "<= 1 s"\n',
    )
    page = tmp_path / "p.html"
    assert main(["report", "--html", str(page), RUN, "--expect", rules]) == 0
    html = page.read_text()
    start = html.index('<section id="expectations">')
    assert html.index('<section id="metadata">') < start < html.index('<section id="tables">')
    body = html[start : html.index("</section>", start)]
    assert "1 pass" not in body and "0 pass, 1 fail, 1 no data" in body
    assert '<span class="slower">fail</span></td><td class=text>PingPong np=2 bytes=0' in body
    assert "&lt;b&gt;bold&lt;/b&gt;" in body and "<b>" not in body  # a file's text is escaped
    assert main(["report", RUN, "--expect", rules]) == 2  # a page's section, not the text's
    assert "it needs --html" in capsys.readouterr().err
