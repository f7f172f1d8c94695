"""The store's gate as a nightly pipeline drives it (issue 46, items 5-8): each row against
the latest runs that hold it, a persistent regression that stays red until a person accepts
it, a band that is what the test calls, and a gate that says what it could not detect.

Real runs of commbench on 2 ranks make the baseline; the slowed nights are those runs' own
documents with every time multiplied (a factor far beyond any run-to-run spread, so the
verdicts do not depend on the machine's load) and later dates, stored and judged by the
real commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.mpirun import commbench

SHORT = ["-msglog", "0:3", "-iter", "100"]


def _run(out: Path, *bench: str) -> Path:
    p = commbench("run", "-n", "2", *bench, *SHORT, "--system", "lab", "-o", str(out))
    assert p.returncode == 0, p.stderr[-2000:]
    return out


def _slowed(src: Path, out: Path, factor: float, day: int) -> Path:
    """src's document with every time factor times longer (rates factor times lower), dated
    `day` days later: another night of the same configuration, slower."""
    doc = json.loads(src.read_text())
    for r in doc["records"]:
        for k, v in r["values"].items():
            if isinstance(v, float):
                r["values"][k] = v * factor if k.startswith("t") else v / factor
        for k, ts in (r.get("rank_times") or {}).items():
            r["rank_times"][k] = [t * factor for t in ts]
    doc["metadata"]["date"] = f"2099-01-{day:02d}T06:00:00+0000"
    out.write_text(json.dumps(doc))
    return out


def _gate(new: Path, db: Path, *extra: str, noisy: bool = True) -> tuple[int, dict, str]:
    """The gate's exit status, JSON verdict and stderr; noisy: --allow-noisy, so that the
    rows decide on a loaded machine too, whose runs (without --samples) can spread by 80 %
    and make the gate "too noisy to judge" (the band test below asks for that)."""
    p = commbench("compare", str(new), "--baseline", str(db), "--threshold", "20%",
                  "--json", "-", *extra, *(["--allow-noisy"] if noisy else []))  # fmt: skip
    return p.returncode, json.loads(p.stdout), p.stderr


@pytest.fixture(scope="module")
def nights(tmp_path_factory) -> tuple[Path, list[Path]]:
    d = tmp_path_factory.mktemp("nights")
    return d, [_run(d / f"n{i}.json", "PingPong") for i in range(4)]


def test_each_row_is_judged_against_the_latest_runs_that_hold_it(nights, tmp_path):
    """Three PingPong nights, then three Allreduce-only nights: a PingPong run is judged
    against the three that hold PingPong (was: the 5 latest runs, 2 of them with PingPong, or
    'nothing to compare'); the JSON says per row how many it had."""
    d, files = nights
    db = tmp_path / "s.db"
    for f in files[:3]:
        assert commbench("store", "add", str(f), "--store", str(db)).returncode == 0
    for i in range(3):
        f = _run(tmp_path / f"a{i}.json", "Allreduce")
        assert commbench("store", "add", str(f), "--store", str(db)).returncode == 0
    new = _run(tmp_path / "new.json", "PingPong")  # after them all
    rc, verdict, err = _gate(new, db)
    assert rc in (0, 1), err
    assert {r["k_old"] for r in verdict["rows"]} == {3}, verdict["rows"]
    assert [r["id"] for r in verdict["baseline"]["runs"]] == [3, 2, 1]
    assert "the 5 latest comparable runs that hold it" in " ".join(verdict["notes"])


def test_a_persistent_regression_stays_red_until_accepted(nights, tmp_path):
    d, files = nights
    db = tmp_path / "s.db"
    for f in files:
        assert commbench("store", "add", str(f), "--store", str(db)).returncode == 0
    slow = [_slowed(files[3], tmp_path / f"slow{i}.json", 200.0 + i, 10 + i) for i in range(4)]
    for i, f in enumerate(slow[:3]):  # three nights in a row, each stored then judged
        assert commbench("store", "add", str(f), "--store", str(db)).returncode == 0
        rc, verdict, err = _gate(f, db)
        assert rc == 1 and verdict["verdict"] == "regression", (i, err, verdict["notes"])
        assert f"run {5 + i} of {db} flagged" in err, err
        assert {r["id"] for r in verdict["baseline"]["runs"]} <= {1, 2, 3, 4}, i
        if i:
            assert f"{i} runs the gate flagged are left out" in " ".join(verdict["notes"])
    listed = commbench("store", "list", "--store", str(db)).stdout
    assert listed.count("(flagged: out of baselines)") == 3
    p = commbench("store", "accept", "id=5-7", "--store", str(db))
    assert p.returncode == 2 and "--why" in p.stderr
    p = commbench("store", "accept", "id=5-7", "--why", "new eager protocol: slower, known",
                  "--store", str(db))  # fmt: skip
    assert p.returncode == 0 and "accepted 3 runs (5, 6, 7)" in p.stderr, p.stderr
    p = commbench("store", "accept", "id=5-7", "--why", "again", "--store", str(db))
    assert p.returncode == 2 and "no flagged run" in p.stderr
    trend = commbench("store", "trend", "--store", str(db)).stdout
    assert trend.count("# accepted change at run") == 3 and "new eager protocol" in trend
    assert commbench("store", "add", str(slow[3]), "--store", str(db)).returncode == 0
    rc, verdict, err = _gate(slow[3], db)  # the accepted level is the baseline now
    assert rc == 0 and {5, 6, 7} <= {r["id"] for r in verdict["baseline"]["runs"]}, err


def test_the_band_is_what_is_tested_and_the_gate_says_what_it_cannot_detect(nights, tmp_path):
    """In text and JSON a row is called only outside its band, and the band's upper end is
    the row's detectable slowdown; a baseline spread so wide that 2x cannot be called is "too
    noisy to judge" (exit 2), and under --allow-noisy says "cannot detect less than 2x"
    instead of a plain "no regression"."""
    d, files = nights
    db = tmp_path / "s.db"
    wild = [files[0], _slowed(files[1], tmp_path / "w1.json", 6.0, 1),
            _slowed(files[2], tmp_path / "w2.json", 0.2, 2)]  # fmt: skip
    for f in wild:
        assert commbench("store", "add", str(f), "--store", str(db)).returncode == 0
    new = _slowed(files[3], tmp_path / "new.json", 1.8, 20)
    rc, verdict, err = _gate(new, db, noisy=False)  # too noisy: no row can see 1 + 4 x 20 %
    assert rc == 2 and verdict["verdict"] == "too-noisy", err
    (f,) = [f for f in verdict["findings"] if f["effect"] == "refused"]
    assert f["message"].startswith("too noisy to judge: the baseline's rows vary by ")
    assert "between runs" in f["message"] and "a slowdown below " in f["message"]
    rc, verdict, err = _gate(new, db)
    assert rc == 0 and "too-noisy" in [f["code"] for f in verdict["findings"]], err
    for r in verdict["rows"]:
        lo, hi = r["ci"]
        assert r["interval"] == "band" and r["detectable"] > hi  # 9 in 10 beyond half
        assert r["verdict"] == "same" or not (lo <= r["ratio"] <= hi), r
    blind = verdict["summary"]["detectable"]
    assert blind["blind"] == len(verdict["rows"]) and blind["median"] > 2
    p = commbench("compare", str(new), "--baseline", str(db), "--threshold", "20%",
                  "--allow-noisy")  # fmt: skip
    assert p.returncode == 0 and "rows cannot detect less than 2x here" in p.stdout, p.stdout
    assert "# detectable: the smallest slowdown" in p.stdout
