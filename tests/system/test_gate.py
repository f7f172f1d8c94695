"""`commbench compare` as a regression gate: exit 0 (no regression), 1 (regression),
2 (bad input, incomparable runs), on results files of real MPI runs.

The slowdown is real: two emulated hosts (tests/support/netns.py), h1's link rate-limited
by tbf for the slowed run; the sizes that outrun the limit must be named. Same
configuration: one run's samples split in two (even and odd samples: the same
conditions by construction) must pass at 10 %; two separate runs at a generous
50 % (this machine is shared; the false-alarm and detection rates are measured by
benchmarks/gate_study.py, docs/statistics.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from commbench.models import twosample
from tests.support import netns
from tests.support.load import QUIET, cpu_share, said
from tests.support.mpirun import commbench, mpiexec

ROOT = str(Path(__file__).resolve().parents[2])
WHY_NOT = netns.available()
SAMPLED = [
    "PingPong",
    "Sendrecv",
    "-msglog",
    "0:4",
    "-iter",
    "100",
    "-time",
    "10",
    "--samples",
    "12",
]
JSON_KEYS = {
    "format",
    "format_version",
    "old",
    "new",
    "threshold",
    "alpha",
    "confidence",
    "gate_unsampled",
    "run_spread",
    "method",
    "exit_status",
    "verdict",
    "regressions",
    "summary",
    "notes",
    "warnings",
    "errors",
    "findings",
    "rows",
}
ROW_KEYS = {
    "interval",
    "detectable",
    "family",
    "benchmark",
    "np",
    "mode",
    "bytes",
    "groups",
    "extras",
    "label",
    "old_us",
    "new_us",
    "ratio",
    "ci",
    "k_old",
    "k_new",
    "p_slower",
    "q_slower",
    "p_faster",
    "q_faster",
    "spread",
    "tested",
    "untested_reason",
    "verdict",
    "regression",
    "limit",  # each run's fractions of its physical limits (docs/limits.md), or null
    "within_spread",  # the two-file test's view of each run's samples, [old, new]
    "rho",
    "n_eff",
    "taken",
}


def run(out: Path, *args: str, np_: int = 2, env: dict | None = None) -> Path:
    p = mpiexec(np_, "run", *args, "-o", str(out), env=env)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    return out


def gate(*args: str) -> tuple[int, dict, str]:
    """compare … --json -: the exit status, the JSON verdict, stderr."""
    p = commbench("compare", *map(str, args), "--json", "-")
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    return p.returncode, json.loads(p.stdout), p.stderr


SHARE: dict[str, float] = {}  # a spinning probe's share of a core around the sampled run


@pytest.fixture(scope="module")
def sampled(tmp_path_factory) -> Path:
    share = cpu_share()
    out = run(tmp_path_factory.mktemp("gate") / "sampled.json", *SAMPLED)
    SHARE["sampled"] = min(share, cpu_share())
    return out


@pytest.fixture(scope="module")
def unsampled(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("plain")
    return (
        run(d / "a.json", "PingPong", "-msglog", "0:4", "-iter", "100"),
        run(d / "b.json", "PingPong", "-msglog", "0:4", "-iter", "100"),
    )


def edited(src: Path, dst: Path, edit) -> Path:
    doc = json.loads(src.read_text())
    edit(doc)
    dst.write_text(json.dumps(doc))
    return dst


# ---------------------------------------------------------------- the statistics


def test_median_log_test_bootstrap_and_benjamini_hochberg():
    """The two-file test asks about the threshold, beyond an assumed spread between runs
    (tests/unit/test_twosample.py has its operating characteristics)."""
    rng = np.random.default_rng(1)
    old = rng.lognormal(0.0, 0.05, 30)
    same = twosample.compare(old, rng.lognormal(0.0, 0.05, 30), threshold=0.1)
    assert same.p_slower > 0.5 and same.p_faster > 0.5 and same.ci[0] < 1 < same.ci[1]
    small = twosample.compare(old, old * 1.05, threshold=0.1)  # real, but below the threshold
    assert small.p_slower > 0.5 and small.ratio == pytest.approx(1.05)
    big = twosample.compare(old, old * 1.3, threshold=0.1)
    assert big.p_slower < 1e-3 and big.p_faster > 0.99 and big.ci[0] > 1.2 and big.ci[1] < 1.4
    assert 1.1 < big.detectable < 1.3  # 5 % samples, 2 % between runs: 30 % is well within
    fast = twosample.compare(old, old / 1.3, threshold=0.1)
    assert fast.p_faster < 1e-3 and fast.p_slower > 0.99
    # BH by hand: sorted p .01 .03 .04 .2 -> min over j>=i of p_j m / j
    assert twosample.adjust([0.01, 0.04, 0.03, 0.2]) == pytest.approx(
        [0.04, 0.16 / 3, 0.16 / 3, 0.2]
    )
    # 3 and 3 samples: Student's t with 2 degrees of freedom, a wide test that says so
    few = twosample.compare(old[:3], old[:3] * 1.3, threshold=0.1)
    assert few.df == 2 and few.detectable > 1.25 and few.detectable > big.detectable
    assert twosample.usable([1.0, 2.0]) is None and twosample.usable([1.0, 2.0, -1.0]) is None


# ---------------------------------------------------------------- same configuration: exit 0


def test_one_runs_samples_split_in_two_pass_at_10_percent(sampled, tmp_path, measured):
    """On a quiet machine the even and the odd samples pass at 10 %; with the cores busy
    with other work a burst can move a 6-sample median (issue 49): at most 2 of the 12 rows
    may be flagged there, and the count is printed either way. 6 samples a side leave the
    test wide (a detectable ratio near 1.3 at 10 %, and "too noisy" where a burst widens it
    further): --allow-noisy, so that the rows decide, which is what this test is about."""

    def half(start):
        def edit(doc):
            for r in doc["records"]:
                st = r["extra"]["samples"]
                st["t_max_samples"] = st["t_max_samples"][start::2]

        return edit

    old, new = (
        edited(sampled, tmp_path / "even.json", half(0)),
        edited(sampled, tmp_path / "odd.json", half(1)),
    )
    rc, doc, err = gate(old, new, "--threshold", "10%", "--allow-noisy")
    share, flagged = SHARE["sampled"], doc["regressions"]
    measured(f"even against odd samples: {len(flagged)} of 12 rows flagged; {said(share)}")
    if share >= QUIET:
        assert rc == 0 and doc["exit_status"] == 0 and doc["verdict"] == "pass", flagged
    else:
        assert rc == doc["exit_status"] in (0, 1) and len(flagged) <= 2, flagged
    assert set(doc) == JSON_KEYS and all(set(r) == ROW_KEYS for r in doc["rows"])
    assert doc["summary"]["matched"] == doc["summary"]["tested"] == 12
    assert all(
        r["k_old"] == r["k_new"] == 6 and r["q_slower"] >= r["p_slower"] for r in doc["rows"]
    )
    assert all(r["ci"][0] <= r["ratio"] <= r["ci"][1] for r in doc["rows"])
    assert doc["threshold"] == 0.1 and doc["alpha"] == 0.05 and not doc["warnings"]
    assert doc["run_spread"] == 0.02 and all(r["taken"] for r in doc["rows"])


def test_two_runs_of_one_configuration_pass(sampled, tmp_path):
    """A generous 50 % here (a shared machine);
    up to three pairs, one must pass, none may fail to compare."""
    outcomes = []
    for i in range(3):
        new = run(tmp_path / f"again{i}.json", *SAMPLED)
        p = commbench("compare", str(sampled), str(new), "--threshold", "50%")
        assert p.returncode in (0, 1) and "Traceback" not in p.stderr, p.stderr[-2000:]
        assert "# test: a change beyond 50% in the median of the log-samples" in p.stdout
        assert p.stdout.rstrip().endswith("within noise") and "# detectable: " in p.stdout
        outcomes.append(p.returncode)
        if p.returncode == 0:
            assert "# gate: no regression" in p.stdout
            break
    assert 0 in outcomes, outcomes


# ---------------------------------------------------------------- injected slowdown: exit 1


def _scaled(factor):
    def edit(doc):
        for r in doc["records"]:
            st = r["extra"]["samples"]
            st["t_max_samples"] = [t * factor for t in st["t_max_samples"]]

    return edit


def test_a_runs_samples_scaled_are_judged_against_the_threshold(sampled, tmp_path):
    """Every sample of a real run times 2: every row a regression at 10 %, the common factor
    said; times 1.05: real but below the threshold, a pass (the test asks about the threshold)."""
    rc, doc, err = gate(
        sampled, edited(sampled, tmp_path / "x2.json", _scaled(2.0)), "--threshold", "10%"
    )
    assert rc == 1 and len(doc["regressions"]) == doc["summary"]["tested"] == 12
    assert all(r["ratio"] == pytest.approx(2.0) and r["q_slower"] <= 0.05 for r in doc["rows"])
    assert any(
        "12 of 12 tested rows are slower by one factor (2.00 to 2.00)" in w for w in doc["warnings"]
    )
    rc, doc, err = gate(
        sampled, edited(sampled, tmp_path / "x105.json", _scaled(1.05)), "--threshold", "10%"
    )
    assert rc == 0 and doc["regressions"] == [] and doc["summary"]["slower"] == 0


def _noisy(doc):
    """Every other sample 3 times longer, the others 3 times shorter: NEW's rows vary by a
    factor of 9 between samples around the same middle (no row slower through the noise)."""
    for r in doc["records"]:
        st = r["extra"]["samples"]
        st["t_max_samples"] = [
            t * (3 if i % 2 else 1 / 3) for i, t in enumerate(st["t_max_samples"])
        ]


def _noisy_and_slower(doc):
    """NEW's samples both noisy and 20 times longer: slower through any noise."""
    _noisy(doc)
    for r in doc["records"]:
        st = r["extra"]["samples"]
        st["t_max_samples"] = [t * 20 for t in st["t_max_samples"]]


def test_a_run_too_noisy_to_judge_is_exit_2_unless_allowed(sampled, tmp_path):
    """Half of NEW's samples 3 times longer, half 3 times shorter: no row's test can see 1 + 4
    x the threshold, so the gate says "too noisy to judge" (exit 2, verdict too-noisy) instead
    of a pass; --allow-noisy makes it a warning and the rows decide (exit 0 or 1). Rows slower
    through the noise are a regression (exit 1) with the noise said as a warning: noise can
    hide a small slowdown, never make a large one green."""
    noisy = edited(sampled, tmp_path / "noisy.json", _noisy)
    rc, doc, err = gate(sampled, noisy)
    assert rc == 2 and doc["verdict"] == "too-noisy" and doc["exit_status"] == 2, err
    (f,) = [f for f in doc["findings"] if f["effect"] == "refused"]
    assert f["code"] == "too-noisy" and f["message"].startswith(
        "too noisy to judge: NEW's rows vary by "
    )
    assert "a slowdown below " in f["message"] and "--allow-noisy" in f["message"]
    assert doc["summary"]["detectable"]["median"] > 1.2 and len(doc["rows"]) == 12
    assert all(r["detectable"] > 1.2 and r["within_spread"][1] > 0.3 for r in doc["rows"])
    p = commbench("compare", str(sampled), str(noisy))
    assert p.returncode == 2 and "# gate: TOO NOISY (exit 2): too noisy to judge" in p.stdout
    rc, doc, err = gate(sampled, noisy, "--allow-noisy")
    assert rc in (0, 1) and doc["verdict"] in ("pass", "regression"), err
    assert [f["effect"] for f in doc["findings"] if f["code"] == "too-noisy"] == ["warning"]
    worse = edited(sampled, tmp_path / "worse.json", _noisy_and_slower)
    rc, doc, err = gate(sampled, worse)
    assert rc == 1 and doc["verdict"] == "regression" and doc["regressions"], err
    (f,) = [f for f in doc["findings"] if f["code"] == "too-noisy"]
    assert f["effect"] == "warning" and "slower beyond that noise" in f["message"]


SLOW = ["PingPong", "-msglog", "13:16", "-iter", "20", "-time", "10"]  # 0 B, 8 KiB … 64 KiB


def emulated(c: netns.Cluster, out: Path, *args: str) -> Path:
    p = c.mpiexec(
        [
            "-n",
            "2",
            "-ppn",
            "1",
            sys.executable,
            "-m",
            "commbench",
            "run",
            *SLOW,
            *args,
            "--timeout",
            "120",
            "-o",
            str(out),
        ],
        netmod="ofi",
        timeout=300,
        env={"PYTHONPATH": ROOT},
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    return out


@pytest.mark.skipif(WHY_NOT is not None, reason=f"emulated hosts unavailable: {WHY_NOT}")
def test_rate_limited_link_is_a_regression_naming_the_slowed_rows(tmp_path):
    """h1's link at 100 Mbit/s (12.5 MB/s): 8 KiB and up take 10x and more; 0 B is not held back."""
    with netns.Cluster(2) as c:
        base, plain = (
            emulated(c, tmp_path / "base.json", "--samples", "15"),
            emulated(c, tmp_path / "plain.json"),
        )
        c.limit("h1", 100)
        slow, plain_slow = (
            emulated(c, tmp_path / "slow.json", "--samples", "15"),
            emulated(c, tmp_path / "ps.json"),
        )
    rc, doc, _ = gate(base, slow, "--threshold", "10%")
    assert rc == 1 and doc["verdict"] == "regression"
    slowed = {f"PingPong np=2 bytes={x}" for x in (8192, 16384, 32768, 65536)}
    assert slowed <= set(doc["regressions"]), doc["regressions"]
    assert all(
        r["ratio"] > 3 and r["q_slower"] <= 0.05 and r["ci"][0] > 1.1
        for r in doc["rows"]
        if r["bytes"]
    )
    text = commbench(
        "compare", str(base), str(slow), "--threshold", "10%", "--json", str(tmp_path / "v.json")
    )
    assert (
        text.returncode == 1
        and json.loads((tmp_path / "v.json").read_text())["regressions"] == doc["regressions"]
    )
    for name in slowed:
        assert f"# regression: {name}: new/old " in text.stdout
    # without samples: nothing can be tested, so the gate refuses (exit 2) unless --gate-unsampled
    rc, doc, _ = gate(plain, plain_slow, "--threshold", "10%")
    assert rc == 2 and doc["summary"]["tested"] == 0 and doc["verdict"] == "refused"
    assert [f["code"] for f in doc["findings"] if f["effect"] == "refused"] == ["nothing-tested"]
    assert slowed <= set(doc["findings"][0]["rows"])  # the rows that read slower are named
    assert {r["label"] for r in doc["rows"] if r["verdict"] == "slower"} >= slowed
    rc, doc, _ = gate(plain, plain_slow, "--threshold", "10%", "--gate-unsampled")
    assert rc == 1 and slowed <= set(doc["regressions"])


# ---------------------------------------------------------------- runs without samples


def test_runs_without_samples_are_refused_unless_gated_by_ratio(unsampled):
    """No row tested: the gate cannot vouch for the runs, whatever the ratios (even 1.0)."""
    a, b = unsampled
    for other in (a, b):
        p = commbench("compare", str(a), str(other), "--threshold", "10%")
        assert p.returncode == 2, p.stderr[-2000:]
        assert (
            "# REFUSED [nothing-tested]: no row could be tested (old row: no --samples)" in p.stdout
        )
        assert "# gate: REFUSED (exit 2)" in p.stdout and "gate: no regression" not in p.stdout
        assert "(untested)" in p.stdout and "# 6 matched rows (0 tested)" in p.stdout
    p = commbench("compare", str(a), str(b), "--gate-unsampled")
    assert "# warning: no row can be tested (old row: no --samples: 6)" in p.stdout
    assert "nothing says whether a change there is more than run-to-run noise" in p.stdout
    rc, doc, err = gate(a, a, "--gate-unsampled")  # the same data: ratio 1, nothing to gate
    assert rc == 0 and "commbench: warning: no row can be tested" in err
    assert all(
        r["ratio"] == 1 and r["p_slower"] is None and r["untested_reason"] for r in doc["rows"]
    )


# ------------------------------------------------------------- incomparable runs, bad input: exit 2


def test_incomparable_runs_are_refused(sampled, tmp_path):
    cases = {
        "world size differs: old 2, new 3": run(tmp_path / "np3.json", *SAMPLED, np_=3),
        "buffer allocation (--alloc) differs: old numpy, new mpi": run(
            tmp_path / "mpi.json", *SAMPLED, "--alloc", "mpi"
        ),
        "huge pages (--hugepages) differs: old default, new off": run(
            tmp_path / "hp.json", *SAMPLED, "--hugepages", "off"
        ),
        "MPI library differs": edited(
            sampled,
            tmp_path / "lib.json",
            lambda d: d["metadata"].update(
                mpi_library_version="Open MPI v5.0.3, package: Open MPI"
            ),
        ),
        "rank placement (ranks per host) differs: old [2], new [1, 1]": edited(
            sampled,
            tmp_path / "two.json",
            lambda d: d["metadata"].update(ranks_per_host={"a": 1, "b": 1}),
        ),
    }
    for says, other in cases.items():
        rc, doc, err = gate(sampled, other)
        assert rc == 2 and says in err and "--allow-different compares them anyway" in err, (
            says,
            err,
        )
        assert doc["exit_status"] == 2 and doc["verdict"] == "refused" and says in doc["errors"][0]
        assert [f["code"] for f in doc["findings"]] == ["options-differ"]
    p = commbench(  # the same samples: nothing slower, however noisy the run was
        "compare", str(sampled), str(cases["MPI library differs"]), "--allow-different",
        "--allow-noisy",
    )  # fmt: skip
    assert (
        p.returncode == 0 and "# note: MPI library differs" in p.stdout
    )  # the same rows: nothing slower
    sendrecv = run(tmp_path / "sendrecv.json", "Sendrecv", "-msglog", "0:1", "-iter", "10")
    only_pingpong = edited(
        sampled,
        tmp_path / "pp.json",
        lambda d: d.update(records=[r for r in d["records"] if r["benchmark"] == "PingPong"]),
    )
    rc, doc, err = gate(only_pingpong, sendrecv)
    assert rc == 2 and "have no matching rows" in err and doc["rows"] == []


BAD = [
    (["--threshold", "abc"], "--threshold 'abc' is not a non-negative number"),
    (
        ["--threshold", "10"],
        "a plain number is a fraction below 1 (accepted: --threshold 10% for 10 percent",
    ),
    (["--threshold", "-5%"], "is not a non-negative number"),
    (["--alpha", "0"], "--alpha '0' is not a probability between 0 and 1"),
    (["--alpha", "1.5"], "is not a probability"),
    (["--alpha"], "--alpha needs a value"),
    (["--bogus"], "unknown option '--bogus' for compare"),
    (["--run-spread", "x"], "--run-spread 'x' is not a non-negative fraction"),
    (["--run-spread", "2%", "--across", "mpi"], "--run-spread does not go with --across mpi"),
]


@pytest.mark.parametrize("extra,says", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_options_are_refused(unsampled, extra, says):
    p = commbench("compare", str(unsampled[0]), str(unsampled[1]), *extra)
    assert p.returncode == 2 and says in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_bad_files_and_arguments_are_refused(unsampled, tmp_path):
    a = str(unsampled[0])
    (tmp_path / "not.json").write_text("{ not json")
    for args, says in (
        ([a], "compare needs two results files, got 1"),
        ([a, str(tmp_path / "missing.json")], "cannot read"),
        ([a, str(tmp_path / "not.json")], "not a JSON results file"),
        ([a, "--json", str(tmp_path / "no" / "dir.json")], "compare needs two results files"),
    ):
        p = commbench("compare", *args)
        assert p.returncode == 2 and says in p.stderr and "Traceback" not in p.stderr, (
            args,
            p.stderr,
        )
    # --json makes missing directories, as run's -o and --csv do
    p = commbench("compare", a, a, "--gate-unsampled", "--json", str(tmp_path / "no" / "dir.json"))
    assert (
        p.returncode == 0
        and json.loads((tmp_path / "no" / "dir.json").read_text())["verdict"] == "pass"
    )
    rc, doc, err = gate(a, str(tmp_path / "missing.json"))
    assert rc == 2 and "cannot read" in doc["errors"][0]


def test_threshold_forms_and_help(unsampled):
    a, b = map(str, unsampled)
    for form in (["--threshold", "10%"], ["--threshold", "0.1"], ["--threshold=10%"]):
        rc, doc, _ = gate(a, a, *form, "--gate-unsampled")
        assert rc == 0 and doc["threshold"] == pytest.approx(0.1), form
    rc, doc, _ = gate(a, b, "--alpha=0.01")
    assert doc["alpha"] == 0.01
    h = commbench("compare", "-h")
    assert (
        h.returncode == 0 and "Exit status: 0 no regression, 1 regression, 2 bad input" in h.stdout
    )
