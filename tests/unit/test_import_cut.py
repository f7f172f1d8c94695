"""A cut or edited row of a real log is never imported as a good value (issue 31 item 3).

IMB and OSU print times and rates with "%.2f" (IMB's Msg/sec "%.0f"), sizes
and counts with "%d"; nccl-tests fits its numbers to fixed widths. A log
copied while the job ran ends inside a row: the importer must stop there
(exit 2, complete: false, the line named) and keep exactly the rows before.
The logs are the real outputs of the peers kept in tests/data (their READMEs
give the commands); every cut below is made here from them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commbench.commands import importing as command
from commbench.importers import read
from tests.support.import_logs import cut_log as _cut
from tests.support.import_logs import imb_rows
from tests.support.results_schema import problems

DATA = Path(__file__).parents[1] / "data"
REAL = sorted(
    [
        *DATA.glob("import/*.txt"),
        *DATA.glob("osu/ref/*.txt"),
        *DATA.glob("imb2021/*-np*.txt"),
        *DATA.glob("imb-p2p/*.txt"),
        *DATA.glob("imb-mt/*.txt"),
        DATA / "import" / "nccl_all_reduce_perf.json",
    ]
)
# Logs cut inside their rows: every IMB layout (t, t_min/t_max/t_avg, overlap, Msg/sec, -multi 1's
# group rows, IMB-MT without a closing line), OSU's (-c verdicts, -f -z, one-sided "passed",
# mbw_mr, osu_init's line) and nccl-tests' text.
CUT = [
    "imb2021/mpi1-np2.txt",
    "imb2021/nbc-np2.txt",
    "imb-p2p/np2.txt",
    "imb-mt/np2-t2.txt",
    "import/imb-mpi1-multi1-np4.txt",
    "import/imb-mpi1-uniband-np2.txt",
    "osu/ref/latency.txt",
    "osu/ref/bw-c-z.txt",
    "osu/ref/acc_latency-c.txt",
    "osu/ref/mbw_mr.txt",
    "osu/ref/init.txt",
    "import/osu_allreduce-f-z-1M.txt",
    "import/nccl_all_reduce_perf.txt",
]


def records_of(path: Path) -> tuple[str | None, list[dict]]:
    log = read(str(path), 0, "auto", 2)
    return log.error, [r.to_dict() for r in log.records]


def last_line(rec: dict) -> int:
    """The last line of the log a record was read from (-multi 1: its last group's row)."""
    return rec["extra"]["source"]["line"] + max(0, len(rec["group_values"]) - 1)


def same(a: dict, b: dict) -> bool:
    """One row read twice (the turnover of a table cut short is taken from fewer rows)."""
    return {k: v for k, v in a.items() if k != "turnover"} == {
        k: v for k, v in b.items() if k != "turnover"
    }


def rows(path: Path) -> list[int]:
    """Line numbers of the log's table rows: the lines its records come from, and -multi 1's
    other group rows."""
    err, recs = records_of(path)
    assert err is None, err
    return sorted({n for r in recs for n in range(r["extra"]["source"]["line"], last_line(r) + 1)})


@pytest.mark.parametrize("log", REAL, ids=lambda p: str(p.relative_to(DATA)))
def test_every_real_log_imports_whole(log):
    """No real output is taken for a cut one: the format checks fit what the tools print."""
    err, recs = records_of(log)
    assert err is None and recs


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("rel", CUT)
def test_a_log_cut_inside_a_row_keeps_the_rows_before_and_names_the_cut(tmp_path, rel):
    """Cut at every character of a row (first, middle, last row of the log): without a
    newline (a log copied while it was written) the row is never imported and the log stops
    at its line; with a newline after the cut (edited), a number the cut shortened is never
    stored: the row stops the log, but where its last column is a count, which any prefix
    of digits is (IMB's Msg/sec, nccl-tests' #wrong: the documented limit), and where only
    its leading blanks are left (a row gone, not a number changed)."""
    src = DATA / rel
    lines = src.read_text().splitlines()
    _, whole = records_of(src)
    table = rows(src)
    for n in sorted({table[0], table[len(table) // 2], table[-1]}):
        row = lines[n - 1].rstrip()
        before = "".join(ln + "\n" for ln in lines[: n - 1])
        kept = [r for r in whole if last_line(r) < n]
        at_n = [r for r in whole if r["extra"]["source"]["line"] == n]
        last = row.rfind(" ") + 1  # where the last column's number starts
        counts_last = row[last:].isdigit()
        for k in range(1, len(row)):
            cut = _write(tmp_path, "cut.txt", before + row[:k])
            err, recs = records_of(cut)
            assert err is not None and err.startswith(f"{cut}:{n}: "), (rel, n, k, err)
            assert len(recs) == len(kept) and all(map(same, recs, kept)), (rel, n, k)
            edited = _write(
                tmp_path,
                "edited.txt",
                before + row[:k] + "\n" + "".join(ln + "\n" for ln in lines[n:]),
            )
            err, recs = records_of(edited)
            stored = [r for r in recs if r["extra"]["source"]["line"] == n]
            if row[:k].strip() and not (
                counts_last and k > last
            ):  # (only blanks left: the row is gone, not cut)
                assert err is not None and err.startswith(f"{edited}:{n}: ") and not stored, (
                    rel,
                    n,
                    k,
                    err,
                )
            for r in stored:  # a count cut short may pass; no other number of the row may differ
                assert {x: v for x, v in r["values"].items() if x != "msgs_per_sec"} == {
                    x: v for x, v in at_n[0]["values"].items() if x != "msgs_per_sec"
                }, (rel, n, k)


OSU_LAT = DATA / "import" / "osu_latency.txt"  # its row "128    7.95" is line 12


@pytest.mark.parametrize("value", ["7.9", "7.", "7", "795", "7.950", ".95", "7,95"])
@pytest.mark.parametrize("newline", [True, False])
def test_the_issues_osu_example_and_variants(tmp_path, capsys, value, newline):
    """`128  7.9` or `128  7.` where OMB printed 7.95, at the end of the log or followed by
    the rest of it: exit 2, the line and OSU's format named, the rows before kept."""
    lines = OSU_LAT.read_text().splitlines(keepends=True)
    assert lines[11].split() == ["128", "7.95"]
    rest = "".join(lines[12:]) if newline else ""
    log = _write(
        tmp_path,
        "lat.txt",
        "".join(lines[:11]) + f"128{' ' * 21}{value}" + ("\n" if newline else "") + rest,
    )
    out = tmp_path / "lat.json"
    assert command.main([str(log), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and problems(doc) == []
    assert [r["bytes"] for r in doc["records"]] == [1, 2, 4, 8, 16, 32, 64]
    assert f"{log}:12: " in err and doc["summary"]["interrupted"].startswith(f"{log}:12: ")
    if newline:
        assert f"Avg Latency(us) {value!r} is not a number as OSU prints it" in err
        assert "(accepted: Avg Latency(us) with 2 decimals, as OSU's %.2f prints it)" in err
    else:
        assert (
            f"the log ends inside this line ({'128' + ' ' * 21 + value!r}, no newline after it)"
            in err
        )


IMB_LOG = DATA / "imb2021" / "mpi1-np2.txt"


@pytest.mark.parametrize(
    ("old", "new", "column", "form"),
    [
        (
            "            4           20         9.01         0.44",
            "            4           20         9.0          0.44",
            "t[usec]",
            "2 decimals",
        ),
        (
            "            4           20         9.01         0.44",
            "            4           20         9.01         0.4",
            "Mbytes/sec",
            "2 decimals",
        ),
        (
            "            4           20         9.01         0.44",
            "            4           20         9.01          0.",
            "Mbytes/sec",
            "2 decimals",
        ),
        (
            "            4           20        14.65        15.10        14.87         0.53",
            "            4           20        14.65        15.1         14.87         0.53",
            "t_max[usec]",
            "2 decimals",
        ),
    ],
)
def test_imb_numbers_not_as_imb_prints_them_stop_the_log(tmp_path, capsys, old, new, column, form):
    """A value in the middle of an IMB log with fewer decimals than %.2f (an edit, or logs
    pasted together): the log stops at its line, whatever follows."""
    text = IMB_LOG.read_text()
    n = text[: text.index(old)].count("\n") + 1
    log = _write(tmp_path, "imb.txt", text.replace(old, new, 1))
    out = tmp_path / "imb.json"
    assert command.main([str(log), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert (
        f"{log}:{n}: {column} " in err
        and f"(accepted: {column} with {form}, as IMB-MPI1's %.2f" in err
    )
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and all(
        r["extra"]["source"]["line"] < n for r in doc["records"]
    )


def test_imb_msg_rate_is_printed_without_a_point(tmp_path, capsys):
    """IMB prints Msg/sec with %.0f: '1551934.' or '1551934.00' is not IMB's."""
    text = (DATA / "imb-p2p" / "np2.txt").read_text()
    for bad in ("1551934.", "1551934.00"):
        log = _write(tmp_path, "p2p.txt", text.replace(" 1551934\n", f" {bad}\n", 1))
        assert command.main([str(log), "-o", str(tmp_path / "p2p.json")]) == 2
        assert f"Msg/sec {bad!r} is not a number as IMB-P2P prints it" in capsys.readouterr().err


def test_imb_multi_1_cut_between_the_groups_rows(tmp_path, capsys):
    """-multi 1 prints one row per group for each size: a log that ends after group 0's row
    of a size has no record of that size (one group's times are not the size's)."""
    src = DATA / "import" / "imb-mpi1-multi1-np4.txt"
    lines = src.read_text().splitlines(keepends=True)
    n = next(
        i for i, ln in enumerate(lines, 1) if ln.split()[:2] == ["0", "2"]
    )  # PingPong size 2, group 0
    _, whole = records_of(src)
    for tail in ("", "\n"):
        log = _write(tmp_path, "multi.txt", "".join(lines[:n]) + tail)
        err, recs = records_of(log)
        assert err.startswith(
            f"{log}:{n}: the -multi 1 rows of size 2 of PingPong hold 1 of the 2 groups"
        )
        assert len(recs) == 2 and all(map(same, recs, whole[:2]))


def test_osu_verdicts_and_init_line_cut(tmp_path):
    """OSU's Validation column holds Pass or Fail (one-sided: passed, failed, skipped); a
    verdict cut short, or osu_init's line cut, is not read as a verdict or a time."""
    src = (DATA / "osu" / "ref" / "bw-c-z.txt").read_text()
    row = next(ln for ln in src.splitlines() if ln.startswith("8 "))
    for verdict in ("Pas", "P", "pass", "PASS"):
        log = _write(tmp_path, "bw.txt", src.replace(row, row.replace("Pass", verdict, 1), 1))
        err, _ = records_of(log)
        assert f"Validation {verdict!r} is not a verdict OMB prints" in err
    init = (DATA / "osu" / "ref" / "init.txt").read_text()
    for k in range(len("nprocs: 2, min: 23 ms, max: 27 ms, avg: 25 m")):
        log = _write(tmp_path, "init.txt", init[: init.index("nprocs") + 1 + k] + "\n")
        err, recs = records_of(log)
        assert err is not None and recs == []


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
