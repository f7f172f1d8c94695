"""Every reader of results files (compare, report, report --csv, report --html, fit, plot) on
files broken in every way a field can break: exit status 2 naming the file, the record and
the field, never a traceback, and never 1 (the status CI reads as a regression).

The broken files are generated from a real run's file: every field of a record and of the
header replaced by a string, null, a list, an object, a negative number, NaN, or removed;
bytes that are not UTF-8; two logs of one run imported into one file. The readers run in
this process (commands.main: no MPI in them) so that hundreds of files take seconds.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from commbench.views import results_file
from tests.support.in_process import call as _call
from tests.support.mpirun import commbench, mpiexec

BROKEN = ("text", None, [], {}, -1.5, "NaN", "<removed>")


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("readers") / "good.json"
    p = mpiexec(
        2,
        "run",
        "PingPong",
        "Allreduce",
        "-msglog",
        "0:2",
        "-iter",
        "50",
        "--samples",
        "6",
        "-o",
        str(out),
    )
    assert p.returncode == 0, p.stderr[-2000:]
    return out


def _paths(node: object, at: tuple = ()) -> list[tuple]:
    """Every key path below node (objects only: lists are one field)."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((*at, k))
            if k not in ("rank_samples", "t_max_samples", "rank_times"):
                out += _paths(v, (*at, k))
    return out


def _broken(doc: dict, path: tuple, value: object) -> str:
    d = copy.deepcopy(doc)
    node = d
    for k in path[:-1]:
        node = node[k]
    if value == "<removed>":
        del node[path[-1]]
    else:
        node[path[-1]] = "@@NAN@@" if value == "NaN" else value
    return json.dumps(d).replace('"@@NAN@@"', "NaN")


def _cases(good: Path) -> list[tuple[str, str]]:
    doc = json.loads(good.read_text())
    paths = [
        p
        for p in _paths({k: v for k, v in doc.items() if k != "records"})
        if p[0]
        in ("format", "format_version", "complete", "metadata", "config", "family", "summary")
    ]
    paths += [("records", 3, *p) for p in _paths(doc["records"][3])]
    return [(f"{'.'.join(map(str, p))}={v!r}", _broken(doc, p, v)) for p in paths for v in BROKEN]


def test_every_broken_field_is_refused_or_read(good, tmp_path, capsys):
    """A broken field either breaks the schema (every reader: exit 2, the file, record and field
    named) or is one the format leaves open (every reader reads the file); nothing in between."""
    refused, read = 0, []
    for i, (what, text) in enumerate(_cases(good)):
        path = tmp_path / f"b{i}.invalid.json"
        path.write_text(text)
        try:
            results_file.read(str(path))
        except ValueError as e:
            refused += 1
            msg = str(e)
            assert msg.startswith(str(path)), (what, msg)
            if what.startswith("records.3.") and "NaN" not in what:
                assert "record 3 (PingPong np=2 bytes=" in msg or "record 3 (" in msg, (what, msg)
            if refused % 5 == 1:  # the readers share read(): a sample of them through the command
                rc, err = _call(capsys, "compare", str(good), str(path))
                assert rc == 2 and str(path) in err and "internal error" not in err, (what, err)
            continue
        read.append((what, path))
    assert refused > 100 and read  # the open parts (extra, params …) exist and are read
    for what, path in read:  # every reader on every file it accepts: no crash
        for argv in (
            ["compare", str(good), str(path), "--allow-different", "--allow-incomplete"],
            ["report", str(path)],
            ["fit", str(path)],
        ):
            rc, err = _call(capsys, *argv)
            assert rc in (0, 2) and "internal error" not in err, (what, argv, err)
            capsys.readouterr()


@pytest.mark.parametrize(
    "field,value,says",
    [
        (
            "records.3.values.t_max",
            "abc",
            "record 3 (PingPong np=2 bytes=4), field values.t_max: 'abc' is not of type",
        ),
        (
            "records.3.values.t_max",
            -2.0,
            "record 3 (PingPong np=2 bytes=4), field values.t_max: -2.0 is less than",
        ),
        (
            "records.3.values.t_max",
            "NaN",
            (
                "record 3 (PingPong np=2 bytes=4), field values.t_max: NaN is not a number a "
                "results file may hold"
            ),
        ),
        (
            "records.3.extra.samples.t_max_samples",
            [1.0, -1.0, 1.0],
            "field extra.samples.t_max_samples.1: -1.0 is less",
        ),
        ("metadata", None, "field metadata: None is not of type 'object'"),
        ("config", [], "field config: [] is not of type 'object'"),
        ("records.3", "row", "record 3 (not an object): 'row' is not of type 'object'"),
    ],
)
def test_each_reader_names_the_file_record_and_field(good, tmp_path, field, value, says):
    """Real subprocesses, as CI calls them: exit 2, one message, no traceback, for every reader."""
    doc = json.loads(good.read_text())
    path = tuple(int(k) if k.isdigit() else k for k in field.split("."))
    bad = tmp_path / "bad.invalid.json"
    bad.write_text(_broken(doc, path, value))
    readers = [
        ["compare", str(bad), str(good), "--json", str(tmp_path / "v.json")],
        ["report", str(bad)],
    ]
    if (
        field == "records.3.values.t_max" and value == "abc"
    ):  # every reader once (they share read())
        readers += [
            ["compare", str(good), str(bad)],
            ["report", str(bad), "--csv", str(tmp_path / "x.csv")],
            ["report", "--html", str(tmp_path / "r.html"), str(good), str(bad)],
            ["fit", str(bad)],
            ["plot", str(bad), "-o", str(tmp_path / "p.png")],
        ]
    for argv in readers:
        p = commbench(*argv)
        assert p.returncode == 2 and says in p.stderr and str(bad) in p.stderr, (
            argv,
            p.stderr[-1500:],
        )
        assert "Traceback" not in p.stderr and p.stderr.count("\n") == 1, p.stderr
    verdict = json.loads(
        (tmp_path / "v.json").read_text()
    )  # compare --json writes its verdict even so
    assert (
        verdict["exit_status"] == 2
        and verdict["verdict"] == "error"
        and says in verdict["errors"][0]
    )


def test_bytes_that_are_not_utf8_are_named(good, tmp_path, capsys):
    data = good.read_bytes()
    at = data.index(b'"PingPong"') + 3
    bad = tmp_path / "latin.invalid.json"
    bad.write_bytes(data[:at] + b"\xe9" + data[at + 1 :])
    for argv in (["compare", str(good), str(bad)], ["report", str(bad)], ["fit", str(bad)]):
        rc, err = _call(capsys, *argv)
        assert (
            rc == 2 and f"{bad}: not a results file: byte 0xe9 at offset {at} is not UTF-8" in err
        ), err


def test_an_unexpected_error_is_status_2_not_1(good, tmp_path):
    """A bug in a reader must not read as a regression: status 2, the bug named, no traceback."""
    p = commbench("compare", str(good), str(good), env={"COMMBENCH_FAULT_READER": "1"})
    assert (
        p.returncode == 2
        and "internal error in `commbench compare`: TypeError: injected" in p.stderr
    )
    assert "Traceback" not in p.stderr
    p = commbench(
        "compare", str(good), str(good), env={"COMMBENCH_FAULT_READER": "1", "COMMBENCH_DEBUG": "1"}
    )
    assert p.returncode == 1 and "Traceback" in p.stderr  # asked for: Python's own report
