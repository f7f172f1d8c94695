"""64 ranks on 2 cores (issue 35 item 4): a slow but moving job stays honest.

The default IMB-MPI1 list (short: 2 sizes, NP 64 only) under a pseudo-terminal: the
watchdog (--timeout 30) does not end it, the progress line follows it, the results file
grows row by row, -check passes and every row beyond --rank-detail keeps its summary; the
net family at 64 ranks; and a run interrupted at 64 ranks keeps the records it measured.
MPICH's throttled polling (the tests' environment, tests.support.mpirun.ENV) keeps 64
oversubscribed ranks from spinning.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

from commbench import run_config
from commbench.harness.plan import Plan
from tests.mpi.test_progress import _launch
from tests.support.mpirun import ENV, records_in, wait_for_records

P = 64
SHORT = ["-msglog", "0:1", "-npmin", str(P), "-iter", "10", "-time", "5"]  # NP 64 (2 for p2p)


def _rows(path, seen: list, done: threading.Event) -> None:
    """Every distinct record count the results file showed while the run went on. A read
    between a record's bytes and the closing bytes after them (the file grows in place) is
    not valid JSON and is skipped: it is no count of 0 (a CI run saw one)."""
    while not done.is_set():
        n = records_in(path, unreadable=None)
        if n is not None and (not seen or n != seen[-1]):
            seen.append(n)
        time.sleep(0.2)


def test_default_list_at_64_ranks(tmp_path):
    out = tmp_path / "p64.json"
    args = ["run", "-n", str(P), *SHORT, "-check", "--timeout", "30", "--rank-detail", "16"]
    seen: list[int] = []
    done = threading.Event()
    watcher = threading.Thread(target=_rows, args=(out, seen, done), daemon=True)
    watcher.start()
    try:
        rc, stdout, term = _launch([*args, "-o", str(out)], timeout=500)
    finally:
        done.set()
        watcher.join()
    text = term.decode(errors="replace")
    assert rc == 0, text[-3000:]
    # the watchdog may say that start-up is slow (64 interpreters on 2 cores), never end it
    assert "ended" not in text.lower().replace("the job is ended at --timeout", ""), text[-3000:]
    assert f"Allreduce NP {P}" in text and "left" in text  # the progress line kept up
    doc = json.loads(out.read_text())
    recs = doc["records"]
    cfg = run_config.parse_run_args([*SHORT, "-check", "-o", "-"], world_size=P)
    assert len(recs) == sum(n for *_, n in Plan(cfg, P).sweeps())  # every row of the plan
    assert doc["complete"] and all(r["status"] == "ok" for r in recs)
    assert {r["extra"]["check"] for r in recs} <= {"successful", "not checked"}
    assert sum(r["extra"]["check"] == "successful" for r in recs) > len(recs) // 2
    assert all(r["rank_summary"]["ranks"] == P and not r["rank_times"] for r in recs)
    # written row by row: the file showed many counts on the way, not all rows at the end
    assert len(seen) > 10 and seen == sorted(seen), seen
    assert f"# #processes = {P}" in stdout


def test_an_interrupted_64_rank_run_keeps_its_records(tmp_path):
    out = tmp_path / "int64.json"
    cmd = [sys.executable, "-m", "commbench", "run", "-n", str(P), *SHORT, "-o", str(out)]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, **ENV),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        got = wait_for_records(out, 20, timeout=300, proc=proc)
        assert got >= 20, proc.stderr.read() if proc.poll() is not None else got
        proc.send_signal(signal.SIGINT)  # Ctrl-C at the launcher
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0
    doc = json.loads(out.read_text())
    assert not doc["complete"] and doc["summary"].get("interrupted"), doc["summary"]
    assert len(doc["records"]) >= got, err[-2000:]


def test_net_family_at_64_ranks(tmp_path):
    """Every pattern at 64 ranks (all 63 shifts: auto runs them up to 65 ranks), within
    --timeout, its step records summarised beyond --rank-detail 16, and its verdicts."""
    out = tmp_path / "net64.json"
    args = ["run", "-n", str(P), "--suite", "net", "-time", "0.05", "--net-samples", "3"]
    args += ["--timeout", "60", "--rank-detail", "16", "-o", str(out)]
    p = subprocess.run(
        [sys.executable, "-m", "commbench", *args],
        capture_output=True,
        text=True,
        timeout=500,
        env=dict(os.environ, **ENV),
    )
    assert p.returncode == 0, p.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert doc["complete"]
    recs = doc["records"]
    matrices = [r for r in recs if r["benchmark"] == "AllPairs" and r["mode"].endswith("matrix")]
    assert len(matrices) == 2
    assert all(m["extra"]["plan"]["steps"] == P - 1 for m in matrices)
    steps = [r for r in recs if r["benchmark"] == "AllPairs" and " shift " in r["mode"]]
    assert len(steps) == 2 * (P - 1)
    assert all(r["rank_summary"]["ranks"] == P and not r["rank_times"] for r in steps)
    assert "rank_samples_s" not in steps[0]["extra"]  # per-rank samples: left out, and said
    assert steps[0]["rank_summary"]["left_out"] == ["extra.rank_samples_s"]
    assert recs[-1]["benchmark"] == "Verdicts" and "verdicts" in doc
    assert "AllPairs" in p.stdout and "Verdicts" in p.stdout
