"""The decomposition's solve and fits on the seed's published tables, LogGP algebra (no MPI)."""

import math

import pytest

from commbench.models.overhead import (
    SIX,
    combinations,
    decomposition_table,
    elapsed_from_echo,
    loggp,
    predicted_slowdown,
    relate,
    solve,
    spread,
)

SIZES = [16, 500, 1000, 1500, 2000]
# Seed 002, Table 1 (integer Q): means of five trials, microseconds.
TABLE1 = {
    "E": [242, 864, 1506, 2149, 2792],
    "R": [178, 200, 219, 249, 261],
    "S": [152, 157, 167, 167, 175],
    "F": [169, 465, 762, 1036, 1372],
    "U": [137, 429, 748, 1072, 1343],
    "A": [122, 124, 111, 97, 126],
}
TABLE1_STD = {
    "E": [1, 2, 1, 1, 0],
    "R": [3, 2, 2, 1, 2],
    "S": [3, 2, 2, 2, 2],
    "F": [3, 3, 3, 18, 3],
    "U": [2, 4, 4, 18, 3],
    "A": [5, 4, 3, 18, 2],
}
# Seed 002, Table 3: (intercept, slope, decimals the seed printed for the slope).
TABLE3 = {
    "E": (220, 1.285, 3),
    "R": (180, 0.04, 2),
    "S": (150, 0.01, 2),
    "F": (160, 0.60, 2),
    "U": (130, 0.61, 2),
    "A": (120, 0.0, 1),
}


def seed_trials(offsets=(0.0,)):
    """The measured combinations the seed's experiments would have produced."""
    return {
        t: {n: combinations({k: TABLE1[k][i] + off for k in SIX}) for i, n in enumerate(SIZES)}
        for t, off in enumerate(offsets)
    }


def test_solve_inverts_the_experiments_in_the_seeds_order():
    for i, _n in enumerate(SIZES):
        six = {k: TABLE1[k][i] for k in SIX}
        got = solve(combinations(six))
        assert got == pytest.approx(six)


def test_solve_uses_each_earlier_unknown():
    m = {"E": 10.0, "R": 3.0, "R+S": 5.0, "F+S": 9.0, "2(F+E+U)": 60.0, "A+U": 20.0}
    s = solve(m)
    assert s["S"] == 2.0  # (R+S) - R
    assert s["F"] == 7.0  # (F+S) - S
    assert s["U"] == 30.0 - 10.0 - 7.0  # (F+E+U) - E - F
    assert s["A"] == 20.0 - s["U"]


def test_table1_to_table3():
    """Fitting the seed's Table 1 reproduces its Table 3 at the digits it printed."""
    dec = decomposition_table(seed_trials())
    for k, (a, b, digits) in TABLE3.items():
        fit = dec["fits"][k]
        assert abs(fit.a - a) <= 5.0, (k, fit.a)  # the seed rounded intercepts to tens
        assert round(fit.b, digits) == pytest.approx(b), (k, fit.b)
        if k != "E":  # E's 221.3 was printed as 220, outside a tight interval
            assert fit.ci_a[0] <= a <= fit.ci_a[1], (k, fit.ci_a)
        assert fit.ci_b[0] <= b <= fit.ci_b[1] or round(fit.b, digits) == b, (k, fit.ci_b)


def test_max_error_and_the_measured_combinations_lines():
    """Appendix B: each line's "max. error" (the largest distance of a size's mean
    from it), and the measured combinations fitted as the seed's analysis does."""
    dec = decomposition_table(seed_trials())
    fit = dec["fits"]["A"]
    worst = max(abs(TABLE1["A"][i] - (fit.a + fit.b * n)) for i, n in enumerate(SIZES))
    assert dec["max_error"]["A"] == pytest.approx(worst) and 10 < worst < 20  # A at 1500 B: 97
    assert dec["max_error"]["E"] < 2  # E is a line to the microsecond
    rs = dec["composite_fits"]["R+S"]  # (178+152) ... (261+175): a line of its own
    assert rs.a == pytest.approx(dec["fits"]["R"].a + dec["fits"]["S"].a)
    assert rs.b == pytest.approx(dec["fits"]["R"].b + dec["fits"]["S"].b)
    assert set(dec["composite_fits"]) == {"E", "R", "R+S", "F+S", "2(F+E+U)", "A+U"}


def test_spread_over_trials_and_fit_through_every_point():
    # five trials scattered around Table 1 by its published standard deviations
    trials = {}
    for t, sign in enumerate((-1.0, 1.0, -1.0, 1.0, 0.0)):
        trials[t] = {
            n: combinations(
                {k: TABLE1[k][i] + sign * TABLE1_STD[k][i] * math.sqrt(5 / 4) for k in SIX}
            )
            for i, n in enumerate(SIZES)
        }
    dec = decomposition_table(trials)
    for k in SIX:
        for i, n in enumerate(SIZES):
            s = dec["values"][k][n]
            assert s.n == 5
            assert s.mean == pytest.approx(TABLE1[k][i])
            assert s.ci[0] < s.mean < s.ci[1] or s.std == 0
        assert dec["fits"][k].n == 25
    # The same line as fitting the means (equal trials per size).
    single = decomposition_table(seed_trials())
    for k in SIX:
        assert dec["fits"][k].a == pytest.approx(single["fits"][k].a)
        assert dec["fits"][k].b == pytest.approx(single["fits"][k].b)


def test_elapsed_from_echo_chain():
    e, base = 242.0, 1000.0
    t = [base + 2 * d * e for d in range(1, 6)]
    assert elapsed_from_echo(t) == pytest.approx(e)
    with pytest.raises(ValueError):
        elapsed_from_echo([1.0])


def test_interference_prediction_of_section_5_2():
    load = TABLE1["R"][-1] + TABLE1["S"][-1]  # R(2000) + S(2000) = 436, "approximately 440"
    assert predicted_slowdown(440, [2800]) == pytest.approx(1.19, abs=0.005)
    assert predicted_slowdown(440, [2830, 2830]) == pytest.approx(1.45, abs=0.005)
    assert predicted_slowdown(440, [3070] * 3) == pytest.approx(1.75, abs=0.005)
    assert predicted_slowdown(load, [2800]) < predicted_slowdown(load, [2800, 2800])
    assert math.isinf(predicted_slowdown(2000, [1000, 1000]))


def synthetic_rounds(L, o_s, o_r, g, G, n, trials=3):
    rounds = {}
    for t in range(trials):
        jitter = 0.01 * (t - 1)
        rounds[t] = {}
        for s in (1, 64, 1024, 4096):
            rtt = 2 * (o_s + L + (s - 1) * G + o_r) + jitter
            gap = g + (s - 1) * G
            d = rtt
            rounds[t][s] = {
                "prtt_1_0": rtt,
                "prtt_n_0": rtt + (n - 1) * max(gap, o_s),
                "prtt_n_d": rtt + (n - 1) * (o_s + d),
                "d": d,
                "o_r": o_r,
            }
    return rounds


def test_loggp_recovers_known_parameters():
    L, o_s, o_r, g, G, n = 1.5, 0.8, 0.6, 1.2, 0.002, 10
    lg = loggp(synthetic_rounds(L, o_s, o_r, g, G, n), n)
    assert lg["g"] == pytest.approx(g, abs=1e-6)
    assert lg["G"] == pytest.approx(G, rel=1e-6)
    assert lg["L"].mean == pytest.approx(L, abs=1e-6)
    assert lg["L_netgauge"].mean == pytest.approx(L + o_s + o_r, abs=0.02)
    for s in lg["sizes"]:
        assert lg["per_size"]["o_s"][s].mean == pytest.approx(o_s, abs=1e-6)
        assert lg["per_size"]["o_r"][s].mean == pytest.approx(o_r)
    fit = lg["fit"]
    assert fit.ci_b[0] <= G <= fit.ci_b[1] or fit.se_b == pytest.approx(0, abs=1e-9)


def test_relation_rows_pair_the_models():
    dec = decomposition_table(seed_trials())
    rounds = {
        0: {
            16: {
                "prtt_1_0": 2 * 548.0,
                "prtt_n_0": 2 * 548.0 + 9 * 400.0,
                "prtt_n_d": 2 * 548.0 + 9 * (321.0 + 2 * 548.0),
                "d": 2 * 548.0,
                "o_r": 437.0,
            },
            2000: {
                "prtt_1_0": 2 * 5507.0,
                "prtt_n_0": 2 * 5507.0 + 9 * 3000.0,
                "prtt_n_d": 2 * 5507.0 + 9 * (1547.0 + 2 * 5507.0),
                "d": 2 * 5507.0,
                "o_r": 1730.0,
            },
        }
    }
    rows = relate(dec, loggp(rounds, 10))
    assert [r["size"] for r in rows] == [16, 2000]
    r = rows[0]
    assert r["F+S"] == pytest.approx(169 + 152)
    assert r["o_s"] == pytest.approx(321.0)
    assert r["A+U+R"] == pytest.approx(122 + 137 + 178)
    assert r["F+E+U"] == pytest.approx(169 + 242 + 137)


def test_spread_single_value():
    s = spread([3.0])
    assert s.mean == 3.0 and s.std == 0.0 and math.isinf(s.ci[1])


def test_analyse_records_with_both_baselines_and_statistics():
    """analyse() rebuilds the combinations from records;
    a paired baseline replaces the calibration."""
    from types import SimpleNamespace

    from commbench.models.overhead import analyse

    def rec(name, n, mean, median=None, **extra):
        ex = {
            "q": "int",
            "trial": 0,
            "mean_us": mean,
            "median_us": mean if median is None else median,
            **extra,
        }
        return SimpleNamespace(benchmark=name, bytes=n, status="ok", extra=ex)

    cal = {"subtracted_us": {"mean": 900.0, "median": 890.0}}
    recs = []
    for n in (16, 2000):
        six = {k: TABLE1[k][SIZES.index(n)] for k in SIX}
        m = combinations(six)
        recs += [
            rec("R", n, m["R"], **cal),
            rec("R+S", n, m["R+S"], **cal),
            rec("F+S", n, m["F+S"], **cal),
            rec("A+U", n, m["A+U"]),
            rec("2(F+E+U)", n, m["2(F+E+U)"]),
            rec("Q(COMPTIME)", n, 900.0 + 10.0),
            rec("Q(SENDTIME)", n, 900.0 + 10.0),
        ]
        for d in (1, 2, 3):  # T'_d = c + 2dE, the forwarders' time already in T_d
            recs.append(
                rec(
                    "echo",
                    n,
                    500 + 2 * d * six["E"] + 40.0 * (d - 1),
                    distance=d,
                    forwarding_us=40.0 * (d - 1),
                    forwarding_median_us=40.0 * (d - 1),
                )
            )
    calibrated = analyse(recs)["decomposition"]["int"]
    for k in SIX:
        assert calibrated["values"][k][2000].mean == pytest.approx(TABLE1[k][-1])
    paired = analyse(recs, baseline="paired")["decomposition"]["int"]
    # the paired Q ran 10 us slower than the calibration: R and R+S 10 us lower, so S unchanged,
    # F+S 10 us lower, so F 10 us lower and U 10 us higher
    assert paired["values"]["R"][16].mean == pytest.approx(TABLE1["R"][0] - 10)
    assert paired["values"]["S"][16].mean == pytest.approx(TABLE1["S"][0])
    assert paired["values"]["F"][16].mean == pytest.approx(TABLE1["F"][0] - 10)
    assert paired["values"]["U"][16].mean == pytest.approx(TABLE1["U"][0] + 10)
    med = analyse(recs, statistic="median", baseline="paired")["decomposition"]["int"]
    # median_us is stored as median(raw) - calibration median (890): raw = m + 890, minus the paired
    # 910
    assert med["values"]["R"][16].mean == pytest.approx(TABLE1["R"][0] - 20)
