"""`commbench import`: real IMB, OSU and nccl-tests output as results files (issue 18 item 1).

Every number of an imported record is checked against the log it came from,
read here independently by a plain column split; fit, compare (against a
real commbench run), plot and report work on the imported files; malformed
and cut logs stop with the file and line, exit status 2, and keep what was
read. The logs are real outputs of the peers (tests/data/*/README.md), but
the nccl-tests sample, written from its documented format (no GPU here).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from commbench.commands import fit, plot
from commbench.commands import importing as command
from tests.support.mpirun import FAST, commbench, run_json
from tests.support.results_schema import problems

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


def _num(tok: str) -> bool:
    return re.fullmatch(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", tok) is not None


def imported(tmp_path: Path, *logs: Path | str, extra: tuple = ()) -> dict:
    out = tmp_path / (Path(str(logs[0])).stem + ".json")
    assert command.main([*map(str, logs), "-o", str(out), *extra]) == 0
    doc = json.loads(out.read_text())
    assert problems(doc) == [], "the imported file breaks the schema"
    return doc


def imb_rows(path: Path) -> dict[int, dict[str, str]]:
    """line number -> {column heading: token} for each table row of an IMB log."""
    heads, rows = None, {}
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        toks = line.split()
        if not line.startswith("#") and "#repetitions" in toks:
            heads = toks
        elif (
            heads
            and toks
            and not line.startswith("#")
            and len(toks) == len(heads)
            and all(map(_num, toks))
        ):
            rows[n] = dict(zip(heads, toks))
    return rows


def assert_imb_values(values: dict, row: dict[str, str], mb: int = 10**6) -> None:
    for head, tok in row.items():
        if head in IMB_VALUES:
            want = float(tok) * (mb if head == "Mbytes/sec" else 1)
            assert values[IMB_VALUES[head]] == pytest.approx(want, rel=1e-12), head
    if "t[usec]" in row:  # one time per row: IMB's t is the slowest process's (commbench's t_max)
        assert values["t_max"] == values["t"]
    elif "t_max[usec]" in row:
        assert values["t"] == values["t_max"]


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


def _cut(tmp_path: Path, src: Path, keep: int, tail: str = "") -> Path:
    lines = src.read_text().splitlines(keepends=True)
    out = tmp_path / f"cut-{src.name}"
    out.write_text("".join(lines[:keep]) + tail)
    return out


def _import_fails(tmp_path: Path, log: Path, capsys) -> tuple[str, dict]:
    out = tmp_path / f"{log.stem}.json"
    assert command.main([str(log), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    doc = json.loads(out.read_text())  # what was read before is kept
    assert doc["complete"] is False and doc["summary"]["interrupted"] in err
    assert problems(doc) == []
    return err, doc


def test_cut_and_malformed_logs_stop_at_their_line_and_keep_what_was_read(tmp_path, capsys):
    src = DATA / "imb2021" / "mpi1-np2.txt"
    rows = imb_rows(src)
    first_rows = sorted(rows)[:7]  # PingPong's five rows, PingPing's first two
    cut_row = _cut(tmp_path, src, first_rows[-1] - 1, "            2           20   ")
    err, doc = _import_fails(tmp_path, cut_row, capsys)
    assert (
        f"{cut_row}:{first_rows[-1]}: the log ends inside this line ('2           20', no newline"
        in err
    )
    assert [r["extra"]["source"]["line"] for r in doc["records"]] == first_rows[:-1]
    cut_table = _cut(tmp_path, src, first_rows[4] + 1)
    err, doc = _import_fails(tmp_path, cut_table, capsys)
    assert f"{cut_table}:{first_rows[4] + 1}: the log ends before IMB's closing line" in err
    assert len(doc["records"]) == 5
    bad = tmp_path / "bad.txt"
    bad.write_text(src.read_text().replace("34.83", "3x.83"))
    err, doc = _import_fails(tmp_path, bad, capsys)
    assert f"{bad}:{first_rows[0]}: a row of the PingPong table should hold 4 numbers" in err
    assert doc["records"] == []
    osu = _cut(tmp_path, DATA / "import" / "osu_bw.txt", 8, "128   \n")
    err, doc = _import_fails(tmp_path, osu, capsys)
    assert f"{osu}:9: a row of osu_bw should hold 2 values" in err and len(doc["records"]) == 4
    nccl = _cut(tmp_path, DATA / "import" / "nccl_all_reduce_perf.txt", 16)
    err, doc = _import_fails(tmp_path, nccl, capsys)
    assert f"{nccl}:16: the log ends before nccl-tests' footer" in err and len(doc["records"]) == 8
    text = (DATA / "import" / "nccl_all_reduce_perf.json").read_text()
    cut_json = tmp_path / "cut.json.log"
    cut_json.write_text(text[: text.index('{"size":131072')] + '{"size":131072,"cou')
    err, doc = _import_fails(tmp_path, cut_json, capsys)
    assert (
        f"{cut_json}:1: not valid JSON" in err and [r["bytes"] for r in doc["records"]][-1] == 32768
    )


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


def test_several_logs_in_one_file(tmp_path):
    doc = imported(tmp_path, DATA / "import" / "osu_latency.txt", DATA / "import" / "osu_bw.txt")
    src = doc["metadata"]["source"]
    assert src["tool"] == "osu_latency, osu_bw" and [lg["file"] for lg in src["logs"]] == [
        str(DATA / "import" / "osu_latency.txt"),
        str(DATA / "import" / "osu_bw.txt"),
    ]
    assert {r["extra"]["source"]["log"] for r in doc["records"]} == {0, 1}
    assert doc["config"]["benchmarks"] == ["latency", "bw"]


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
