"""The gate never passes what it cannot vouch for (commbench.views.compare_trust): real runs
that were interrupted, failed their -check, lost rows to time-outs, differ in what changes the
numbers, or rest on too few repetitions; each a named finding, refused (exit 2) or warned, in
the text and in the JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.mpirun import ENV, commbench, mpiexec, terminate, wait_for_records

SAMPLED = [
    "PingPong",
    "Sendrecv",
    "-msglog",
    "0:3",
    "-iter",
    "50",
    "-time",
    "10",
    "--samples",
    "10",
]


def run(out: Path, *args: str, np_: int = 2, env: dict | None = None, ok: tuple = (0,)) -> Path:
    p = mpiexec(np_, "run", *args, "-o", str(out), env=env)
    assert p.returncode in ok, p.stdout[-2000:] + p.stderr[-3000:]
    return out


def gate(*args) -> tuple[int, dict, str]:
    p = commbench("compare", *map(str, args), "--json", "-")
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr[-3000:]
    return p.returncode, json.loads(p.stdout), p.stderr


def codes(doc: dict, effect: str | None = None) -> list[str]:
    return [f["code"] for f in doc["findings"] if effect is None or f["effect"] == effect]


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return run(tmp_path_factory.mktemp("trust") / "base.json", *SAMPLED)


def test_an_interrupted_run_is_refused_unless_allowed(base, tmp_path):
    """A real run stopped by SIGTERM after a few rows: complete false; the rows it holds agree
    with the baseline, yet the gate must not pass (what it lacks is not gated)."""
    out = tmp_path / "cut.json"
    cmd = [
        sys.executable,
        "-m",
        "commbench",
        "run",
        "-n",
        "2",
        *SAMPLED[:-2],
        # ~2 s a row here (8 rows): the run must still be going when its second row is written,
        # on a machine twice as fast too (400 samples ended the whole run in 0.4 s, before SIGTERM)
        "--samples",
        "20000",
        "--consecutive-samples",  # rows written as they end: SIGTERM once two are
        "-o",
        str(out),
    ]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**__import__("os").environ, **ENV},
    )
    assert wait_for_records(out, 2, proc=proc) >= 2
    terminate(proc)
    assert json.loads(out.read_text())["complete"] is False
    for old, new, side in ((base, out, "new"), (out, base, "old")):
        rc, doc, err = gate(old, new)
        assert (
            rc == 2 and doc["verdict"] == "refused" and "incomplete-run" in codes(doc, "refused")
        ), doc["findings"]
        f = next(f for f in doc["findings"] if f["code"] == "incomplete-run")
        assert (
            f["side"] == side
            and "did not finish" in f["message"]
            and "--allow-incomplete" in f["message"]
        )
    text = commbench("compare", str(base), str(out))
    assert text.returncode == 2 and "# REFUSED [incomplete-run]" in text.stdout
    assert "# gate: REFUSED (exit 2)" in text.stdout and "gate: no regression" not in text.stdout
    rc, doc, _ = gate(base, out, "--allow-incomplete", "--threshold", "50%")
    assert (
        rc in (0, 1) and codes(doc, "refused") == [] and "incomplete-run" in codes(doc, "warning")
    )


def test_a_failed_check_is_refused_whatever_is_allowed(base, tmp_path):
    bad = run(
        tmp_path / "bad.json", *SAMPLED, "-check", env={"COMMBENCH_FAULT_CORRUPT": "1"}, ok=(1,)
    )
    good = run(tmp_path / "good.json", *SAMPLED, "-check")
    for old, new in ((good, bad), (bad, good)):
        rc, doc, _ = gate(
            old, new, "--allow-incomplete", "--allow-different", "--gate-unsampled", "--allow-noisy"
        )
        assert rc == 2 and codes(doc, "refused") == ["check-failed"], doc["findings"]
        assert (
            "timings are not valid" in doc["findings"][0]["message"] and doc["findings"][0]["rows"]
        )
    # -iter 50 spreads its samples widely: --allow-noisy, or the pass is "too noisy"
    rc, doc, _ = gate(good, good, "--allow-noisy")
    assert rc == 0 and doc["verdict"] == "pass" and codes(doc, "refused") == []


def test_rows_not_measured_in_new_are_refused(tmp_path):
    """-time cuts the last sizes of a sweep as IMB does (status time-out): where the baseline
    measured them, the gate cannot say they did not regress."""
    args = ["PingPong", "-msglog", "0:18", "-iter", "20", "--samples", "6"]
    old = run(tmp_path / "old.json", *args, "-time", "30")
    new = run(tmp_path / "new.json", *args, "-time", "0.0001")
    lost = [r for r in json.loads(new.read_text())["records"] if r["status"] == "time-out"]
    assert lost, "no row timed out at -time 0.0001"
    rc, doc, _ = gate(old, new)
    assert rc == 2 and "rows-not-measured" in codes(doc, "refused"), doc["findings"]
    f = doc["findings"][0]
    cut_at = min(
        r["bytes"] for r in lost
    )  # the sweep's first time-out: it measured nothing past it
    assert {int(r.split("bytes=")[1].split()[0]) for r in f["rows"]} == {
        r["bytes"] for r in json.loads(old.read_text())["records"] if r["bytes"] >= cut_at
    }
    assert all("(time-out)" in r or "(not reached)" in r for r in f["rows"])
    rc, doc, _ = gate(
        new, old
    )  # the other way round: rows the baseline lacks are said, not refused
    assert "rows-not-measured-before" in codes(doc, "warning") and "rows-not-measured" not in codes(
        doc
    )


@pytest.mark.parametrize(
    "extra,says",
    [
        (["--per-iteration"], "per-repetition timing (--per-iteration) differs"),
        (["-off_cache", "-1"], "cache policy (-off_cache) differs"),
        (["--methodology", "imb2021"], "methodology (--methodology) differs"),
        (["-thread_level", "multiple"], "MPI thread level (-thread_level) differs"),
    ],
)
def test_options_that_change_the_numbers_are_refused(base, tmp_path, extra, says):
    other = run(tmp_path / "other.json", *SAMPLED, *extra)
    rc, doc, err = gate(base, other)
    assert (
        rc == 2 and doc["verdict"] == "refused" and says in err and codes(doc) == ["options-differ"]
    ), err
    rc, doc, _ = gate(base, other, "--allow-different", "--threshold", "500%")
    assert (
        rc in (0, 1)
        and "options-differ" in codes(doc, "warning")
        and any(says in n for n in doc["notes"])
    )


def test_untested_slower_rows_are_named_not_passed_silently(base, tmp_path):
    """Some rows tested, others without samples reading 3x slower: the gate line says the
    tested rows pass and names the untested slow ones; --gate-unsampled makes them count."""
    doc = json.loads(base.read_text())
    for r in doc["records"]:
        if r["benchmark"] == "Sendrecv":
            del r["extra"]["samples"]
            r["values"] = {k: v * 3 if k.startswith("t") else v for k, v in r["values"].items()}
    slow = tmp_path / "slow.json"
    slow.write_text(json.dumps(doc))
    # 50 repetitions a sample spread widely: too noisy to pass on its own (not what is tested)
    text = commbench("compare", str(base), str(slow), "--allow-noisy")
    assert text.returncode == 0, text.stderr
    assert (
        "# warning [untested-slower]: 5 untested rows read slower by more than 5% (up to 3.00x"
        in text.stdout
    )
    assert (
        "# gate: no regression in the 5 tested rows" in text.stdout
        and "5 untested rows not judged" in text.stdout
    )
    rc, doc, _ = gate(base, slow, "--gate-unsampled")
    assert rc == 1 and len(doc["regressions"]) == 5


def test_rows_resting_on_too_few_repetitions_are_marked_and_untested(tmp_path):
    """--sync-start window with rank 1 descheduled before every block of starts (the fault
    injection COMMBENCH_FAULT_DESCHEDULE, as a loaded machine does now and then): its
    repetitions start late; a row left with a handful is marked !few in the text and the
    file, and compare does not test it."""
    out = tmp_path / "win.json"
    p = mpiexec(
        2,
        "run",
        "Allreduce",
        "-msglog",
        "0:2",
        "-iter",
        "64",
        "--samples",
        "6",
        "--sync-start",
        "window",
        "--per-iteration",
        "-o",
        str(out),
        env={"COMMBENCH_FAULT_DESCHEDULE": "1:0.05"},
    )
    assert p.returncode == 0, p.stderr[-2000:]
    recs = json.loads(out.read_text())["records"]
    few = [r for r in recs if "few_repetitions" in r["extra"]]
    for r in recs:
        st = r["extra"]["sync"]
        valid = st["repetitions"] - st["invalid"]
        marked = valid < 10 or valid < 0.5 * st["repetitions"]
    assert marked == (r in few), (r["bytes"], st["invalid"], st["repetitions"])
    assert few, [r["extra"]["sync"] for r in recs]
    assert "!few" in p.stdout and "rest on too few valid repetitions" in p.stdout
    rep = commbench("report", str(out))
    assert rep.returncode == 0 and rep.stdout.count("!few") == p.stdout.count("!few")
    rc, doc, _ = gate(out, out, "--gate-unsampled")
    untested = {
        r["label"]
        for r in doc["rows"]
        if r["untested_reason"] and "too few valid" in r["untested_reason"]
    }
    assert untested == {f"Allreduce np={r['np']} bytes={r['bytes']}" for r in few}
