"""The ReFrame example (examples/reframe) under the real `reframe` command.

reframe-hpc is installed with pip into this interpreter when it does not import (the test
skips, saying why, when pip cannot). ReFrame runs both example checks on its `local`
system: CommbenchPingPong must pass with its performance values in ReFrame's perflog and
run report and its run in the results store (tag reframe, system local:default);
CommbenchGate must pass `commbench compare --baseline` against that store. Timings are
not asserted: the reference ceiling and the gate's threshold are loosened with -S (this
machine is shared and oversubscribed).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.mpirun import ENV, commbench

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "reframe"
# The 4.x API the example uses (reframe.core.builtins); checked with 4.10.4.
PIN = "reframe-hpc>=4.10,<5"


def reframe_command() -> list[str]:
    """The `reframe` command of this interpreter, installed with pip when missing."""
    if importlib.util.find_spec("reframe") is None:
        p = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", PIN],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if p.returncode != 0:
            why = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"]
            pytest.skip(f"reframe-hpc does not import and `pip install {PIN}` failed: {why[0]}")
        importlib.invalidate_caches()
        if importlib.util.find_spec("reframe") is None:
            pytest.skip(f"pip installed {PIN} but reframe still does not import")
    script = Path(sys.executable).parent / "reframe"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from reframe.frontend.cli import main; main()"]


def perflog(path: Path) -> dict[str, str]:
    """The last record of a ReFrame perflog (builtin filelog: '|'-separated, a header)."""
    lines = path.read_text().splitlines()
    return dict(zip(lines[0].split("|"), lines[-1].split("|")))


def reframe(cmd: list[str], tmp_path: Path, name: str, *args: str):
    """One ReFrame session of the example: (the process, its run report's test cases)."""
    report = tmp_path / f"{name}.json"
    env = dict(os.environ, **ENV, COMMBENCH_STORE=str(tmp_path / "store.db"))
    env["TMPDIR"] = str(tmp_path)  # ReFrame's own log file
    p = subprocess.run(
        [
            *cmd,
            "-C",
            str(EXAMPLE / "settings.py"),
            "-c",
            str(EXAMPLE / "commbench_checks.py"),
            "-r",
            "--nocolor",
            "--prefix",
            str(tmp_path / name),
            "--report-file",
            str(report),
            "-S",
            f"commbench={sys.executable} -m commbench",
            "-S",
            "msglog=9:10",
            "-S",
            "iters=50",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    cases = []
    if report.exists():
        cases = json.loads(report.read_text())["runs"][0]["testcases"]
    return p, {c["name"]: c for c in cases}


def test_reframe_runs_the_example_into_the_store(tmp_path):
    cmd = reframe_command()
    # Timings are not asserted (a shared 2-core machine): a ceiling and a threshold that
    # nothing reaches; the wiring is.
    loose = ["-S", "local_ceiling_us=1000000", "-S", "CommbenchGate.threshold=1000000%"]
    p, cases = reframe(cmd, tmp_path, "first", *loose)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
    assert "[  PASSED  ] Ran 2/2 test case(s)" in p.stdout, p.stdout[-3000:]
    assert {n: c["result"] for n, c in cases.items()} == {
        "CommbenchPingPong": "pass",
        "CommbenchGate": "pass",
    }
    # The extracted values: in the JSON run report and in the perflog.
    for name in ("pingpong_t", "allreduce_t_avg"):
        value, _ref, _lo, _hi, unit, verdict = cases["CommbenchPingPong"]["perfvalues"][
            f"local:default:{name}"
        ]
        assert value > 0 and unit == "us" and verdict == "pass", (name, value, unit, verdict)
    log = perflog(tmp_path / "first" / "perflogs" / "local" / "default" / "CommbenchPingPong.log")
    assert log["result"] == "pass" and float(log["pingpong_t_value"]) > 0, log
    out = tmp_path / "first" / "output" / "local" / "default" / "builtin"
    assert (out / "CommbenchPingPong" / "commbench.json").is_file()
    verdict = (out / "CommbenchGate" / "compare.txt").read_text()
    assert "# gate: no regression" in verdict, verdict

    # A comparison the gate refuses (exit status 2: no stored run matches) fails the gate's
    # sanity; ReFrame runs its dependency CommbenchPingPong again, which stores a second run.
    p, cases = reframe(
        cmd, tmp_path, "refused", *loose, "-n", "CommbenchGate", "-S", "selector=tag=none"
    )
    assert p.returncode == 1, p.stdout[-4000:] + p.stderr[-2000:]
    assert cases["CommbenchPingPong"]["result"] == "pass", cases["CommbenchPingPong"]
    gate = cases["CommbenchGate"]
    assert gate["result"] == "fail" and gate["fail_phase"] == "sanity", gate
    assert "commbench compare exited with 2" in gate["fail_reason"], gate["fail_reason"]

    # The store: CommbenchPingPong's runs (the gate keeps nothing).
    listed = commbench("store", "list", "--store", str(tmp_path / "store.db"), "--json")
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)
    assert [(r["system"], r["tags"], r["world_size"], r["complete"]) for r in runs] == [
        ("local:default", ["reframe"], 2, True)
    ] * 2, runs
