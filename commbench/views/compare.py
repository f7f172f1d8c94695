"""Comparison of two results files: a view over their records (no MPI).

Rows are matched on (family, benchmark, NP, mode, bytes, groups, and the extras
that tell a table's rows apart). For each match: the ratio new/old of the
reported time (t_max, or t_ovrl for overlap tables) and a verdict.

Rows with --samples K in both runs are tested (commbench.models.twosample): a
one-sided test on the medians of the log-samples of "slower by more than the
threshold" (and its mirror, "faster"), with a spread between runs assumed
(run_spread) and the samples' autocorrelation counted, Benjamini-Hochberg over
the tested rows, the ratio of the medians with a bootstrap interval, and the
smallest slowdown each row's test could detect. Such a row is "slower" when its
adjusted p-value (q) is at most alpha and the ratio of medians exceeds 1 +
threshold: that is a regression, what `commbench compare` exits 1 for. Rows
without samples on both sides, or whose samples are too correlated from one to
the next (a burst or a trend over the run), are "untested": their verdict
compares the ratio with the threshold and the runs' rank-to-rank spread only,
and does not gate the exit status unless asked (--gate-unsampled).
docs/statistics.md gives the method.

What differs between the two runs beyond the rows: commbench.views.compare_runs; the
comparison as text and JSON: commbench.views.compare_text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from commbench import records
from commbench.models import limits, twosample

TIME_KEY = records.COMPARED
ROW_EXTRAS = records.ROW_EXTRAS


@dataclass
class ComparedRow:
    key: tuple  # (benchmark, np, mode, bytes, groups)
    old: float  # µs: the median of the samples for a tested row, else the reported time
    new: float
    ratio: float
    noise: float  # relative spread (t_max - t_min) / t_max, larger of the two runs
    verdict: str  # same | slower | faster
    family: str = ""
    extras: dict = field(default_factory=dict)  # of ROW_EXTRAS, those the row has
    tested: bool = False
    why_untested: str = ""
    ci: tuple[float, float] | None = None  # of the ratio
    k_old: int = 0
    k_new: int = 0
    p_slower: float | None = None
    p_faster: float | None = None
    q_slower: float | None = None  # Benjamini-Hochberg over the tested rows
    q_faster: float | None = None
    regression: bool = False  # tested, slower beyond the threshold, significant after BH
    interval: str = "95% CI"  # what ci is: the ratio's interval, or a baseline's band
    versus: str = "old"  # what new is divided by: old, or base (a store's baseline runs)
    detectable: float | None = None  # the smallest slowdown the test could call here (docs)
    # the two-file test's view of each run's samples, (old, new): robust relative spread
    # (1.4826 MAD of the log-samples), lag-1 autocorrelation, effective count, how taken
    within: tuple[float, float] | None = None
    rho: tuple[float, float] | None = None
    n_eff: tuple[float, float] | None = None
    taken: tuple[str, str] | None = None
    # each run's fraction of its bandwidth limit and multiple of its latency floor, where the
    # records hold them (commbench.models.limits): {"fraction": (old, new), "multiple": (...)}
    limits: dict = field(default_factory=dict)

    def label(self, with_engine: bool = False) -> str:
        name, np_, mode, x, groups = self.key
        parts = [name if groups <= 1 else f"Multi-{name}", f"np={np_}"]
        parts += [f"mode={mode}"] if mode else []
        parts += [] if x is None else [f"bytes={x}"]
        parts += [f"{k}={v}" for k, v in self.extras.items() if k != "engine" or with_engine]
        return " ".join(parts)


def _key(r: records.Measurement) -> tuple:
    return (r.benchmark, r.np, r.mode, r.bytes, len(r.groups))


_full_key = (
    records.identity
)  # the family too (Accumulate of IMB-EXT is not IMB-RMA's), and the extras


_time = records.compared_time


def _loose_key(r: records.Measurement) -> tuple:
    return (r.family, *_key(r), *(str(r.extra.get(k)) for k in ROW_EXTRAS if k != "engine"))


def _engineless(loose: dict, r: records.Measurement) -> records.Measurement | None:
    """A row that names no engine (an imported log's, a file from before the engines)
    matches the one row of the other file that differs from it only in the engine."""
    found = [
        o
        for o in loose.get(_loose_key(r), [])
        if "engine" not in o.extra or "engine" not in r.extra
    ]
    return found[0] if len(found) == 1 else None


def match(old: list[records.Measurement], new: list[records.Measurement]) -> list[tuple]:
    """(old row, new row) for every row of new that has a timed counterpart in old."""
    by_key = {_full_key(r): r for r in old if r.ok}
    loose: dict[tuple, list] = {}
    for r in old:
        if r.ok:
            loose.setdefault(_loose_key(r), []).append(r)
    pairs = []
    for r in new:
        o = by_key.get(_full_key(r)) or _engineless(loose, r)
        if o is not None and r.ok and _time(o) is not None and _time(r) is not None:
            pairs.append((o, r))
    return pairs


def unmatched(old: list[records.Measurement], new: list[records.Measurement]) -> tuple[int, int]:
    """Timed rows of old, and of new, that the other file has no counterpart for."""
    pairs = match(old, new)
    seen_old, seen_new = {id(o) for o, _ in pairs}, {id(n) for _, n in pairs}
    return (
        sum(1 for r in old if r.ok and _time(r) and id(r) not in seen_old),
        sum(1 for r in new if r.ok and _time(r) and id(r) not in seen_new),
    )


def _spread(r: records.Measurement) -> float:
    tmax, tmin = r.values.get("t_max"), r.values.get("t_min")
    if not tmax or tmin is None:
        return 0.0
    return (tmax - tmin) / tmax


def sample_values(r: records.Measurement) -> tuple[object, str]:
    """The per-sample times of the compared quantity, or None and why not (the results
    store's row value is their median, commbench.store.index)."""
    few = r.extra.get("few_repetitions")
    if isinstance(few, dict):
        return None, "it rests on too few valid repetitions (!few in its run)"
    st = records.samples_of(r)
    if (
        r.kind in TIME_KEY
        and (r.components or ["t"])[0] != "t_ovrl"
        and st.get("quantity") != TIME_KEY[r.kind]
    ):
        return None, "its samples time another quantity than the one compared"
    values = st.get("t_max_samples")
    if not isinstance(values, list) or not values:
        return None, "no --samples"
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return None, "its samples are not numbers"
    a = twosample.usable(values)
    return a, "" if a is not None else f"fewer than {twosample.MIN_SAMPLES} usable samples"


CONSECUTIVE, ROUNDS = "consecutive", "rounds"


def taken(r: records.Measurement) -> str:
    """How a row's samples were taken: in rounds spread over the run, or one after another
    (files from before the rounds say nothing: consecutive)."""
    how = records.samples_of(r).get("taken")
    return how if isinstance(how, str) and how else CONSECUTIVE


def correlated_why(s: twosample.RunSamples, how: str) -> str:
    """Why a row whose samples are too correlated is not tested."""
    fix = (
        "rerun with --samples taken in rounds, which spread a row's samples over the run"
        if how == CONSECUTIVE
        else "the machine changed while the run went on: run again on a quieter machine"
    )
    return (
        f"its samples are correlated from one to the next (lag-1 rho {s.rho:.2f}): a burst or "
        f"a trend over the run moved them together, so they are not {s.n} repeats; {fix}"
    )


def _plain(o, r, why: str, threshold: float) -> ComparedRow:
    """An untested row: its ratio against the threshold and the rank spread."""
    to, tn = _time(o), _time(r)
    noise = max(_spread(o), _spread(r))
    log_ratio = math.log(tn) - math.log(to)  # 1e-300 / 1e300 does not underflow to 0 here
    ratio = tn / to  # 0 or inf beyond a float's range: the JSON says null, the verdict stands
    if abs(log_ratio) <= math.log1p(max(threshold, noise)):
        verdict = "same"
    else:
        verdict = "slower" if ratio > 1 else "faster"
    extras = {k: r.extra[k] for k in ROW_EXTRAS if k in r.extra}
    return ComparedRow(_key(r), to, tn, ratio, noise, verdict, r.family, extras, why_untested=why)


def _row(o: records.Measurement, r: records.Measurement, how: dict) -> ComparedRow:
    """One matched row; how: threshold, confidence, alpha, run_spread (twosample.compare)."""
    (so, why_o), (sn, why_n) = sample_values(o), sample_values(r)
    if so is None or sn is None:
        why = f"old row: {why_o}" if so is None else f"new row: {why_n}"
        return _plain(o, r, why, how["threshold"])
    sides = (twosample.series(so), twosample.series(sn))
    ways = (taken(o), taken(r))
    bad = [(side, s, w) for side, s, w in zip(("old", "new"), sides, ways) if s.correlated]
    if bad:
        side, s, w = bad[0]
        row = _plain(o, r, f"{side} row: {correlated_why(s, w)}", how["threshold"])
    else:
        t = twosample.compare(so, sn, **how, sides=sides)
        row = ComparedRow(
            _key(r), t.old_median, t.new_median, t.ratio, max(_spread(o), _spread(r)), "same",
            r.family, {k: r.extra[k] for k in ROW_EXTRAS if k in r.extra}, tested=True, ci=t.ci,
            k_old=t.k_old, k_new=t.k_new, p_slower=t.p_slower, p_faster=t.p_faster,
            detectable=t.detectable,
        )  # fmt: skip
    row.within = (sides[0].scale, sides[1].scale)
    row.rho = (sides[0].rho, sides[1].rho)
    row.n_eff = (sides[0].n_eff, sides[1].n_eff)
    row.taken = ways
    return row


def compare(
    old: list[records.Measurement],
    new: list[records.Measurement],
    threshold: float = 0.05,
    alpha: float = 0.05,
    confidence: float = 0.95,
    run_spread: float = twosample.DEFAULT_RUN_SPREAD,
) -> list[ComparedRow]:
    """Matched rows with verdicts (module docstring): tested rows by the two-file test
    (twosample.compare) and Benjamini-Hochberg at alpha, untested ones by threshold and rank
    spread."""
    how = {"threshold": threshold, "confidence": confidence, "alpha": alpha}
    rows = []
    for o, r in match(old, new):
        row = _row(o, r, {**how, "run_spread": run_spread})
        row.limits = held(o, r)
        rows.append(row)
    judge(rows, threshold, alpha)
    return rows


def held(o: records.Measurement, r: records.Measurement) -> dict:
    """The two rows' fractions of their limits, where either run recorded one."""
    lims = [limits.recorded(x.extra) for x in (o, r)]
    return {
        k: tuple(lim.get(k) for lim in lims)
        for k in ("fraction", "multiple")
        if any(k in lim for lim in lims)
    }


def judge(rows: list[ComparedRow], threshold: float, alpha: float) -> None:
    """The tested rows' q-values and verdicts (commbench.models.twosample.verdicts); the
    two-file gate's rows and the store's between-run rows alike."""
    tested = [r for r in rows if r.tested]
    for r, (verdict, qs, qf) in zip(tested, twosample.verdicts(tested, threshold, alpha)):
        r.q_slower, r.q_faster, r.verdict = qs, qf, verdict
        r.regression = verdict == "slower"


def regressions(rows: list[ComparedRow], gate_unsampled: bool = False) -> list[ComparedRow]:
    """The rows that make the exit status 1."""
    return [
        r
        for r in rows
        if r.regression or (gate_unsampled and not r.tested and r.verdict == "slower")
    ]


def geometric_mean(values: list[float]) -> float:
    """Of positive ratios; 0 and inf (ratios beyond a float's range) count as such, both: NaN."""
    if not values:
        return float("nan")
    logs = [
        math.log(v) if 0 < v < math.inf else (-math.inf if v <= 0 else math.inf) for v in values
    ]
    total = sum(logs)
    return (
        float("nan")
        if math.isnan(total)
        else math.exp(total / len(logs))
        if math.isfinite(total)
        else (0.0 if total < 0 else math.inf)
    )


def summary(rows: list[ComparedRow]) -> str:
    """The comparison in one sentence (the text's last line, the HTML report's verdict)."""
    if not rows:
        return "no matching rows (different families, benchmarks, sizes, process counts or engines)"
    gm = geometric_mean([r.ratio for r in rows])
    counts = {v: sum(1 for r in rows if r.verdict == v) for v in ("faster", "slower", "same")}
    tested = sum(1 for r in rows if r.tested)
    return (
        f"{len(rows)} matched rows ({tested} tested); geometric mean new/old = {gm:.3f}; "
        f"{counts['faster']} faster, {counts['slower']} slower, {counts['same']} within noise"
    )
