"""Scale: how commbench's own costs grow with the number of ranks P on one machine.

    python benchmarks/scale.py [--procs 2,4,8,16,32,64] [--strace-procs 2,8]
                               [--families imb,osu,p2p,net] [--timeout 600] [--json PATH]
                               [--checkout DIR]

--checkout DIR runs the commbench in DIR (put first on every rank's PYTHONPATH, ahead of an
editable install), e.g. a snapshot of a commit: `git archive HEAD commbench | tar -x -C DIR`;
without it, the commbench this Python imports. The output names the package it ran.

On a machine with few cores P ranks are oversubscribed, so this measures correctness and
commbench's costs, not the MPI's speed. For each P, four short real runs, each
`mpiexec -n P` of this Python's MPI (sys.prefix/bin/mpiexec) with MPICH's throttled polling
(MPIR_CVAR_CH4_PROGRESS_THROTTLE=1, ..._NO_PROGRESS_COUNT=64; without it 64 oversubscribed
ranks take ten times longer):

  imb   the default IMB-MPI1 list, -msglog 0:2 -time 0.01
  osu   --suite osu allreduce -m 1:64 -i 100 -x 10
  p2p   --suite p2p (all eight), -msglog 0:2 -iter 100 -pause 0
  net   --suite net -time 0.05 --net-samples 3

Per (family, P):

  wall       seconds from Popen to exit of the whole run
  start      seconds until the results file holds its first record (polled every 20 ms;
             the file is valid JSON after every record), i.e. start-up plus the first row
  timed      sum over records of the timed time, approximated as repetitions x t_max
             (the compared time where a record has no t_max; the net family's samples where
             it records them), microseconds per repetition in the file; records without a
             "t" (invalid rows, net's matrices, distributions and verdicts) count 0
  out/row    (wall - start - timed) / rows: what commbench spends outside the timed regions
             per row (warm-up, barriers, gathering, formatting, writing the file); it
             includes the MPI's untimed work, and the first row sits in `start`
  rows       records in the results file; bytes and bytes per row of that file
  RSS        peak RSS (ru_maxrss) of rank 0 and the largest of the other ranks, with the
             number of modules in sys.modules and which of scipy, matplotlib, rich,
             jsonschema, sqlalchemy were imported: every rank runs a small wrapper (written
             to a temporary directory) that registers an atexit handler and runs the CLI
             with runpy.run_module('commbench', run_name='__main__')

At each P of --strace-procs, the imb case once more under `strace -f -ff` (openat, open,
stat, newfstatat, execve): per rank process (a pid that execs python, not mpiexec or
hydra) the openat/open calls after that exec, their median and max over ranks, how many
failed, how many were under site-packages and under the stdlib (what a shared file system
serves at start-up), and path stat calls (fstat-like calls on a descriptor excluded).

Last, per family and metric, the exponent k of metric ~ P^k (least squares of log metric on
log P over P >= 4) and, for memory and bytes per row, the line a + b P over the same P.
--json PATH writes every number. A run that times out (its process group is killed) or
fails is marked in its table and kept in the JSON with its output's tail.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import numpy as np

PY = sys.executable
MPIEXEC = str(Path(sys.prefix) / "bin" / "mpiexec")
THROTTLE = {
    "MPIR_CVAR_CH4_PROGRESS_THROTTLE": "1",
    "MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT": "64",
}
FAMILIES = {
    "imb": ["-msglog", "0:2", "-time", "0.01"],
    "osu": ["--suite", "osu", "allreduce", "-m", "1:64", "-i", "100", "-x", "10"],
    "p2p": ["--suite", "p2p", "-msglog", "0:2", "-iter", "100", "-pause", "0"],
    "net": ["--suite", "net", "-time", "0.05", "--net-samples", "3"],
}
HEAVY = ("scipy", "matplotlib", "rich", "jsonschema", "sqlalchemy")
FIRST_RECORD = re.compile(rb'"records":\s*\[\s*\{\s*"benchmark"')
WRAPPER = """\
import atexit, json, os, resource, runpy, sys


def _dump():
    try:
        from mpi4py import MPI

        rank = MPI.COMM_WORLD.Get_rank()
    except Exception:
        rank = int(os.environ.get("PMI_RANK", "-1"))
    top = {m.split(".")[0] for m in list(sys.modules)}
    info = {
        "rank": rank,
        "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "modules": len(sys.modules),
        "heavy": sorted(top & set(HEAVY)),
    }
    name = f"rank.{rank}.{os.getpid()}.json"
    with open(os.path.join(os.environ["SCALE_RANKS"], name), "w") as f:
        json.dump(info, f)


atexit.register(_dump)
sys.argv = ["commbench", *sys.argv[1:]]
runpy.run_module("commbench", run_name="__main__", alter_sys=True)
"""
# metric key, column title, width, format
COLUMNS = [
    ("wall_s", "wall s", 7, ".2f"),
    ("start_s", "start s", 7, ".2f"),
    ("timed_s", "timed s", 7, ".3f"),
    ("out_ms_row", "out ms/row", 10, ".1f"),
    ("rows", "rows", 5, "d"),
    ("bytes", "bytes", 9, "d"),
    ("bytes_row", "B/row", 7, ".0f"),
    ("rss0_mib", "RSS0 MiB", 8, ".1f"),
    ("rss_other_mib", "RSSmax MiB", 10, ".1f"),
    ("mods0", "mods0", 5, "d"),
    ("mods_other", "modsN", 5, "d"),
]
LINEAR = ("rss0_mib", "rss_other_mib", "bytes_row")


def env_for(extra: dict | None = None) -> dict:
    return dict(os.environ, **THROTTLE, **(extra or {}))


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def has_record(path: Path) -> bool:
    try:
        return FIRST_RECORD.search(path.read_bytes()) is not None
    except OSError:
        return False


def tail(path: Path, n: int = 2000) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return ""


def launch(cmd: list[str], env: dict, out: Path, log: Path, timeout: float) -> dict:
    """Run cmd in its own process group; the wall time, the time of the first record in out
    (None when never seen), the exit status ('timeout' when killed)."""
    t0 = time.perf_counter()
    with open(log, "wb") as lf:
        proc = subprocess.Popen(
            cmd,
            stdout=lf,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=out.parent,
            start_new_session=True,
        )
        start, status = None, None
        while proc.poll() is None:
            now = time.perf_counter() - t0
            if now > timeout:
                kill_group(proc)
                status = "timeout"
                break
            if has_record(out):
                start = now
                try:
                    proc.wait(timeout=max(timeout - now, 0.0))
                except subprocess.TimeoutExpired:
                    kill_group(proc)
                    status = "timeout"
                break
            time.sleep(0.02)
    wall = time.perf_counter() - t0
    if start is None and has_record(out):
        start = wall  # the whole run fell between two polls: an upper bound
    if status is None:
        status = "ok" if proc.returncode == 0 else f"rc={proc.returncode}"
    return {"wall_s": wall, "start_s": start, "status": status}


def timed_seconds(rec: dict) -> float:
    """repetitions x the compared time of one record, in seconds (0 without a 't')."""
    v = rec.get("values") or {}
    if rec.get("status") != "ok" or v.get("t") is None:
        return 0.0
    t = v.get("t_max", v["t"])
    n = rec.get("repetitions") or 0
    samples = (rec.get("extra") or {}).get("samples")
    if isinstance(samples, int) or (isinstance(samples, str) and samples.isdigit()):
        n = int(samples)
    return n * t * 1e-6


def results(out: Path) -> dict:
    """Rows, bytes and timed seconds of a results file (what is there after a failure)."""
    try:
        raw = out.read_bytes()
        doc = json.loads(raw)
    except (OSError, ValueError):
        return {"rows": None, "bytes": out.stat().st_size if out.exists() else None}
    recs = doc.get("records") or []
    lib = (doc.get("metadata") or {}).get("mpi_library_version") or ""
    return {
        "rows": len(recs),
        "bytes": len(raw),
        "bytes_row": len(raw) / len(recs) if recs else None,
        "timed_s": sum(timed_seconds(r) for r in recs),
        "mpi": lib.splitlines()[0].strip() if lib else "",
    }


def ranks_info(d: Path, np_: int) -> dict:
    """Rank 0's and the other ranks' peak RSS and modules from the wrapper's files."""
    infos = [json.loads(p.read_text()) for p in sorted(d.glob("rank.*.json"))]
    zero = [i for i in infos if i["rank"] == 0]
    other = [i for i in infos if i["rank"] != 0]
    out = {"ranks_reported": len(infos), "ranks": infos}
    if zero:
        out.update(
            rss0_mib=zero[0]["maxrss_kib"] / 1024, mods0=zero[0]["modules"], heavy0=zero[0]["heavy"]
        )
    if other:
        out.update(
            rss_other_mib=max(i["maxrss_kib"] for i in other) / 1024,
            mods_other=max(i["modules"] for i in other),
            heavy_other=sorted({h for i in other for h in i["heavy"]}),
        )
    if len(infos) != np_:
        out["note"] = f"{len(infos)} of {np_} ranks reported"
    return out


def run_family(np_: int, fam: str, root: Path, timeout: float) -> dict:
    """One run of a family at np_ ranks through the wrapper: every metric of its row."""
    d = root / f"{fam}-{np_}"
    d.mkdir()
    out = d / "r.json"
    cmd = [MPIEXEC, "-n", str(np_), PY, str(root / "wrapper.py"), "run", *FAMILIES[fam]]
    row = launch([*cmd, "-o", str(out)], env_for({"SCALE_RANKS": str(d)}), out, d / "log", timeout)
    row.update(results(out))
    row.update(ranks_info(d, np_))
    if row["status"] != "ok":
        row["log_tail"] = tail(d / "log")
    if row.get("rows") and row.get("timed_s") is not None and row.get("start_s") is not None:
        rest = row["wall_s"] - row["start_s"] - row["timed_s"]
        row["out_ms_row"] = 1e3 * rest / row["rows"]
    row["cmd"] = " ".join([*cmd, "-o", "FILE"])
    return row


def under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def trace_counts(path: Path, roots: dict[str, tuple[str, ...]]) -> dict | None:
    """Calls of one strace -ff file after its python exec; None when it never execs python."""
    lines = path.read_text(errors="replace").splitlines()
    start = None
    for i, line in enumerate(lines):
        m = re.match(r'execve\("([^"]*)".*= 0$', line)
        if m:
            start = i if os.path.basename(m.group(1)).startswith("python") else None
    if start is None:
        return None
    c = dict.fromkeys(("opens", "failed", "stats", *roots), 0)
    for line in lines[start + 1 :]:
        m = re.match(r'(open|openat)\((?:[^,"]+, )?"([^"]*)"', line)
        if m:
            c["opens"] += 1
            c["failed"] += " = -1 " in line
            for k, r in roots.items():  # first match wins: site-packages lies in the stdlib
                if under(m.group(2), r):
                    c[k] += 1
                    break
        elif re.match(r"(stat|newfstatat)\(", line) and ', "", ' not in line:
            c["stats"] += 1
    return c


def strace_run(np_: int, root: Path, timeout: float) -> dict:
    """The imb case under strace -f -ff: per-rank counts of opens and stats."""
    d = root / f"strace-{np_}"
    d.mkdir()
    out = d / "r.json"
    cmd = ["strace", "-f", "-ff", "-qq", "-e", "trace=execve,openat,open,stat,newfstatat"]
    cmd += ["-o", str(d / "trace"), MPIEXEC, "-n", str(np_), PY, "-m", "commbench", "run"]
    row = launch([*cmd, *FAMILIES["imb"], "-o", str(out)], env_for(), out, d / "log", timeout)
    paths = sysconfig.get_paths()
    roots = {
        "site": (paths["purelib"], paths["platlib"]),
        "stdlib": (paths["stdlib"], paths["platstdlib"]),
        "commbench": (package_dir(),),
        "procsys": ("/proc", "/sys"),
    }
    per = [trace_counts(p, roots) for p in sorted(d.glob("trace.*"))]
    per = [c for c in per if c is not None]
    row["ranks_traced"] = len(per)
    for k in ("opens", "failed", "stats", *roots):
        vals = [c[k] for c in per]
        row[f"{k}_median"] = statistics.median(vals) if vals else None
        row[f"{k}_max"] = max(vals) if vals else None
    if row["status"] != "ok":
        row["log_tail"] = tail(d / "log")
    return row


def cell(v, width: int, fmt: str) -> str:
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return f"{'-':>{width}}"
    if fmt == "d":
        return f"{int(v):>{width}d}"
    return f"{v:>{width}{fmt}}"


def family_table(fam: str, rows: dict[int, dict]) -> None:
    print(f"\n## {fam}: commbench run {' '.join(FAMILIES[fam])}")
    print(
        f"{'P':>3} " + " ".join(f"{t:>{w}}" for _, t, w, _ in COLUMNS) + "  heavy0 / heavyN  status"
    )
    for np_, r in sorted(rows.items()):
        cells = " ".join(cell(r.get(k), w, f) for k, _, w, f in COLUMNS)
        heavy = (
            f"{','.join(r.get('heavy0', [])) or '-'} / {','.join(r.get('heavy_other', [])) or '-'}"
        )
        note = f" ({r['note']})" if r.get("note") else ""
        print(f"{np_:>3} {cells}  {heavy}  {r['status']}{note}")
    for np_, r in sorted(rows.items()):
        if r["status"] != "ok":
            last = [x for x in r.get("log_tail", "").splitlines() if x.strip()][-3:]
            print(f"#   P={np_} {r['status']}: " + " | ".join(last))


STRACE_COLUMNS = [  # key (median over ranks unless _max), title
    ("opens_median", "opens"),
    ("opens_max", "max"),
    ("failed_median", "failed"),
    ("site_median", "site-pkgs"),
    ("stdlib_median", "stdlib"),
    ("commbench_median", "commbench"),
    ("procsys_median", "/proc,/sys"),
    ("stats_median", "stats"),
]


def strace_table(rows: dict[int, dict]) -> None:
    print(
        f"\n## files opened per rank process at start-up: the imb case under strace -f -ff ({PY})"
    )
    print("#  medians over ranks (max: the largest); failed: opens that returned -1 (ENOENT ...);")
    print("#  site-pkgs, stdlib, commbench (its package dir), /proc,/sys: opens under each;")
    print("#  stats: stat/newfstatat calls on a path")
    print(f"{'P':>3} {'ranks':>5} " + " ".join(f"{t:>10}" for _, t in STRACE_COLUMNS) + "  status")
    for np_, r in sorted(rows.items()):
        cells = " ".join(cell(r.get(k), 10, ".0f") for k, _ in STRACE_COLUMNS)
        print(f"{np_:>3} {r['ranks_traced']:>5} {cells}  {r['status']}")


def fit(ps: list[int], ys: list) -> dict | None:
    """Exponent of y ~ P^k and the line a + b P over P >= 4 with positive finite values."""
    pts = [(p, y) for p, y in zip(ps, ys, strict=True) if p >= 4 and y and np.isfinite(y) and y > 0]
    if len(pts) < 2:
        return None
    x, y = np.array([p for p, _ in pts], float), np.array([v for _, v in pts], float)
    k = float(np.polyfit(np.log(x), np.log(y), 1)[0])
    b, a = (float(c) for c in np.polyfit(x, y, 1))
    return {"exponent": k, "a": a, "b": b, "points": len(pts)}


def fits(table: dict[str, dict[int, dict]]) -> dict:
    out: dict = {}
    for fam, rows in table.items():
        ps = sorted(rows)
        for key, *_ in COLUMNS:
            f = fit(ps, [rows[p].get(key) for p in ps])
            if f is not None:
                out.setdefault(fam, {})[key] = f
    return out


def fits_table(fitted: dict) -> None:
    print("\n## growth with P (fits over P >= 4): metric ~ P^k; memory and B/row also a + b P")
    print(f"{'family':7} " + " ".join(f"{t:>{w}}" for k, t, w, _ in COLUMNS if k != "timed_s"))
    for fam, per in fitted.items():
        ks = [
            cell(per[k]["exponent"] if k in per else None, w, ".2f")
            for k, _, w, _ in COLUMNS
            if k != "timed_s"
        ]
        print(f"{fam:7} " + " ".join(ks))
    for fam, per in fitted.items():
        lines = [f"{k} = {per[k]['a']:.4g} + {per[k]['b']:.4g} P" for k in LINEAR if k in per]
        print(f"{fam:7} " + ";  ".join(lines))


def package_dir() -> str:
    """The commbench the ranks import (--checkout's when given: it leads sys.path)."""
    return str(importlib.util.find_spec("commbench").submodule_search_locations[0])


def conditions(mpi: str, load0: tuple) -> str:
    load = os.getloadavg()
    return (
        f"{os.cpu_count()} cores, load average (1, 5, 15 min) {load0[0]:.2f} {load0[1]:.2f} "
        f"{load0[2]:.2f} at the start, {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end; "
        f"Python {sys.version.split()[0]}, {mpi or 'MPI ?'}, {MPIEXEC}"
    )


def plist(s: str) -> list[int]:
    return [int(x) for x in s.split(",") if x.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=plist, default=plist("2,4,8,16,32,64"))
    ap.add_argument("--strace-procs", type=plist, default=plist("2,8"))
    ap.add_argument("--families", default=",".join(FAMILIES), help="subset of imb,osu,p2p,net")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    ap.add_argument("--json", help="write every number here")
    ap.add_argument("--checkout", help="run the commbench of this directory (e.g. a git archive)")
    a = ap.parse_args()
    if a.checkout:  # its commbench first on every rank's sys.path (ahead of an editable install)
        ck = str(Path(a.checkout).resolve())
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [ck, os.environ.get("PYTHONPATH")]))
        sys.path.insert(0, ck)
    fams = [f for f in a.families.split(",") if f]
    table: dict[str, dict[int, dict]] = {f: {} for f in fams}
    traced: dict[int, dict] = {}
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cb-scale-") as tmp:
        root = Path(tmp)
        (root / "wrapper.py").write_text(WRAPPER.replace("set(HEAVY)", repr(set(HEAVY))))
        for np_ in a.procs:
            for fam in fams:
                r = table[fam][np_] = run_family(np_, fam, root, a.timeout)
                print(f"# P={np_} {fam}: {r['wall_s']:.1f} s, {r['status']}", file=sys.stderr)
        for np_ in a.strace_procs:
            traced[np_] = strace_run(np_, root, a.timeout)
            print(f"# strace P={np_}: {traced[np_]['status']}", file=sys.stderr)
    mpi = next((r.get("mpi") for rows in table.values() for r in rows.values() if r.get("mpi")), "")
    print(f"# {conditions(mpi, load0)}")
    print(f"# commbench from {package_dir()}")
    print(f"# {time.perf_counter() - t0:.0f} s in all; P = {a.procs}; MPICH throttled polling")
    for fam in fams:
        family_table(fam, table[fam])
    if traced:
        strace_table(traced)
    fitted = fits(table)
    fits_table(fitted)
    if a.json:
        doc = {
            "conditions": conditions(mpi, load0),
            "commbench": package_dir(),
            "families": table,
            "strace": traced,
            "fits": fitted,
        }
        Path(a.json).write_text(json.dumps(doc, indent=1, default=str))


if __name__ == "__main__":
    main()
