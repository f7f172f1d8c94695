"""Where a message's time goes: the Krumme-Greenfield decomposition and LogGP (no MPI).

Seed 002 measures, per message size n, the combinations E, R, R+S, F+S,
2(F+E+U) and A+U, and solves them left to right for one new unknown at a
time (its section 3.5): E, R, S = (R+S) - R, F = (F+S) - S,
U = (F+E+U) - E - F, A = (A+U) - U. Each of the six is then fitted with a
line a + b·n (commbench.models.linear.fit_line, with confidence intervals).

LogGP is derived from Netgauge's parametrised round-trip times PRTT(n, d, s)
(Hoefler et al.): g + (s-1)G from (PRTT(n,0,s) - PRTT(1,0,s)) / (n-1),
o_s = (PRTT(n,d,s) - PRTT(1,0,s)) / (n-1) - d, o_r timed at the receiver,
L = PRTT(1,0,s)/2 - o_s - o_r - (s-1)G.

Everything here works on plain numbers (microseconds) or on the records'
`extra` dictionaries, so a view can rebuild every table from a results file.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from commbench.models.linear import LineFit, fit_line, t_quantile

SIX = ("E", "R", "S", "F", "U", "A")
# The measured combinations in the seed's solving order.
COMBOS = ("E", "R", "R+S", "F+S", "2(F+E+U)", "A+U")


def solve(m: Mapping[str, float]) -> dict[str, float]:
    """The six times from one set of measured combinations (seed §3.5, Appendix B)."""
    e = m["E"]
    r = m["R"]
    s = m["R+S"] - r
    f = m["F+S"] - s
    u = m["2(F+E+U)"] / 2 - e - f
    a = m["A+U"] - u
    return {"E": e, "R": r, "S": s, "F": f, "U": u, "A": a}


def combinations(six: Mapping[str, float]) -> dict[str, float]:
    """The inverse of solve: what the experiments measure given the six times."""
    e, r, s, f, u, a = (six[k] for k in SIX)
    return {"E": e, "R": r, "R+S": r + s, "F+S": f + s, "2(F+E+U)": 2 * (f + e + u), "A+U": a + u}


def elapsed_from_echo(t_d: Sequence[float]) -> float:
    """E from echo times T_1..T_k at distances 1..k: mean of (T_{d+1} - T_d)/2 (seed §3.2).

    The seed's analysis sums the k-1 differences and divides by 2(k-1).
    """
    if len(t_d) < 2:
        raise ValueError("E needs echo times at two distances at least (a chain of 3 ranks)")
    diffs = [(b - a) / 2 for a, b in itertools.pairwise(t_d)]
    return sum(diffs) / len(diffs)


@dataclass(frozen=True)
class Spread:
    mean: float
    std: float  # sample standard deviation over trials (0 for one trial)
    n: int
    ci: tuple[float, float]  # Student t interval of the mean

    def to_dict(self) -> dict:
        return {"mean": self.mean, "std": self.std, "n": self.n, "ci": list(self.ci)}


def spread(values: Iterable[float], confidence: float = 0.95) -> Spread:
    v = [float(x) for x in values]
    if not v:
        raise ValueError("no values")
    m = sum(v) / len(v)
    sd = statistics.stdev(v) if len(v) > 1 else 0.0
    if len(v) > 1:
        h = t_quantile(0.5 + confidence / 2, len(v) - 1) * sd / math.sqrt(len(v))
    else:
        h = math.inf
    return Spread(m, sd, len(v), (m - h, m + h))


def decomposition_table(trials: Mapping[int, Mapping[int, Mapping[str, float]]]) -> dict:
    """trials[trial][size] = measured combinations -> per-size spreads and fitted lines.

    Returns {"sizes": [...], "values": {name: {size: Spread}}, "per_trial":
    {name: {size: [values]}}, "fits": {name: LineFit}}. Fits use every
    (size, trial) point with ordinary least squares, as the seed's analysis
    program does with its per-size means; with the same number of trials per
    size the line is the same, and the intervals see the trial scatter.
    """
    sizes = sorted({n for t in trials.values() for n in t})
    per_trial: dict[str, dict[int, list[float]]] = {k: {n: [] for n in sizes} for k in SIX}
    measured: dict[str, dict[int, list[float]]] = {k: {n: [] for n in sizes} for k in COMBOS}
    for t in sorted(trials):
        for n, combo in trials[t].items():
            for k, v in solve(combo).items():
                per_trial[k][n].append(v)
            for k in COMBOS:
                measured[k][n].append(combo[k])
    out = {"sizes": sizes, "per_trial": per_trial}
    out.update(_lines(per_trial, sizes))
    composites = _lines(measured, sizes)  # the seed's -s output: the measured combinations' lines
    out.update(
        composite_values=composites["values"],
        composite_fits=composites["fits"],
        composite_max_error=composites["max_error"],
    )
    return out


def _lines(per_trial: dict[str, dict[int, list[float]]], sizes: list[int]) -> dict:
    """Per name: spreads by size, the line through every (size, trial) point, and
    the seed's "max. error": the largest distance of a size's mean from the line."""
    values = {k: {n: spread(v[n]) for n in sizes if v[n]} for k, v in per_trial.items()}
    fits: dict[str, LineFit | None] = {}
    worst: dict[str, float | None] = {}
    for k, v in per_trial.items():
        xs = [n for n in sizes for _ in v[n]]
        ys = [y for n in sizes for y in v[n]]
        fits[k] = fit_line(xs, ys) if len(set(xs)) >= 2 else None
        f = fits[k]
        worst[k] = (
            max(abs(s.mean - (f.a + f.b * n)) for n, s in values[k].items())
            if f is not None
            else None
        )
    return {"values": values, "fits": fits, "max_error": worst}


# ---------------------------------------------------------------- interference (seed §5.2)


def predicted_slowdown(load_us: float, periods_us: Sequence[float]) -> float:
    """1 / (1 - Σ load/period): the compute slowdown if each message passing the
    computing rank costs it `load_us` of CPU and stream i delivers one message
    every periods_us[i] (seed §5.2: 440 µs every 2800 µs -> 1.19). inf when the
    streams would need more than the whole processor."""
    busy = sum(load_us / p for p in periods_us if p > 0)
    return math.inf if busy >= 1 else 1.0 / (1.0 - busy)


# ---------------------------------------------------------------- LogGP (Netgauge)


def loggp_point(
    prtt_1_0: float, prtt_n_0: float, prtt_n_d: float, d: float, n: int
) -> dict[str, float]:
    """Per-size quantities of one Netgauge round: gap g+(s-1)G and o_s."""
    if n < 2:
        raise ValueError("PRTT(n, ., s) needs n >= 2")
    return {"gap": (prtt_n_0 - prtt_1_0) / (n - 1), "o_s": (prtt_n_d - prtt_1_0) / (n - 1) - d}


def loggp(rounds: Mapping[int, Mapping[int, Mapping[str, float]]], n: int) -> dict:
    """rounds[trial][size] = {"prtt_1_0", "prtt_n_0", "prtt_n_d", "d", "o_r"} (µs) -> LogGP.

    g and G come from a line through every (size, gap) point; o_s and o_r per
    size with intervals over trials; L per LogGP's definition at the smallest
    size, L = PRTT(1,0,s)/2 - o_s - o_r - (s-1)G, and Netgauge's printed
    L = PRTT(1,0,s)/2 beside it.
    """
    sizes = sorted({s for r in rounds.values() for s in r})
    gaps_x, gaps_y = [], []
    per: dict[str, dict[int, list[float]]] = {
        k: {s: [] for s in sizes} for k in ("o_s", "o_r", "gap", "half_rtt")
    }
    for t in sorted(rounds):
        for s, v in rounds[t].items():
            p = loggp_point(v["prtt_1_0"], v["prtt_n_0"], v["prtt_n_d"], v["d"], n)
            gaps_x.append(s)
            gaps_y.append(p["gap"])
            per["gap"][s].append(p["gap"])
            per["o_s"][s].append(p["o_s"])
            per["o_r"][s].append(v["o_r"])
            per["half_rtt"][s].append(v["prtt_1_0"] / 2)
    fit = fit_line([x - 1 for x in gaps_x], gaps_y) if len(set(gaps_x)) >= 2 else None
    G = fit.b if fit else 0.0
    s0 = sizes[0]
    l_values = [
        h - os_ - or_ - (s0 - 1) * G
        for h, os_, or_ in zip(per["half_rtt"][s0], per["o_s"][s0], per["o_r"][s0])
    ]
    return {
        "sizes": sizes,
        "n": n,
        "g": fit.a if fit else statistics.mean(gaps_y),
        "G": G,
        "fit": fit,
        "L": spread(l_values),
        "L_netgauge": spread(per["half_rtt"][s0]),
        "per_size": {k: {s: spread(v[s]) for s in sizes if v[s]} for k, v in per.items()},
    }


def relate(dec: dict, lg: dict) -> list[dict]:
    """Rows comparing the two models on the sizes both measured (µs).

    o_s is the sender's CPU per message: F + S. o_r the receiver's: A + U (+ R
    where arrival costs the receiver CPU). L + (s-1)G is the wire time: E.
    PRTT(1,0,s)/2 is the half round trip: F + E + U. The gap g + (s-1)G
    cannot be below the larger per-message CPU cost, max(F+S, A+U+R).
    """
    rows = []
    v = dec["values"]
    for s in lg["sizes"]:
        if s not in v["E"]:
            continue
        six = {k: v[k][s].mean for k in SIX}
        ps = lg["per_size"]
        rows.append(
            {
                "size": s,
                "o_s": ps["o_s"][s].mean,
                "F+S": six["F"] + six["S"],
                "o_r": ps["o_r"][s].mean,
                "A+U+R": six["A"] + six["U"] + six["R"],
                "L+(s-1)G": lg["L"].mean + (s - 1) * lg["G"],
                "E": six["E"],
                "gap": ps["gap"][s].mean,
                "max(F+S,A+U+R)": max(six["F"] + six["S"], six["A"] + six["U"] + six["R"]),
                "PRTT/2": ps["half_rtt"][s].mean,
                "F+E+U": six["F"] + six["E"] + six["U"],
            }
        )
    return rows


# ---------------------------------------------------------------- from records

DIRECT = ("R", "A+U", "F+S", "R+S", "2(F+E+U)")
PAIRED = {"R": "Q(COMPTIME)", "R+S": "Q(COMPTIME)", "F+S": "Q(SENDTIME)"}
PAIRED_BASE = ("Q(COMPTIME)", "Q(SENDTIME)")
PRTT = ("prtt_1_0", "prtt_n_0", "prtt_n_d", "o_r")


def analyse(
    recs: list[Any], statistic: str = "mean", baseline: str = "calibrated"
) -> dict[str, Any]:
    """Everything the tables show, from the experiment records.

    statistic: which per-experiment value is solved, "mean" (the seed's),
    "median" (robust against preemptions on a shared machine) or "min" (the
    unpreempted best case; with baseline "paired" both sides are minima). PRTT values
    use the median, as Netgauge does (the minimum under "min"). baseline: what R, F+S and R+S
    subtract, the Q times calibrated at start (the seed's) or "paired": the
    same Q timed in each round with nothing in flight (robust to drift).
    """
    got = _collect(recs, statistic, baseline)
    echo = _echoes(got.echoes, got.combos)  # first: E goes into the combinations
    out: dict[str, Any] = {
        "statistic": statistic,
        "baseline": baseline,
        "calibration": got.calib,
        "decomposition": _decompositions(got.combos),
        "echo": echo,
        "interference": [],
        "loggp": _loggp_rounds(got.rounds, got.loggp_n) if got.rounds and got.loggp_n else None,
        "relation": [],
        "unloaded": unloaded(got.echoes, got.idle),
    }
    if out["decomposition"]:
        first = next(iter(out["decomposition"]))
        dec = out["decomposition"][first]
        if out["loggp"]:
            out["relation"] = relate(dec, out["loggp"])
        for ex in got.inter:
            out["interference"].append(_predicted(ex, out["decomposition"].get(ex["q"], dec)))
    return out


@dataclass
class _Collected:
    """What analyse reads from the records, sorted by experiment."""

    # combos[q][trial][size][combination] = µs, the measured combinations
    combos: dict[str, dict[int, dict[int, dict[str, float]]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(dict))
    )
    # echoes[(q, trial, size)][distance] = T_d less the forwarding, µs; idle: test 7's
    echoes: dict[tuple, dict[int, float]] = field(default_factory=lambda: defaultdict(dict))
    idle: dict[tuple, dict[int, float]] = field(default_factory=lambda: defaultdict(dict))
    # rounds[trial][size] = the PRTT values, o_r and d, µs
    rounds: dict[int, dict[int, dict[str, float]]] = field(
        default_factory=lambda: defaultdict(dict)
    )
    loggp_n: int | None = None
    inter: list[dict] = field(default_factory=list)
    calib: dict[str, Any] = field(default_factory=dict)


def _paired_baselines(recs: list[Any], key: str) -> dict[tuple, float]:
    """(q, trial, size, "Q(COMPTIME)" | "Q(SENDTIME)") -> the Q timed in the same rounds."""
    paired = {}
    for r in recs:
        if r.benchmark in PAIRED_BASE and r.status == "ok":
            paired[(r.extra["q"], r.extra["trial"], r.bytes, r.benchmark)] = r.extra[key]
    return paired


def _collect(recs: list[Any], statistic: str, baseline: str) -> _Collected:
    key = f"{statistic}_us"
    fkey = "forwarding_us" if statistic == "mean" else f"forwarding_{statistic}_us"
    got = _Collected()
    combos, rounds = got.combos, got.rounds
    paired = _paired_baselines(recs, key) if baseline == "paired" else {}
    for r in recs:
        ex = r.extra
        if r.status != "ok":
            continue
        if r.benchmark in PAIRED and paired:
            # undo the calibrated subtraction, subtract the paired baseline instead
            raw = ex[key] + ex["subtracted_us"][statistic]
            combos[ex["q"]][ex["trial"]].setdefault(r.bytes, {})[r.benchmark] = (
                raw - paired[(ex["q"], ex["trial"], r.bytes, PAIRED[r.benchmark])]
            )
        elif r.benchmark in DIRECT:
            combos[ex["q"]][ex["trial"]].setdefault(r.bytes, {})[r.benchmark] = ex[key]
        elif r.benchmark in ("echo", "echo_idle"):
            chains = got.echoes if r.benchmark == "echo" else got.idle
            chains[(ex["q"], ex["trial"], r.bytes)][ex["distance"]] = ex[key] - ex[fkey]
        elif r.benchmark in PRTT:
            prtt = "min_us" if statistic == "min" else "median_us"  # Netgauge: median
            rounds[ex["trial"]].setdefault(r.bytes, {})[r.benchmark] = (
                ex[key] if r.benchmark == "o_r" else ex[prtt]
            )
            rounds[ex["trial"]][r.bytes]["d"] = ex["d_us"]
            got.loggp_n = ex["n"]
        elif r.benchmark == "interference":
            got.inter.append(ex)
        elif r.benchmark == "calibration":
            got.calib[ex["q"]] = ex["ranks"]
    return got


def _echoes(echoes: dict[tuple, dict[int, float]], combos: dict) -> dict:
    """The echo table {q: {size: [T_1..T_k per trial]}}; E into combos where a
    chain had two distances at least and that size was measured."""
    table: dict = {}
    for (q, trial, n), by_d in echoes.items():
        ts = [by_d[d] for d in sorted(by_d)]
        table.setdefault(q, {}).setdefault(n, []).append(ts)
        if len(ts) >= 2 and n in combos[q][trial]:
            combos[q][trial][n]["E"] = elapsed_from_echo(ts)
    return table


def unloaded(loaded: dict[tuple, dict[int, float]], idle: dict[tuple, dict[int, float]]) -> dict:
    """Seed §5.1 (test 7): E from the echo chains with every processor computing and
    with every one idle, per Q variant and size: {q: {n: {"E", "E_idle", "diff"}}}
    as Spreads over the trials (diff = E - E_idle per trial, its Student t interval)."""
    per: dict = {}
    for key, by_d in idle.items():
        busy = loaded.get(key, {})
        ts_idle, ts_busy = [by_d[d] for d in sorted(by_d)], [busy[d] for d in sorted(busy)]
        if len(ts_idle) < 2 or len(ts_busy) < 2:
            continue
        q, _, n = key
        e, e_idle = elapsed_from_echo(ts_busy), elapsed_from_echo(ts_idle)
        cell = per.setdefault(q, {}).setdefault(n, {"E": [], "E_idle": [], "diff": []})
        for k, v in (("E", e), ("E_idle", e_idle), ("diff", e - e_idle)):
            cell[k].append(v)
    return {
        q: {n: {k: spread(v) for k, v in cell.items()} for n, cell in sorted(by_n.items())}
        for q, by_n in per.items()
    }


def _decompositions(combos: dict) -> dict:
    """Per Q variant, the decomposition table of the sizes with all six combinations."""
    out = {}
    for q, trials in combos.items():
        complete = {
            t: {n: c for n, c in sizes.items() if len(c) == 6} for t, sizes in trials.items()
        }
        complete = {t: s for t, s in complete.items() if s}
        if complete and len({n for s in complete.values() for n in s}) >= 1:
            out[q] = decomposition_table(complete)
    return out


def _loggp_rounds(rounds: dict, loggp_n: int) -> dict:
    """LogGP from the sizes whose round has all five values."""
    full = {t: {n: v for n, v in s.items() if len(v) == 5} for t, s in rounds.items()}
    return loggp(full, loggp_n)


def _predicted(ex: dict, dq: dict) -> dict:
    """An interference record with the slowdowns the decomposition dq predicts at
    2000 bytes: the seed's load R + S, and MPI's, which also pays A, U and F."""
    at = {k: _at(dq, k, 2000) for k in SIX}
    seed_load = at["R"] + at["S"]
    mpi_load = seed_load + at["A"] + at["U"] + at["F"]
    return dict(
        ex,
        load_seed_us=seed_load,
        load_mpi_us=mpi_load,
        e_2000_us=at["E"],
        predicted_seed=predicted_slowdown(seed_load, ex["period_us"]),
        predicted_mpi=predicted_slowdown(mpi_load, ex["period_us"]),
    )


def _at(dec: dict, k: str, n: int) -> float:
    """The value of k at size n: measured if n was a size, else from the fitted line."""
    if n in dec["values"][k]:
        return dec["values"][k][n].mean
    fit = dec["fits"][k]
    return float(fit.a + fit.b * n) if fit is not None else math.nan


def to_plain(obj: Any) -> Any:
    """JSON-ready copy (Spread and LineFit as dicts, no NaN/inf)."""
    if isinstance(obj, (Spread, LineFit)):
        return to_plain(obj.to_dict())
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj
