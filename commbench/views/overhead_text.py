"""Text view of the overhead family: the seed's Tables 1-3, interference, LogGP.

Like every view it only reads records: `analyse` rebuilds the measured
combinations from the raw experiment records and hands them to the pure
models (commbench.models.overhead), so `commbench report FILE` prints the
same tables from a results file.
"""

from __future__ import annotations

import math
import sys
from typing import TextIO

from commbench import records
from commbench.models.overhead import COMBOS, SIX, analyse
from commbench.suites.overhead import OverheadSettings
from commbench.views import TextView

# An interval that cannot be computed (as many points as parameters: one trial,
# two sizes) has infinite bounds: printed as n/a, with a note saying why.
NO_CI_NOTE = (
    "# n/a: no interval (as many points as fitted parameters; more --trials or --sizes give one)"
)


def _f(v: float, w: int = 8, p: int = 1) -> str:
    return f"{v:{w}.{p}f}" if math.isfinite(v) else f"{'n/a':>{w}}"


def _sig(v: float, digits: int = 4) -> str:
    """v with `digits` significant digits, no exponent for the magnitudes of Table 3."""
    if v == 0 or not math.isfinite(v):
        return f"{v:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(v))))
    return f"{v:.{decimals}f}"


def table3(a: float, b: float) -> str:
    """Seed 002's form of a line, 'E 220 + 1.285n': a to whole µs where it is that large."""
    sign = "-" if b < 0 else "+"
    return f"{_sig(a, 3)} {sign} {_sig(abs(b))}n"


def _open(*bounds: float) -> bool:
    return any(not math.isfinite(b) for b in bounds)


class OverheadText(TextView):
    def __init__(self, out: TextIO = sys.stdout):
        super().__init__(out)
        self.recs: list[records.Measurement] = []
        self.cfg: dict = {}

    def start(self, header: dict) -> None:
        meta, self.cfg = header["metadata"], header["config"]
        line = "#" + "-" * 72
        self.p(
            line,
            f"#    commbench {meta['commbench_version']}, {header['family']['part']}",
            line,
            f"# Date                  : {meta['date_asctime']}",
            f"# MPI Version           : {meta['mpi_version']}",
            f"# Processes             : {sum(meta['ranks_per_host'].values())} on "
            f"{len(meta['ranks_per_host'])} host(s), {meta.get('cpu_count', '?')} CPUs; parts: "
            f"{', '.join(self.cfg['benchmarks'])}",
            "# Times in microseconds. Seed 002 (Krumme & Greenfield) experiments over "
            "MPI_Send/MPI_Recv;",
            "# see docs/overhead.md for what each quantity means in MPI.",
        )
        self.out.flush()

    def record(self, rec: records.Measurement) -> None:
        if rec.benchmark == "analysis":
            return
        self.recs.append(rec)
        if rec.benchmark == "calibration":
            r0 = rec.extra["ranks"][0]
            self.p(
                "",
                f"# Q ({rec.extra['q']}): unit {r0['unit_s'] * 1e6:.2f} us; Q(COMPTIME) = "
                f"{r0['comp_units']} units = {r0['comptime'] * 1e6:.1f} us (std "
                f"{r0['comptime_std'] * 1e6:.1f}); Q(SENDTIME) = {r0['send_units']} units = "
                f"{r0['sendtime'] * 1e6:.1f} us; timer {r0['timer'] * 1e9:.0f} ns  [rank 0]",
            )
            load, cpus = rec.extra.get("loadavg"), rec.extra.get("cpus")
            if load and cpus and load[0] > cpus:
                self.p(
                    f"# !! load average {load[0]:.1f} on {cpus} CPUs: other work shares the cores, "
                    "the times below include it (try --statistic min --baseline paired)"
                )
            self.out.flush()

    def finish(self, summary: dict) -> None:
        st = OverheadSettings.of(self.cfg.get("params", {}))
        res = analyse(self.recs, st.statistic, st.baseline)
        for q, dec in res["decomposition"].items():
            self.table1(q, dec)
            self.table3(q, dec)
            self.echo(q, res["echo"].get(q, {}), dec)
            self.unloaded(q, res["unloaded"].get(q, {}))
        if res["interference"]:
            self.interference(res["interference"])
        if res["loggp"]:
            self.loggp(res["loggp"])
        if res["relation"]:
            self.relation(res["relation"])
        if summary.get("interrupted"):
            self.p(f"# !! run ended early: {summary['interrupted']}")
        self.p("")
        self.out.flush()

    def table1(self, q: str, dec: dict) -> None:
        sizes = dec["sizes"]
        ntr = max(len(v) for v in dec["per_trial"]["E"].values())
        self.p("")
        params = self.cfg.get("params", {})
        st = OverheadSettings.of(params)
        stat, base = st.statistic, st.baseline
        self.p(
            f"# Table 1 (Q = {q}): mean ± standard deviation over {ntr} trial(s) of the per-trial "
            f"{stat}s; {base} Q baseline",
            f"{'Size':<6}" + "".join(f"{n:>18d}" for n in sizes),
        )
        for k in SIX:
            cells = []
            for n in sizes:
                s = dec["values"][k].get(n)
                cells.append(f"{s.mean:11.2f} ± {s.std:<5.2f}" if s else f"{'-':>18}")
            self.p(f"{k:<6}" + "".join(f"{c:>18}" for c in cells))

    def table3(self, q: str, dec: dict) -> None:
        self.p(
            "",
            f"# Table 3 (Q = {q}): lines a + b*n (us, n in "
            "bytes) with 95% confidence intervals; max err:",
            "# the largest distance of a size's mean from the line (the seed's \"max. error\")",
        )
        self.lines(dec["fits"], dec["max_error"], SIX, "as seed 002 Table 3")
        self.p("")
        self.p(
            f"# The measured combinations (Q = {q}), fitted alike (the seed's analysis program, -s)"
        )
        self.lines(dec["composite_fits"], dec["composite_max_error"], COMBOS, "")

    def lines(self, fits: dict, worst: dict, names: tuple[str, ...], tail: str) -> None:
        w = max(len(k) for k in names) + 1
        self.p(
            (
                f"{'':<{w}}{'a':>10} {'[95% CI]':>21} {'b':>10} {'[95% CI]':>21} {'r2':>7} "
                f"{'max err':>8}   {tail}"
            ).rstrip()
        )
        for k in names:
            fit = fits[k]
            if fit is None:
                self.p(f"{k:<{w}} (one size only)")
                continue
            self.p(
                f"{k:<{w}}{fit.a:10.3f} [{_f(fit.ci_a[0], 9, 3)},{_f(fit.ci_a[1], 9, 3)}] "
                f"{fit.b:10.5f} [{_f(fit.ci_b[0], 9, 5)},{_f(fit.ci_b[1], 9, 5)}] {fit.r2:7.3f} "
                f"{worst[k]:8.2f}   {k}  {table3(fit.a, fit.b)}"
            )
        if _open(*(b for f in fits.values() if f is not None for b in (*f.ci_a, *f.ci_b))):
            self.p(NO_CI_NOTE)

    def echo(self, q: str, by_size: dict, dec: dict) -> None:
        if not by_size:
            return
        k = max(len(t) for ts in by_size.values() for t in ts)
        self.p(
            "",
            f"# Echo (Q = {q}): T_d - X - forwarding, mean over trials, d = 1..{k}; "
            "E = mean (T_(d+1) - T_d)/2; compare T_1 with 2(F+E+U)",
            f"{'Size':<6}"
            + "".join(f"{'T_' + str(d):>10}" for d in range(1, k + 1))
            + f"{'2(F+E+U)':>10}",
        )
        for n in sorted(by_size):
            ts = by_size[n]
            means = [
                sum(t[d] for t in ts if len(t) > d) / max(1, sum(1 for t in ts if len(t) > d))
                for d in range(k)
            ]
            v = dec["values"]
            feu = (
                2 * (v["F"][n].mean + v["E"][n].mean + v["U"][n].mean) if n in v["F"] else math.nan
            )
            self.p(f"{n:<6d}" + "".join(_f(m, 10, 2) for m in means) + _f(feu, 10, 2))

    def unloaded(self, q: str, by_size: dict) -> None:
        """Seed §5.1: E with every processor computing against every one idle."""
        if not by_size:
            return
        self.p(
            "",
            "# Unloaded latency (seed 002 section 5.1, test "
            f"7; Q = {q}): E from the same echo chains with",
            "# every rank idle (waiting in MPI) instead of computing Q; mean over trials, us, "
            "95% CI of the difference",
            f"{'Size':<6}{'E computing':>13}{'E idle':>10}{'difference':>12}{'[95% CI]':>22}",
        )
        for n, c in by_size.items():
            d = c["diff"]
            self.p(
                f"{n:<6d}{c['E'].mean:13.2f}{c['E_idle'].mean:10.2f}{d.mean:12.2f}"
                f" [{_f(d.ci[0], 9, 2)},{_f(d.ci[1], 9, 2)}]"
            )
        if any(not math.isfinite(c["diff"].ci[0]) for c in by_size.values()):
            self.p(NO_CI_NOTE)

    def interference(self, rows: list[dict]) -> None:
        self.p(
            "",
            "# Interference (seed 002 section 5.2): rank 0 computes a fixed Q while k sources "
            "stream 2000-byte",
            "# messages through it to k sinks (it forwards them between compute units, polling "
            "with MPI_Testsome);",
            "# each stream keeps 2 of its channels active. Per message: each stream's period "
            "against E(2000), the",
            "# one-channel transfer time. Slowdown predicted "
            "= 1/(1 - sum load/period); load R+S as the seed",
            "# (system forwarding) and R+S+A+U+F (MPI: the application receives and re-sends "
            "each message).",
            f"{'Q':>5} {'channels':>8} {'us/msg per stream':>24} {'E(2000)':>8} {'forwarded':>9} "
            f"{'measured':>9} {'pred R+S':>9} {'pred +AUF':>9}",
        )
        for r in rows:
            per = ",".join(f"{p:.1f}" for p in r["period_us"])
            chans = r.get(
                "channels", r["streams"]
            )  # files before the sinks: streams came back to their source
            self.p(
                f"{r['q']:>5} {chans:8d} {per:>24} {_f(r.get('e_2000_us', math.nan), 8, 1)} "
                f"{r['forwarded']:9d} {r['slowdown']:9.3f} {_f(r['predicted_seed'], 9, 3)} "
                f"{_f(r['predicted_mpi'], 9, 3)}"
            )

    def loggp(self, lg: dict) -> None:
        fit = lg["fit"]
        self.p(
            "",
            f"# LogGP (Netgauge PRTT(n,d,s), n = {lg['n']}, "
            "d = PRTT(1,0,s)); 95% confidence intervals",
        )
        L, Ln = lg["L"], lg["L_netgauge"]
        self.p(
            f"L   = {L.mean:10.3f} us [{_f(L.ci[0], 8, 3)},{_f(L.ci[1], 8, 3)}]   (PRTT(1,0,s)/2 "
            f"- o_s - o_r - (s-1)G at s = {lg['sizes'][0]}; Netgauge prints PRTT/2 = "
            f"{Ln.mean:.3f})"
        )
        if fit is not None:
            self.p(f"g   = {fit.a:10.3f} us [{_f(fit.ci_a[0], 8, 3)},{_f(fit.ci_a[1], 8, 3)}]")
            rate = (
                f"{1 / fit.b / 1e3:.2f} GB/s"
                if fit.b > 0
                else "G <= 0: no bandwidth; noise exceeds the per-byte cost"
            )
            self.p(
                f"G   = {fit.b * 1e3:10.4f} ns/byte "
                f"[{_f(fit.ci_b[0] * 1e3, 8, 4)},{_f(fit.ci_b[1] * 1e3, 8, 4)}]  ({rate})"
            )
        ps = lg["per_size"]
        self.p(
            f"{'Size':<6}{'o_s':>10}{'[95% CI]':>20}{'o_r':>10}{'[95% CI]':>20}"
            f"{'g+(s-1)G':>10}{'PRTT/2':>10}"
        )
        for s in lg["sizes"]:
            os_, or_ = ps["o_s"][s], ps["o_r"][s]
            self.p(
                f"{s:<6d}{os_.mean:10.3f} [{_f(os_.ci[0], 8, 3)},{_f(os_.ci[1], 8, 3)}]"
                f"{or_.mean:10.3f} [{_f(or_.ci[0], 8, 3)},{_f(or_.ci[1], 8, 3)}]"
                f"{ps['gap'][s].mean:10.3f}{ps['half_rtt'][s].mean:10.3f}"
            )
        bounds = [*L.ci, *(fit.ci_a + fit.ci_b if fit is not None else ())]
        bounds += [b for s in lg["sizes"] for k in ("o_s", "o_r") for b in ps[k][s].ci]
        if _open(*bounds):
            self.p(NO_CI_NOTE)

    def relation(self, rows: list[dict]) -> None:
        self.p(
            "",
            "# LogGP against the decomposition on the same run (us): o_s ~ F+S, o_r ~ A+U+R, "
            "L+(s-1)G ~ E,",
            "# gap >= max(F+S, A+U+R), PRTT(1,0,s)/2 ~ F+E+U",
        )
        cols = (
            "o_s",
            "F+S",
            "o_r",
            "A+U+R",
            "L+(s-1)G",
            "E",
            "gap",
            "max(F+S,A+U+R)",
            "PRTT/2",
            "F+E+U",
        )
        self.p(
            f"{'Size':<6}" + "".join(f"{c:>10}" if len(c) < 10 else f" {c[:9]:>9}" for c in cols)
        )
        for r in rows:
            self.p(f"{r['size']:<6d}" + "".join(_f(r[c], 10, 2) for c in cols))
