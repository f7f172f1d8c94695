"""nccl-tests' output as nccl-tests writes it, and nothing else (issue 31 item 3).

-J JSON: a value nccl-tests could not compute is written "nan" (a NaN or
Infinity literal is read alike): left out of its record and named in the
document, never a NaN in the results file nor a traceback; a time that is not
a number, a result without one of its two placements, a format version
outside 1-3 are refused with the file, the line and the accepted form; a cut
file keeps its whole results. Text: the widths nccl-tests prints its numbers
in, before and since 2.17.3. No failure leaves OUT.tmp behind. The logs are
the nccl-tests sample of tests/data/import (README.md: no GPU here), edited.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from commbench.commands import importing as command
from commbench.importers import read
from commbench.views import results_file
from tests.support.results_schema import problems

DATA = Path(__file__).parents[1] / "data" / "import"
SAMPLE = json.loads((DATA / "nccl_all_reduce_perf.json").read_text())
TEXT = (DATA / "nccl_all_reduce_perf.txt").read_text()


def run(tmp_path: Path, capsys, doc_or_text, *extra: str) -> tuple[int, str, Path]:
    log = tmp_path / "log.json"
    log.write_text(doc_or_text if isinstance(doc_or_text, str) else json.dumps(doc_or_text))
    out = tmp_path / "out" / "nccl.json"
    rc = command.main([str(log), "-o", str(out), *extra])
    assert not list(tmp_path.rglob("*.tmp")), "a failed import leaves no temporary file"
    return rc, capsys.readouterr().err, out


def edited(path: str, value) -> dict:
    """The sample with results[2].<path> set to value (absent for ...)."""
    doc = json.loads(json.dumps(SAMPLE))
    *keys, last = path.split(".")
    obj = doc["results"][2]
    for k in keys:
        obj = obj[k]
    if value is ...:
        del obj[last]
    else:
        obj[last] = value
    return doc


@pytest.mark.parametrize("field", ["out_of_place.alg_bw", "in_place.bus_bw", "out_of_place.nwrong"])
@pytest.mark.parametrize("value", ["nan", "-nan", float("nan"), float("inf"), float("-inf")])
def test_nan_is_left_out_and_named_never_written(tmp_path, capsys, field, value):
    rc, err, out = run(tmp_path, capsys, edited(field, value))
    assert rc == 0, err
    doc = results_file.load(str(out))  # refuses NaN and Infinity
    assert problems(doc) == [] and doc["complete"] is True and doc["summary"]["warnings"] == 1
    placement, key = field.split(".")
    warning = doc["metadata"]["source"]["logs"][0]["warnings"][0]
    assert (
        warning.startswith(f"line 1: result of size 128: {placement} {key} is ")
        and "left out" in warning
    )
    assert "commbench import: warning: " in err and "Traceback" not in err
    rec = next(
        r
        for r in doc["records"]
        if r["bytes"] == 128 and r["mode"].startswith(placement.replace("_", "-"))
    )
    missing = {"alg_bw": "bytes_per_sec", "bus_bw": "bus_bytes_per_sec"}.get(key)
    assert (
        (missing not in rec["values"])
        if missing
        else (rec["extra"]["wrong"] is None and "check" not in rec["extra"])
    )
    assert len(doc["records"]) == 2 * len(SAMPLE["results"])


@pytest.mark.parametrize("value", ["nan", float("nan"), None, "10.5", ...])
@pytest.mark.parametrize("key", ["out_of_place.time", "in_place.time"])
def test_a_result_without_a_time_stops_the_log(tmp_path, capsys, key, value):
    rc, err, out = run(tmp_path, capsys, edited(key, value))
    assert rc == 2 and "Traceback" not in err
    placement = key.split(".")[0]
    said = (
        f'{placement} has no "time"' if value is ... else f"{placement} time is {json.dumps(value)}"
    )
    assert f":1: result of size 128: {said}" in err and "(accepted: a time in us)" in err
    doc = results_file.load(str(out))
    assert doc["complete"] is False and [r["bytes"] for r in doc["records"]] == [8, 8, 32, 32]


@pytest.mark.parametrize("version", [0, 4, 99, "3", True, None, 2.5, ...])
def test_a_json_version_outside_1_to_3_is_refused_whole(tmp_path, capsys, version):
    doc = json.loads(json.dumps(SAMPLE))
    if version is ...:
        del doc["version"]
    else:
        doc["version"] = version
    rc, err, out = run(tmp_path, capsys, doc)
    assert rc == 2 and not out.exists(), "nothing of a format it does not read is written"
    said = (
        'no "version" before the results' if version is ... else f'"version": {json.dumps(version)}'
    )
    assert f"log.json:1: {said}: not a nccl-tests -J format" in err
    assert "(accepted: format versions 1 to 3, as nccl-tests 2.17 to 2.19 write)" in err


@pytest.mark.parametrize("version", [1, 2, 3])
def test_json_versions_1_to_3_are_read(tmp_path, capsys, version):
    rc, err, out = run(tmp_path, capsys, dict(SAMPLE, version=version))
    assert rc == 0, err
    assert json.loads(out.read_text())["metadata"]["source"]["logs"][0]["json_version"] == version


@pytest.mark.parametrize(
    "key", ["out_of_place", "in_place", "out_of_place.alg_bw", "in_place.nwrong"]
)
def test_a_result_missing_what_nccl_tests_writes_stops_the_log(tmp_path, capsys, key):
    rc, err, out = run(tmp_path, capsys, edited(key, ...))
    assert rc == 2
    placement, _, field = key.partition(".")
    assert (
        f':1: result of size 128 has no "{key}"' in err
        if not field
        else f':1: result of size 128: {placement} has no "{field}"' in err
    )
    assert [r["bytes"] for r in json.loads(out.read_text())["records"]] == [8, 8, 32, 32]


@pytest.mark.parametrize("key", ["out_of_place", "in_place"])
def test_a_placement_nccl_tests_did_not_measure_is_named(tmp_path, capsys, key):
    """nccl-tests writes null for a placement it did not measure: no record, a warning."""
    rc, err, out = run(tmp_path, capsys, edited(key, None))
    doc = json.loads(out.read_text())
    assert (
        rc == 0
        and doc["complete"] is True
        and len(doc["records"]) == 2 * len(SAMPLE["results"]) - 1
    )
    assert doc["metadata"]["source"]["logs"][0]["warnings"] == [
        f"line 1: result of size 128: {key} is null (not measured), no record for it"
    ]


def test_a_cut_json_keeps_its_whole_results_at_every_cut(tmp_path):
    """Cut at every character of the last two results (and of the footer): the records are
    those of the results whole before the cut, each exactly as in the whole file."""
    text = (DATA / "nccl_all_reduce_perf.json").read_text()
    whole = read(str(DATA / "nccl_all_reduce_perf.json"), 0)
    assert whole.error is None
    by_size = {(r.bytes, r.mode): r.to_dict() for r in whole.records}
    start = text.index('{"size":131072')
    log = tmp_path / "cut.json"
    for k in range(start, len(text) - 1):
        log.write_text(text[:k])
        got = read(str(log), 0)
        assert got.error is not None and got.error.startswith(f"{log}:1: not valid JSON ("), (
            k,
            got.error,
        )
        done = text[:k].count('"experiment_name":""}')  # results whole before the cut
        assert [r.to_dict() for r in got.records] == list(by_size.values())[: 2 * done], k


def test_a_large_json_is_streamed_across_its_chunks(tmp_path):
    """A -J file of many MiB (results with -I's per-iteration times) read a MiB at a time:
    every number split by a chunk's end is read whole."""
    doc = json.loads(json.dumps(SAMPLE))
    base = doc["results"][0]
    doc["results"] = []
    for i in range(3000):
        res = json.loads(json.dumps(base))
        res["size"] = 8 * (i + 1)
        res["out_of_place"]["time"] = 10 + i / 7
        res["in_place"]["alg_bw"] = 1e-3 * (i + 1) / 3
        res["out_of_place_per_iter"] = {
            "min_us": i / 3,
            "times_us": [i + j / 9 for j in range(200)],
        }
        doc["results"].append(res)
    log = tmp_path / "big.json"
    log.write_text(json.dumps(doc))
    assert log.stat().st_size > 4 << 20
    got = read(str(log), 0)
    assert got.error is None and len(got.records) == 6000
    for i, res in enumerate(doc["results"]):
        oop, ip = got.records[2 * i], got.records[2 * i + 1]
        assert oop.bytes == res["size"] and oop.values["t"] == res["out_of_place"]["time"]
        assert ip.values["bytes_per_sec"] == res["in_place"]["alg_bw"] * 1e9
        assert oop.extra["per_iteration"] == {"min_us": i / 3}


def _text_with(tmp_path: Path, old: str, new: str, version: bool = True) -> Path:
    text = TEXT.replace(old, new, 1)
    assert text != TEXT or old == new
    if not version:
        text = "".join(
            ln for ln in text.splitlines(keepends=True) if not ln.startswith("# nccl-tests version")
        )
    log = tmp_path / "nccl.txt"
    log.write_text(text)
    return log


ROW = (
    "         512           128     float     sum      -1    10.82    0.05    0.05       0    "
    "10.37    0.05    0.05       0"
)


@pytest.mark.parametrize(
    ("time", "since_2_17_3", "before"),
    [
        ("10.82", True, True),
        ("10.8", False, False),
        ("10.", False, False),
        ("10", False, False),
        ("128.53", True, True),
        ("128.5", False, True),
        ("12345.6", True, False),
        ("12346", False, True),
        ("1.2e+07", True, False),
        ("99999.9", True, False),
        ("1e+07", False, False),
        ("nan", False, False),
        ("100.00", True, True),
        ("100.0", False, True),
        ("10000.0", True, True),
        ("10000", False, True),
    ],
)
def test_nccl_text_times_as_each_version_prints_them(tmp_path, time, since_2_17_3, before):
    """Since 2.17.3 (the versions that print '# nccl-tests version') a time has as many
    decimals as fit in 7 characters, then %.1e; before, 2 below 100 us, 1 below 10000, 0
    above. Anything else was cut or edited: the row stops the log at its line."""
    for versioned, good in ((True, since_2_17_3), (False, since_2_17_3 or before)):
        log = _text_with(tmp_path, ROW, ROW.replace("    10.82 ", f"  {time:>7} "), versioned)
        got = read(str(log), 0)
        n = TEXT.splitlines().index(ROW) + 1 - (0 if versioned else 1)
        if good:
            assert got.error is None and got.records[6].values["t"] == float(time), (
                time,
                versioned,
            )
        else:
            assert got.error.startswith(f"{log}:{n}: ") and len(got.records) == 6, (
                time,
                versioned,
                got.error,
            )
            assert "time" in got.error and ("nccl-tests" in got.error or "no time" in got.error)


@pytest.mark.parametrize(
    ("bw", "good"),
    [
        ("0.05", True),
        ("0.1", False),
        ("999.99", True),
        ("1000.0", True),
        ("1000.00", False),
        ("12345", True),
        ("1e+06", True),
        ("nan", True),
    ],
)
def test_nccl_text_bandwidths(tmp_path, bw, good):
    log = _text_with(
        tmp_path,
        ROW,
        ROW.replace("    0.05    0.05       0    10.37", f"  {bw:>6}    0.05       0    10.37"),
    )
    got = read(str(log), 0)
    assert (got.error is None) == good, got.error
    if good and bw == "nan":
        assert (
            "bytes_per_sec" not in got.records[6].values
            and "algbw printed as 'nan'" in got.source["warnings"][0]
        )


def test_nccl_text_of_2017_is_refused(tmp_path, capsys):
    """nccl-tests before 2019 printed times in ms and a 'res' column: nothing of it is read."""
    text = TEXT.replace("#wrong", "res").replace("(us)", "(ms)")
    rc, err, out = run(tmp_path, capsys, text)
    assert rc == 2 and not out.exists() and "nccl-tests' layout of 2017-2018" in err


def test_out_tmp_is_removed_when_the_file_cannot_be_written(tmp_path, capsys):
    """A full disk while the results file is written (OUT.tmp is /dev/full here): exit 2,
    the reason, no OUT.tmp left and OUT untouched."""
    out = tmp_path / "nccl.json"
    os.symlink("/dev/full", f"{out}.tmp")
    assert command.main([str(DATA / "nccl_all_reduce_perf.json"), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert (
        f"-o {str(out)!r}: cannot write (No space left on device)" in err and "Traceback" not in err
    )
    assert not os.path.lexists(f"{out}.tmp") and not out.exists()
