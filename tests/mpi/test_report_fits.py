"""`commbench report` of a `run --fit` results file prints the run's fit tables, where the run did.

The run renders each fit from the entry it stores ("fits", fit.to_dict()) and
the report renders the stored entry with the same function;
tests/unit/test_report_fits.py checks that this text is the text of the Fit
itself (JSON and all), the tests here compare the report with a real run on 2
ranks.
"""

import json

import pytest

from tests.support.mpirun import FAST, commbench, mpiexec

FIT_HEADS = ("# Hockney fit of ", "# Linear fit of ")


def fit_blocks(stdout: str) -> list[tuple[str, list[str], list[str]]]:
    """(line before, block, three lines after) of every fit block:
    its head line and the '#   ' lines under it."""
    lines = stdout.splitlines()
    out = []
    for i, line in enumerate(lines):
        if line.startswith(FIT_HEADS):
            j = i + 1
            while j < len(lines) and lines[j].startswith("#   "):
                j += 1
            assert lines[i - 1] == "", lines[i - 2 : i + 1]  # a blank line sets each block off
            out.append((lines[i - 2], lines[i:j], lines[j : j + 3]))
    return out


def dash(stdout: str) -> str:
    """The dash line above "# Benchmarking Sendrecv"."""
    lines = stdout.splitlines()
    return lines[lines.index("# Benchmarking Sendrecv ") - 1]


def without_fit_blocks(stdout: str) -> str:
    lines = stdout.splitlines(keepends=True)
    keep, i = [], 0
    while i < len(lines):
        if lines[i] == "\n" and i + 1 < len(lines) and lines[i + 1].startswith(FIT_HEADS):
            i += 2
            while i < len(lines) and lines[i].startswith("#   "):
                i += 1
            continue
        keep.append(lines[i])
        i += 1
    return "".join(keep)


# ---------------------------------------------------------------- no MPI


# ---------------------------------------------------------------- real MPI, 2 ranks


def _run_and_report(tmp_path, name: str, *args: str, env: dict | None = None, ok: tuple = (0,)):
    path = tmp_path / f"{name}.json"
    run = mpiexec(2, "run", *FAST, *args, "-o", str(path), env=env)
    assert run.returncode in ok, run.stdout[-3000:] + run.stderr[-3000:]
    rep = commbench("report", str(path))
    assert rep.returncode == 0, rep.stderr[-3000:]
    return run.stdout, rep.stdout, path


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    return _run_and_report(
        tmp_path_factory.mktemp("report_fits"),
        "sweep",
        "--fit",
        "-msglog",
        "0:12",
        "PingPong",
        "Sendrecv",
    )


def test_report_reprints_the_run_fits(sweep):
    run, rep, path = sweep
    blocks = fit_blocks(run)
    assert [b[1][0].split(":")[0] for b in blocks] == [
        "# Hockney fit of PingPong, 2 processes",
        "# Hockney fit of Sendrecv, 2 processes",
    ], run[-3000:]
    # the same text, each after its own table's last row and before what follows it
    assert fit_blocks(rep) == blocks, rep[-3000:]
    assert blocks[0][2][:2] == ["", dash(run)] and blocks[0][2][2].startswith(
        "# Benchmarking Sendrecv"
    )
    # after the last table: the closing lines against the physical limit (docs/limits.md)
    assert blocks[1][2][:2] == ["", blocks[1][2][1]]
    assert blocks[1][2][1].startswith("# commbench: against the physical limit")
    assert all(b[0].split()[0].isdigit() for b in blocks)  # a table row: the last size
    # the report shows the stored fits, not a refit: change a stored number and the report follows
    doc = json.loads(path.read_text())
    doc["fits"][0]["segments"][0]["t0"]["value"] = 123.456
    path.write_text(json.dumps(doc))
    edited = commbench("report", str(path)).stdout
    assert (
        any("123.5 [" in ln for ln in fit_blocks(edited)[0][1])
        and fit_blocks(edited)[1] == blocks[1]
    )


def test_report_without_fits_prints_no_fit_block(tmp_path, sweep):
    run, rep, _ = _run_and_report(tmp_path, "nofit", "-msglog", "0:4", "PingPong", "Sendrecv")
    assert not fit_blocks(run) and not fit_blocks(rep)
    assert "fit of" not in rep
    # a results file of an older version (no "fits" section): the report as before, without the
    # blocks
    _, with_fits, path = sweep
    doc = json.loads(path.read_text())
    del doc["fits"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    p = commbench("report", str(old))
    assert p.returncode == 0 and p.stdout == without_fit_blocks(with_fits)


def test_report_reprints_not_possible(tmp_path):
    sizes = tmp_path / "one_size.txt"
    sizes.write_text("8\n")
    run, rep, _ = _run_and_report(
        tmp_path, "one", "--fit", "-msglen", str(sizes), "PingPong", "Sendrecv"
    )
    blocks = fit_blocks(run)
    assert [b[1] for b in blocks] == [
        [
            (
                f"# Hockney fit of {b}, 2 processes: not possible: a line needs at least 2 "
                "distinct sizes, got 1"
            )
        ]
        for b in ("PingPong", "Sendrecv")
    ], run[-3000:]
    assert fit_blocks(rep) == blocks


def test_report_fit_before_unsuccessful_line(tmp_path):
    """-check with corrupted data: the fit comes between the table and
    "!!! Benchmark unsuccessful !!!"."""
    run, rep, _ = _run_and_report(
        tmp_path,
        "corrupt",
        "--fit",
        "-check",
        "-msglog",
        "0:4",
        "PingPong",
        "Sendrecv",
        env={"COMMBENCH_FAULT_CORRUPT": "1"},
        ok=(0, 1),
    )
    blocks = fit_blocks(run)
    assert len(blocks) == 2 and all(
        b[2][:2] == ["", "!!! Benchmark unsuccessful !!!"] for b in blocks
    ), run[-3000:]
    assert fit_blocks(rep) == blocks, rep[-3000:]
