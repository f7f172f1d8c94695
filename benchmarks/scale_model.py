"""Rank 0's costs of a run at P ranks beyond this machine: the IMB-MPI1 default list modelled.

    python benchmarks/scale_model.py [--procs 256,1024,4096,16384] [--detail 256,all]
                                     [-msglog 0:22] [--per-host 64] [--suite mpi1]

--suite: another kernel family's default list (ext, rma, nbc, mpi4, comms; not io, which
needs a directory). No mpiexec: each (P, --rank-detail) case runs in a child Python
process (its peak RSS is its own) that drives rank 0's real code path for a P-rank run of
the family's default list: the plan of rows (commbench.harness.plan.Plan: benchmarks, the NP
sequence 2, 4, ... P, sizes, modes), every row's record built by records.build from
synthetic per-rank times (one entry per world rank, None for the ranks outside the row's
group, as the harness gathers them), handed to Session.emit (which keeps a summary beyond
--rank-detail ranks) and so to the run's views (the IMB text to /dev/null, the results
file), and the Finisher that rewrites the file whole at the end. The per-rank times are
drawn (lognormal around a size-dependent time); MPI itself is initialised as a singleton
(MPI.COMM_SELF) only for the metadata the header records. Hosts are named node00000 ...
with --per-host ranks each.

Reported per case: rows, the wall time of building, reducing, summarising and writing
the records (all rows together, and per row), rank 0's peak RSS (the child's
ru_maxrss, which includes Python, numpy and mpi4py: about 60 MiB at P = 2) and the
results file's bytes (and per row). What is not modelled: the MPI gathers of every
rank's times (the harness's one O(P) message to rank 0 per row) and the kernels.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def _rows(plan, cfg):
    """(benchmark, NP, mode, size) of every row of the plan, in the harness's order."""
    from commbench import imb_methodology

    for b in plan.benchmarks():
        for np_ in plan.np_sequence(b):
            if not b.procs.allows(np_):
                continue
            for mode in imb_methodology.modes(cfg.method, b.modes):
                for x in plan.order(b, np_, mode):
                    yield b, np_, mode, x


def _record(b, np_, mode, x, p, plan, family, rng):
    import numpy as np

    from commbench import records

    base = 2e-6 * (1 + np.log2(np_)) + x / 5e9
    times = rng.lognormal(np.log(base), 0.1, size=(len(b.components), np_))
    rank_times = {c: times[i].tolist() + [None] * (p - np_) for i, c in enumerate(b.components)}
    return records.build(
        benchmark=b.name,
        family=family,
        kind=b.kind,
        np_=np_,
        mode=mode,
        x=x,
        repetitions=plan.base_repetitions(b, mode, x),
        groups=[list(range(np_))],
        world_size=p,
        components=list(b.components),
        rank_times=rank_times,
        turnover=plan.turnover(b, np_),
    )


def one(p: int, detail: str, msglog: str, per_host: int, out: str, suite: str) -> dict:
    """One case, in this process: rank 0's path for a P-rank run; its numbers."""
    import numpy as np
    from mpi4py import MPI

    from commbench import mpi_job, run_config, run_metadata
    from commbench.harness.plan import Plan
    from commbench.session import Session

    argv = ["--suite", suite, "-msglog", msglog, "--rank-detail", detail, "-o", out]
    cfg = run_config.parse_run_args(argv, world_size=p)
    hosts = [f"node{r // per_host:05d}" for r in range(p)]
    meta = run_metadata.collect(MPI.COMM_SELF, cfg)
    per = {h: per_host for h in dict.fromkeys(hosts)}
    meta.update(world_size=p, rank_hosts=hosts, hosts=sorted(per), ranks_per_host=per)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        session = Session(cfg, MPI.COMM_SELF, mpi_job.build_sinks(cfg))
        session.rank_hosts = hosts
        for s in session.sinks:
            s.start(mpi_job.run_header(cfg, meta))
        plan, rng, rows = Plan(cfg, p), np.random.default_rng(1), 0
        for b, np_, mode, x in _rows(plan, cfg):
            session.emit(_record(b, np_, mode, x, p, plan, cfg.family, rng))
            rows += 1
        mpi_job.Finisher(session, time.time(), cfg.output).completed(0)
    secs = time.perf_counter() - t0
    return {
        "P": p,
        "detail": detail,
        "rows": rows,
        "secs": secs,
        "rss_start_mib": rss0 / 1024,
        "rss_peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "file_bytes": os.path.getsize(out),
    }


def case(p: int, detail: str, msglog: str, per_host: int, timeout: float, suite: str) -> dict:
    """One case in a child process (its own peak RSS)."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "model.json")
        cmd = [sys.executable, __file__, "--one", str(p), "--detail", detail]
        cmd += ["-msglog", msglog, "--per-host", str(per_host), "--out", out, "--suite", suite]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"P": p, "detail": detail, "error": f"over {timeout:g} s"}
        if r.returncode != 0:
            return {"P": p, "detail": detail, "error": r.stderr.strip().splitlines()[-1:]}
        return json.loads(r.stdout.strip().splitlines()[-1])


def table(results: list[dict]) -> str:
    head = (
        f"{'P':>6} {'detail':>6} {'rows':>6} {'secs':>8} {'ms/row':>7} {'RSS MiB':>8} "
        f"{'file MiB':>9} {'B/row':>8}"
    )
    lines = [head]
    for r in results:
        if "error" in r:
            lines.append(f"{r['P']:>6} {r['detail']:>6}  failed: {r['error']}")
            continue
        lines.append(
            f"{r['P']:>6} {r['detail']:>6} {r['rows']:>6} {r['secs']:>8.1f} "
            f"{1e3 * r['secs'] / r['rows']:>7.2f} {r['rss_peak_mib']:>8.0f} "
            f"{r['file_bytes'] / 2**20:>9.1f} {r['file_bytes'] / r['rows']:>8.0f}"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", default="256,1024,4096,16384")
    ap.add_argument("--detail", default="256,all", help="--rank-detail values to compare")
    ap.add_argument("-msglog", default="0:22")
    ap.add_argument("--per-host", type=int, default=64)
    ap.add_argument("--suite", default="mpi1", help="a kernel family (its default list)")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--json", help="write the numbers here")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.one, a.detail, a.msglog, a.per_host, a.out, a.suite)))
        return
    print(
        f"# --suite {a.suite} default list, -msglog {a.msglog}, {a.per_host} ranks per host; "
        "rank 0's"
    )
    print("# record building, summaries, text and results file, in-process (no mpiexec)")
    results = []
    for p in [int(x) for x in a.procs.split(",")]:
        for detail in a.detail.split(","):
            results.append(case(p, detail, a.msglog, a.per_host, a.timeout, a.suite))
            print(table(results[-1:]).splitlines()[-1] if results[1:] else table(results))
            sys.stdout.flush()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
