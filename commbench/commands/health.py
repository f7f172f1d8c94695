"""`commbench health`: a short curated run of the net family across the hosts (all-pairs
shifts, rings, bisection, fans, with each host's limits measured first), the site's
expectations applied when given, and one verdict per host: good, slow (with the evidence)
or failed to run (commbench.models.health). With --slurm-drain the slow hosts are drained in
Slurm (`scontrol update nodename=N state=drain reason="commbench: ..."`), never a host it
cannot prove slow; the verdicts and the drains go into the results file under "health".
Exit 0 every host good, 1 a host slow, 2 a host failed to run or bad input (docs/health.md)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import datetime

from commbench.commands.errors import err
from commbench.commands.parsing import Parser, fraction
from commbench.models import health

USAGE = (
    "commbench health [-n N] [--expect RULES.toml] [--slurm-drain] [--threshold 30%] "
    "[--json OUT|-] [-o RESULTS.json] [any option of commbench run --suite net]"
)

HELP = """Measures every host and every host's network in a few minutes and ends with one verdict
per host: good, slow (with the evidence) or failed to run. Run it with -n N outside a job,
or inside one (srun -N 4 commbench health, mpiexec -n 8 commbench health).

  --expect RULES.toml  also the site's expectations (docs/expect.md): a row of one host that
                       fails them makes that host slow
  --threshold F        a host's memory bandwidth below the other hosts' median by more than
                       this is slow (default 30%; the network's: --net-threshold)
  --slurm-drain        drain the slow hosts in Slurm (scontrol update ... state=drain), refused
                       before measuring outside Slurm or without the right to drain
  --json OUT|-         the verdicts as JSON (- : on stdout, instead of the text)
  -o RESULTS.json      the run's results file, with the verdicts and drains under "health"

Exit status: 0 every host good, 1 a host slow, 2 a host failed to run or bad input."""


def arguments(argv: list[str]):
    """(health's own options, the arguments for `commbench run --suite net`)."""
    p = Parser("commbench health", USAGE)
    p.add_argument("--expect", metavar="RULES.toml")
    p.add_argument("--slurm-drain", action="store_true")
    p.add_argument(
        "--threshold", type=fraction("--threshold", "30% or 0.3", zero=False), default=0.3
    )
    p.add_argument("--json", metavar="OUT|-")
    # -o stays the run's (read back by _output): an argparse "-o" would take IMB's -off_cache
    own, rest = p.parse_known_args(p._joined(argv))
    if any(a == "--suite" or a.startswith("--suite=") for a in rest):
        raise ValueError(f"health runs the net family: it takes no --suite ({USAGE})")
    return own, rest


def slurm_refusal() -> str | None:
    """Why --slurm-drain cannot act here (None: it can), asked before anything is measured."""
    scontrol = shutil.which("scontrol")
    if scontrol is None:
        return "--slurm-drain: no scontrol on PATH: this is not a Slurm cluster"
    try:
        p = subprocess.run([scontrol, "show", "config"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as e:
        return f"--slurm-drain: scontrol cannot reach Slurm ({e})"
    if p.returncode != 0:
        return f"--slurm-drain: scontrol cannot reach Slurm ({p.stderr.strip()[:200]})"
    slurm_user = next(
        (ln.split("=", 1)[1].split("(")[0].strip() for ln in p.stdout.splitlines()
         if ln.startswith("SlurmUser")), "",
    )  # fmt: skip
    me = _user()
    if os.geteuid() != 0 and me != slurm_user:
        return (
            f"--slurm-drain: {me} may not drain nodes (root or SlurmUser {slurm_user or '?'} "
            "may; an operator can run `scontrol update ... state=drain` from the verdicts)"
        )
    return None


def _user() -> str:
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name


def _first_rank() -> bool:
    """Whether this process finishes the command: the launcher, or rank 0 of the job."""
    from commbench.self_launcher import in_mpi_job

    if not in_mpi_job():
        return True
    from mpi4py import MPI

    if MPI.Is_initialized() and not MPI.Is_finalized():
        return MPI.COMM_WORLD.Get_rank() == 0
    from commbench import process_origin

    return process_origin.first_by_launcher()


def _slurm_nodes(doc: dict) -> dict[str, str]:
    """host -> its Slurm node name (they differ where the node name is not the hostname)."""
    meta = doc.get("metadata") or {}
    nodes = (meta.get("slurm") or {}).get("rank_nodes") or []
    return {h: n for h, n in zip(meta.get("rank_hosts") or [], nodes) if n} or {
        h: h for h in meta.get("hosts") or []
    }


def drain(verdicts: dict[str, dict], doc: dict) -> list[dict]:
    """scontrol update ... state=drain for every slow host; what each did."""
    nodes, done = _slurm_nodes(doc), []
    for host, v in verdicts.items():
        if v["verdict"] != health.SLOW:
            continue
        node, why = nodes.get(host, host), health.reason(v["evidence"])
        cmd = ["scontrol", "update", f"nodename={node}", "state=drain", f"reason={why}"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        done.append(
            {"host": host, "node": node, "reason": why, "ok": p.returncode == 0,
             "said": (p.stdout + p.stderr).strip()[:300]}
        )  # fmt: skip
    return done


def _judged(out: str, own, rc: int, notes: list[str]) -> tuple[dict | None, dict, int]:
    """(the results document, the verdicts, the exit status) of the finished run."""
    from commbench.commands import expect
    from commbench.views import results_file

    doc, recs, why = None, [], ""
    try:
        doc, recs = results_file.read(out)
    except ValueError as e:
        why = f"the run left no results ({e})"
    if doc is not None and rc not in (0, 1):
        why = f"the run ended with status {rc}"
    expected = []
    if own.expect and doc is not None and not why:
        expected = expect.judge(own.expect, [(out, doc, recs)])
    verdicts = health.judge(doc, recs, own.threshold, expected, why, notes)
    return doc, verdicts, health.exit_status(verdicts)


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(f"usage: {USAGE}\n\n{HELP}")
        return 0
    try:
        own, rest = arguments(argv)
        refused = slurm_refusal() if own.slurm_drain else None
        if own.expect:
            from commbench.commands import expect

            expect.rules(own.expect)  # bad rules refused before anything is measured
    except ValueError as e:
        return err(str(e))
    if refused:
        return err(refused)
    from commbench.commands import run

    out = _output(rest)
    if out is None:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        out = os.path.join("results", f"commbench-health-{stamp}.json")
        rest = [*rest, "-o", out]
    rc = run.cmd_run(["--suite", "net", *rest])
    if not _first_rank():
        return rc
    notes: list[str] = []
    doc, verdicts, status = _judged(out, own, rc, notes)
    drained = drain(verdicts, doc) if own.slurm_drain and doc is not None else []
    if doc is not None:
        doc["health"] = {
            "verdicts": verdicts, "drained": drained, "notes": notes, "threshold": own.threshold
        }  # fmt: skip
        _rewrite(out, doc)
    from commbench.views import health_text

    if own.json:
        payload = json.dumps(
            {"hosts": verdicts, "drained": drained, "exit_status": status}, indent=1
        )
        from commbench.commands.expect import write_out

        try:
            write_out(own.json, payload + "\n")
        except ValueError as e:
            return err(f"--json: {e}")
    if own.json != "-":
        print("\n".join(health_text.lines(verdicts, drained, notes)))
    return status if not any(not d["ok"] for d in drained) else 2


def _output(rest: list[str]) -> str | None:
    """The results file -o (--output) names in the run's arguments."""
    for i, a in enumerate(rest):
        if a in ("-o", "--output") and i + 1 < len(rest):
            return rest[i + 1]
        if a.startswith("--output="):
            return a.split("=", 1)[1]
    return None


def _rewrite(path: str, doc: dict) -> None:
    """The results file again, whole or not at all, with the health section."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, allow_nan=False)
        f.write("\n")
    os.replace(tmp, path)
