"""The overhead family in real MPI processes: every experiment, the tables, LogGP, report."""

import json
import math

from tests.support.mpirun import commbench, mpiexec

SHORT = [
    "--trials",
    "2",
    "--reps",
    "4",
    "--sizes",
    "16,1000",
    "--q-time",
    "300",
    "--stream-time",
    "0.05",
]


def test_decomposition_interference_loggp(tmp_path):
    out = tmp_path / "oh.json"
    p = mpiexec(
        3, "overhead", *SHORT, "--q", "both", "--baseline", "paired", "-o", str(out), timeout=400
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    text = p.stdout
    for q in ("int", "float"):
        assert f"# Table 1 (Q = {q})" in text and f"# Table 3 (Q = {q})" in text
        assert f"# Q ({q}): unit" in text
    assert "# Interference (seed 002 section 5.2)" in text
    # Appendix B: the seed's "max. error" beside each line, and the measured combinations' own lines
    assert (
        "r2  max err   as seed 002 Table 3" in text
        and "# The measured combinations (Q = int)" in text
    )
    assert "\n2(F+E+U) " in text and "\nA+U " in text
    assert "# LogGP (Netgauge PRTT(n,d,s), n = 10" in text
    assert "# LogGP against the decomposition on the same run" in text

    doc = json.loads(out.read_text())
    assert doc["complete"] is True and doc["family"]["name"] == "overhead"
    recs = doc["records"]
    by = {}
    for r in recs:
        by.setdefault(r["benchmark"], []).append(r)
    # every experiment, for both Q variants, both trials and both sizes
    for name in ("R", "A+U", "F+S", "R+S", "2(F+E+U)", "Q(COMPTIME)", "Q(SENDTIME)"):
        got = {(r["extra"]["q"], r["extra"]["trial"], r["bytes"]) for r in by[name]}
        assert got == {(q, t, n) for q in ("int", "float") for t in (0, 1) for n in (16, 1000)}, (
            name
        )
        for r in by[name]:
            assert r["repetitions"] == 4 and r["extra"]["n_samples"] == 4
            if (
                "subtracted_us" not in r["extra"]
            ):  # else min/median subtract the calibration's min/median
                assert r["extra"]["min_us"] <= r["extra"]["mean_us"] <= r["extra"]["max_us"], (
                    name,
                    r["extra"],
                )
    echo = {
        (r["extra"]["q"], r["extra"]["trial"], r["bytes"], r["extra"]["distance"])
        for r in by["echo"]
    }
    assert len(echo) == 2 * 2 * 2 * 2  # distances 1 and 2 through a chain of 3 ranks
    for r in by["echo"]:
        if r["extra"]["distance"] == 1:
            assert r["extra"]["forwarding_us"] == 0.0  # nobody forwards at distance 1
        else:
            assert r["extra"]["forwarding_us"] > 0.0  # rank 1 timed its Recv + Send
    # seed test 7 (section 5.1): the same chains with every rank idle, and E against it
    idle = {
        (r["extra"]["q"], r["extra"]["trial"], r["bytes"], r["extra"]["distance"])
        for r in by["echo_idle"]
    }
    assert idle == echo and all("subtracted_us" not in r["extra"] for r in by["echo_idle"])
    for q in ("int", "float"):
        assert f"# Unloaded latency (seed 002 section 5.1, test 7; Q = {q})" in text
    # seed 002 Figure 1 from the results file
    fig = tmp_path / "fig1.svg"
    p = commbench("plot", str(out), "-o", str(fig))
    assert p.returncode == 0 and "seed 002 Figure 1" in p.stderr, p.stderr
    svg = fig.read_text()
    assert "Figure 1" in svg and "Q = int" in svg and "Q = float" in svg
    cell = by["analysis"][0]["extra"]["unloaded"]["int"]["1000"]
    assert cell["diff"]["n"] == 2 and math.isclose(
        cell["diff"]["mean"], cell["E"]["mean"] - cell["E_idle"]["mean"]
    )
    for r in by["A+U"]:
        assert r["extra"]["mean_us"] > 0  # a receive call takes time (nothing subtracted)
    assert {r["extra"]["q"] for r in by["calibration"]} == {"int", "float"}
    for c in by["calibration"]:
        assert len(c["extra"]["ranks"]) == 3
        assert all(
            k["comp_units"] == 5 * k["send_units"] or k["send_units"] >= 1
            for k in c["extra"]["ranks"]
        )

    # interference: one stream (3 ranks: a source, rank 0 forwarding, a sink), for both Q variants;
    # messages really went through rank 0
    inter = sorted(by["interference"], key=lambda r: r["extra"]["q"])
    assert [(r["extra"]["q"], r["extra"]["streams"], r["extra"]["channels"]) for r in inter] == [
        ("float", 1, 2),
        ("int", 1, 2),
    ]
    assert "  int        2 " in text and "float        2 " in text  # rows by active channels
    for r in inter:
        assert r["extra"]["forwarded"] > 0
        assert len(r["extra"]["period_us"]) == r["extra"]["streams"]
        assert all(m > 0 for m in r["extra"]["messages"])
        assert r["extra"]["slowdown"] > 0

    for name in ("prtt_1_0", "prtt_n_0", "prtt_n_d", "o_r"):
        assert {(r["extra"]["trial"], r["bytes"]) for r in by[name]} == {
            (t, n) for t in (0, 1) for n in (16, 1000)
        }
    for r in by["prtt_n_d"]:
        assert r["extra"]["d_us"] > 0 and r["extra"]["n"] == 10

    # the analysis record holds the solved values and fits for both variants
    (ana,) = by["analysis"]
    assert ana["extra"]["baseline"] == "paired" and ana["extra"]["statistic"] == "mean"
    for name in ("R", "F+S", "R+S"):
        assert all("subtracted_us" in r["extra"] for r in by[name])
    dec = ana["extra"]["decomposition"]
    for q in ("int", "float"):
        for k in ("E", "R", "S", "F", "U", "A"):
            assert set(dec[q]["values"][k]) == {"16", "1000"}
            fit = dec[q]["fits"][k]
            assert math.isfinite(fit["a"]) and math.isfinite(fit["b"])
    lg = ana["extra"]["loggp"]
    for k in ("g", "G"):
        assert math.isfinite(lg[k])
    assert len(ana["extra"]["relation"]) == 2
    assert len(ana["extra"]["interference"]) == 2

    # the same tables rebuilt from the results file
    rep = commbench("report", str(out))
    assert rep.returncode == 0, rep.stderr
    start = text.index("# Table 1 (Q = int)")
    assert (
        rep.stdout[rep.stdout.index("# Table 1 (Q = int)") :].strip()
        == text[start:].split("commbench: results")[0].strip()
    )


def test_parts_and_errors(tmp_path):
    out = tmp_path / "lg.json"
    p = mpiexec(
        3,
        "run",
        "--suite",
        "overhead",
        "loggp",
        "--trials",
        "1",
        "--reps",
        "3",
        "--sizes",
        "8,64",
        "--statistic",
        "min",
        "-o",
        str(out),
        timeout=300,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "# LogGP" in p.stdout and "Table 1" not in p.stdout
    names = {r["benchmark"] for r in json.loads(out.read_text())["records"]}
    assert names == {"prtt_1_0", "prtt_n_0", "prtt_n_d", "o_r", "analysis"}

    p = mpiexec(2, "overhead", "-o", "-")
    assert p.returncode == 2 and "family overhead needs at least 3 processes, got 2" in p.stderr
    p = mpiexec(3, "overhead", "--max-distance", "4", "-o", "-")
    assert (
        p.returncode == 2
        and "--max-distance 4: a chain of 4 hops needs 5 processes, got 3" in p.stderr
    )
    p = mpiexec(3, "overhead", "interference", "-o", "-")
    assert (
        p.returncode == 2
        and "needs decomposition" not in p.stderr
        and "run it with decomposition" in p.stderr
    )
    p = commbench("overhead", "--sizes", "16", "-n", "3")
    assert p.returncode == 2 and "--sizes '16'" in p.stderr
