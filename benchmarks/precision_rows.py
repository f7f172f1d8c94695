"""--precision per row: which rows reach the target, with how many samples, and why the others stop.

    python benchmarks/precision_rows.py [--precision 2%] [--np 2] [--msglog 0:20]
                                        [--budget SECS[,K]] [-- more commbench run options]

One run of `commbench run PingPong -msglog 0:20 --precision 2%` (issue 15 item 2's
done-when), and per row: the size, the median t_max over the samples, the 95% CI
of that median relative to it (achieved), the samples taken, the seconds they
took and why the row stopped (reached, time budget, sample budget). The machine's
load is printed with it: a target a quiet machine reaches may be out of reach on
a busy one.
"""

from __future__ import annotations

import argparse

from cfloor import conditions, run_commbench


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--precision", default="2%")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--msglog", default="0:20")
    ap.add_argument(
        "--budget", help="--precision-budget SECS[,SAMPLES] (default: -time, 1000 samples)"
    )
    ap.add_argument("rest", nargs="*", help="more `commbench run` options (after --)")
    a = ap.parse_args()
    args = ["PingPong", "-msglog", a.msglog, "--precision", a.precision, *a.rest]
    if a.budget:
        args += ["--precision-budget", a.budget]
    print(conditions())
    doc = run_commbench(a.np, args)
    print(f"commbench run -n {a.np} {' '.join(args)}")
    print(
        f"{'#bytes':>8} {'t_max med[usec]':>16} {'achieved':>9} {'samples':>8} {'secs':>6}  stopped"
    )
    reached = 0
    for r in doc["records"]:
        p, st = r["extra"].get("precision") or {}, r["extra"].get("samples") or {}
        got = "-" if p.get("achieved") is None else f"{100 * p['achieved']:.2f}%"
        reached += bool(p.get("reached"))
        print(
            f"{r['bytes']:>8} {st.get('t_max_median', float('nan')):>16.2f} {got:>9} "
            f"{p.get('k', 0):>8} {p.get('secs', 0):>6.2f}  {p.get('stopped', r['status'])}"
        )
    print(
        f"{reached} of {len(doc['records'])} rows reached +-{a.precision}; "
        f"elapsed {doc['summary'].get('elapsed_s', 0):.0f} s; after the run: {conditions()}"
    )


if __name__ == "__main__":
    main()
