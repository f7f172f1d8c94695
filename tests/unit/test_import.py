"""`commbench import` in the test's process: real IMB, OSU and nccl-tests output as results
files (issue 18 item 1).

Every number of an imported record is checked against the log it came from, read here
independently by a plain column split (tests/support/import_logs.py). The logs are real
outputs of the peers (tests/data/*/README.md), but the nccl-tests sample, written from its
documented format (no GPU here). The commands on imported files and the command line are
tests/mpi/test_import.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.import_logs import imb_rows, imported

DATA = Path(__file__).parents[1] / "data"
IMB = {  # executable -> (its real output, commbench family)
    "IMB-MPI1": ("imb2021/mpi1-np2.txt", "mpi1"),
    "IMB-EXT": ("imb2021/ext-np2.txt", "ext"),
    "IMB-RMA": ("imb2021/rma-np2.txt", "rma"),
    "IMB-NBC": ("imb2021/nbc-np2.txt", "nbc"),
    "IMB-P2P": ("imb-p2p/np2.txt", "p2p"),
    "IMB-MT": ("imb-mt/np2-t2.txt", "mt"),
}
IMB_VALUES = {
    "t[usec]": "t",
    "t_min[usec]": "t_min",
    "t_max[usec]": "t_max",
    "t_avg[usec]": "t_avg",
    "Mbytes/sec": "bytes_per_sec",
    "Msg/sec": "msgs_per_sec",
    "t_ovrl[usec]": "t_ovrl",
    "t_pure[usec]": "t_pure",
    "t_CPU[usec]": "t_cpu",
    "overlap[%]": "overlap",
}
OSU = {  # log -> (benchmark, kind, np)
    "osu_latency.txt": ("latency", "single", 2),
    "osu_bw.txt": ("bw", "rate", 2),
    "osu_bibw.txt": ("bibw", "rate", 2),
    "osu_allreduce-f-np4.txt": ("allreduce", "collective", 4),
    "osu_allreduce-z.txt": ("allreduce", "collective", 2),
    "osu_put_latency.txt": ("put_latency", "single", 2),
    "osu_mbw_mr.txt": ("mbw_mr", "rate", 2),
    "osu_iallreduce.txt": ("iallreduce", "overlap", 2),
    "osu_barrier-f.txt": ("barrier", "sync", 2),
    "osu_bcast-c-f.txt": ("bcast", "collective", 2),
    "osu_latency-T-all.txt": ("latency", "single", 2),
}
OSU_VALUES = {
    "Latency (us)": "t",
    "Avg Latency(us)": "t",
    "Min Latency(us)": "t_min",
    "Max Latency(us)": "t_max",
    "Bandwidth (MB/s)": "bytes_per_sec",
    "MB/s": "bytes_per_sec",
    "Messages/s": "msgs_per_sec",
    "Overall(us)": "t_ovrl",
    "Compute(us)": "t_cpu",
    "Pure Comm.(us)": "t_pure",
    "Overlap(%)": "overlap",
}


def assert_imb_values(values: dict, row: dict[str, str], mb: int = 10**6) -> None:
    for head, tok in row.items():
        if head in IMB_VALUES:
            want = float(tok) * (mb if head == "Mbytes/sec" else 1)
            assert values[IMB_VALUES[head]] == pytest.approx(want, rel=1e-12), head
    if "t[usec]" in row:  # one time per row: IMB's t is the slowest process's (commbench's t_max)
        assert values["t_max"] == values["t"]
    elif "t_max[usec]" in row:
        assert values["t"] == values["t_max"]


def osu_table(path: Path) -> list[tuple[int, dict[str, str]]]:
    """(line, {heading: token}) per row of an OSU log: headings split at 2+ spaces."""
    heads, rows = None, []
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        if line.startswith("#"):
            cells = [c for c in re.split(r"\s{2,}", line[1:].strip()) if c]
            if cells and (cells[0] == "Size" or cells[0] in OSU_VALUES):
                heads = cells
        elif heads and line.strip():
            rows.append((n, dict(zip(heads, line.split()))))
    return rows


@pytest.mark.parametrize("tool", sorted(IMB))
def test_every_imb_executable_imports_with_the_numbers_of_its_log(tmp_path, tool):
    rel, family = IMB[tool]
    doc = imported(tmp_path, DATA / rel)
    rows = imb_rows(DATA / rel)
    recs = doc["records"]
    by_line = {r["extra"]["source"]["line"]: r for r in recs if r["status"] == "ok"}
    assert sorted(by_line) == sorted(rows), "one record per table row, at the row's line"
    for n, row in rows.items():
        rec = by_line[n]
        assert rec["family"] == family
        assert rec["repetitions"] == int(row["#repetitions"])
        assert rec["bytes"] == (int(row["#bytes"]) if "#bytes" in row else None)
        assert_imb_values(rec["values"], row)
    src = doc["metadata"]["source"]
    assert (src["tool"], src["version"], src["format"]) == (tool, "2021.11", "imb")
    log = src["logs"][0]
    assert log["file"] == str(DATA / rel) and len(log["sha256"]) == 64
    if tool != "IMB-MT":  # IMB-MT prints neither the machine nor the calling sequence
        assert log["header"]["MPI Version"] == "5.0" and doc["metadata"]["mpi_version"] == "5.0"
        assert log["calling_sequence"][0].endswith(tool) and "-msglog" in log["options"]
    assert (
        doc["complete"] is True
        and doc["family"]["name"] == family
        and doc["family"]["view"] == "imported"
    )
    # what the log says beyond the numbers
    text = (DATA / rel).read_text()
    if "MODE: AGGREGATE" in text:
        assert {r["mode"] for r in recs} >= {"AGGREGATE", "NON-AGGREGATE"}
    if "invalid for" in text:
        assert {r["benchmark"] for r in recs if r["status"] == "invalid"} == set(
            re.findall(r"Benchmark (\S+) is invalid for", text)
        )
    if tool == "IMB-MT":
        assert {r["extra"]["threads"] for r in recs} == {2}


def test_imb_multi_0_and_1(tmp_path):
    """-multi 0: one row per size over every group; -multi 1: a row per group, the record
    holds them in group_values and their extremes in values."""
    for name, multi in (("imb-mpi1-multi0-np4.txt", 0), ("imb-mpi1-multi1-np4.txt", 1)):
        path = DATA / "import" / name
        doc = imported(tmp_path, path)
        assert doc["config"]["multi"] == multi and doc["metadata"]["world_size"] == 4
        rows = imb_rows(path)
        multi_recs = [r for r in doc["records"] if len(r["groups"]) == 2]
        assert {r["benchmark"] for r in multi_recs} == {
            "PingPong",
            "Sendrecv",
            "Allreduce",
            "Barrier",
        }
        assert all(r["groups"] == [[0, 1], [2, 3]] and r["np"] == 2 for r in multi_recs)
        seen = set()
        for rec in doc["records"]:
            n = rec["extra"]["source"]["line"]
            if multi == 0 or not rec["group_values"]:
                assert_imb_values(rec["values"], rows[n])
                seen.add(n)
                continue
            for g, values in enumerate(rec["group_values"]):
                assert int(rows[n + g]["Group"]) == g
                assert_imb_values(values, rows[n + g])
                seen.add(n + g)
            gv = rec["group_values"]
            assert rec["values"]["t_max"] == max(v["t_max"] for v in gv)
            if "t_min" in gv[0]:
                assert rec["values"]["t_min"] == min(v["t_min"] for v in gv)
        assert seen == set(rows)


def test_imb_4_0_header_and_mbytes(tmp_path):
    """IMB before 2018 wrote "Intel (R) MPI Benchmarks 4.0" and counted Mbytes in 2^20 bytes
    (the real 2021.11 log with the banner IMB 4.0 printed)."""
    text = (DATA / "import" / "imb-mpi1-pingpong-np2.txt").read_text()
    old = tmp_path / "imb40.txt"
    old.write_text(text.replace("Intel(R) MPI Benchmarks 2021.11", "Intel (R) MPI Benchmarks 4.0"))
    doc = imported(tmp_path, old)
    assert doc["metadata"]["source"]["version"] == "4.0" and doc["config"]["mb_unit"] == 2**20
    rows = imb_rows(old)
    for rec in doc["records"]:
        assert_imb_values(rec["values"], rows[rec["extra"]["source"]["line"]], mb=2**20)


@pytest.mark.parametrize("name", sorted(OSU))
def test_osu_7_4_programs_import_with_the_numbers_of_their_logs(tmp_path, name):
    bench, kind, np_ = OSU[name]
    extra = (
        ("--np", "4")
        if "np4" in name
        else ("--np", "2")
        if kind in ("collective", "sync", "overlap")
        else ()
    )
    doc = imported(tmp_path, DATA / "import" / name, extra=extra)
    rows = osu_table(DATA / "import" / name)
    recs = doc["records"]
    assert [r["extra"]["source"]["line"] for r in recs] == [n for n, _ in rows]
    for rec, (_, row) in zip(recs, rows):
        assert (rec["benchmark"], rec["kind"], rec["np"], rec["family"]) == (
            bench,
            kind,
            np_,
            "osu",
        )
        assert rec["bytes"] == (int(row["Size"]) if "Size" in row else None)
        for head, tok in row.items():
            if head in OSU_VALUES:
                scale = 1e6 if OSU_VALUES[head] == "bytes_per_sec" else 1
                assert rec["values"][OSU_VALUES[head]] == pytest.approx(
                    float(tok) * scale, rel=1e-12
                ), head
            elif head == "Iterations":
                assert rec["repetitions"] == int(tok)
            elif (m := re.fullmatch(r"P(\d+) Tail Lat\(us\)", head)) is not None:
                assert rec["values"][f"t_p{m.group(1)}"] == float(tok)
            elif head == "Validation":
                assert rec["extra"]["check"] == {"Pass": "successful", "Fail": "failed"}[tok]
    src = doc["metadata"]["source"]
    assert (src["tool"], src["version"], src["suite"]) == (
        "osu_" + bench,
        "7.4",
        "OSU Micro-Benchmarks",
    )
    if name == "osu_latency-T-all.txt":  # -T all: a table per datatype, the datatype is the mode
        lines = (DATA / "import" / name).read_text().splitlines()
        types = [
            next(
                ln.split()[-1].rstrip(".")
                for ln in reversed(lines[:n])
                if ln.startswith("# Datatype:")
            )
            for n, _ in rows
        ]
        assert [r["mode"] for r in recs] == types and set(types) == {
            "MPI_CHAR",
            "MPI_INT",
            "MPI_FLOAT",
        }
    if name == "osu_put_latency.txt":
        assert recs[0]["mode"] == "MPI_CHAR, MPI_Win_allocate, MPI_Win_flush"


def test_osu_5_layout(tmp_path):
    """OMB 5.x: no datatype line, 'Latency (us)' (the 7.4 log with 5.x's header lines)."""
    text = (DATA / "import" / "osu_latency.txt").read_text().replace("v7.4", "v5.6.3")
    text = text.replace("# Datatype: MPI_CHAR.\n", "").replace(
        "# Size       Avg Latency(us)", "# Size          Latency (us)"
    )
    old = tmp_path / "omb5.txt"
    old.write_text(text)
    doc = imported(tmp_path, old)
    rows = osu_table(old)
    assert [r["values"]["t"] for r in doc["records"]] == [
        float(row["Latency (us)"]) for _, row in rows
    ]
    assert doc["metadata"]["source"]["version"] == "5.6.3" and {
        r["mode"] for r in doc["records"]
    } == {""}


def test_nccl_tests_text_and_json(tmp_path):
    text_log, json_log = (
        DATA / "import" / "nccl_all_reduce_perf.txt",
        DATA / "import" / "nccl_all_reduce_perf.json",
    )
    rows = [
        ln.split()
        for ln in text_log.read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    doc = imported(tmp_path, text_log)
    recs = doc["records"]
    assert len(recs) == 2 * len(rows)
    for i, toks in enumerate(rows):
        for rec, at, placement in (
            (recs[2 * i], 5, "out-of-place"),
            (recs[2 * i + 1], 9, "in-place"),
        ):
            assert (rec["benchmark"], rec["np"], rec["bytes"]) == (
                "all_reduce_perf",
                2,
                int(toks[0]),
            )
            assert rec["mode"] == f"{placement} {toks[2]} {toks[3]}" and rec["repetitions"] == 20
            assert rec["values"]["t"] == float(toks[at])
            assert rec["values"]["bytes_per_sec"] == pytest.approx(
                float(toks[at + 1]) * 1e9, rel=1e-12
            )
            assert rec["values"]["bus_bytes_per_sec"] == pytest.approx(
                float(toks[at + 2]) * 1e9, rel=1e-12
            )
            assert (
                rec["extra"]["wrong"] == float(toks[at + 3])
                and rec["extra"]["check"] == "successful"
            )
    assert doc["metadata"]["source"]["version"] == "2.19.6" and doc["metadata"]["hosts"] == [
        "node-a"
    ]
    raw = json.loads(json_log.read_text())
    jdoc = imported(tmp_path, json_log)
    for i, res in enumerate(raw["results"]):
        for rec, key in (
            (jdoc["records"][2 * i], "out_of_place"),
            (jdoc["records"][2 * i + 1], "in_place"),
        ):
            assert rec["bytes"] == res["size"] and rec["values"]["t"] == res[key]["time"]
            assert rec["values"]["bytes_per_sec"] == pytest.approx(
                res[key]["alg_bw"] * 1e9, rel=1e-12
            )
    assert jdoc["metadata"]["source"]["logs"][0]["settings"]["iterations"] == 20


def test_several_logs_in_one_file(tmp_path):
    doc = imported(tmp_path, DATA / "import" / "osu_latency.txt", DATA / "import" / "osu_bw.txt")
    src = doc["metadata"]["source"]
    assert src["tool"] == "osu_latency, osu_bw" and [lg["file"] for lg in src["logs"]] == [
        str(DATA / "import" / "osu_latency.txt"),
        str(DATA / "import" / "osu_bw.txt"),
    ]
    assert {r["extra"]["source"]["log"] for r in doc["records"]} == {0, 1}
    assert doc["config"]["benchmarks"] == ["latency", "bw"]
