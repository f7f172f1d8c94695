"""Bad input as real MPI jobs: every invalid invocation, at 1, 2 and 4 processes under mpiexec.

tests/unit/test_config.py checks the parser; here each case runs as a user would
start it (`mpiexec -n N python -m commbench run …`, no launcher) and must give
one clear message on stderr naming the problem and the accepted form, exit
status 2, within seconds, never a traceback or a hang. The cases run in
parallel (each is a short job that ends at start-up). The cases are
tests/support/bad_input_cases.py; their count and families, tests/unit/test_bad_input.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.bad_input_cases import CASES
from tests.support.mpirun import ENV, MPIEXEC

ROOT = str(Path(__file__).resolve().parents[2])
LIMIT = 60  # a hang fails the case; a healthy refusal takes a second or two


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("bad")
    (tmp / "adir").mkdir()
    os.mkfifo(tmp / "fifo")  # opening it would block: the check must not
    (tmp / "binary").write_bytes(bytes(range(128, 256)) * 4)
    (tmp / "nolens").write_text("# nothing\nfoo\n")
    (tmp / "neglens").write_text("4\n-8\n")
    (tmp / "nonames").write_text("# nothing to run\n")
    (tmp / "afile").write_text("a regular file, not a directory\n")
    (tmp / "huge").write_text("40960m\n")  # 40 GiB messages
    for name, argv in (
        ("a", ["-msglog", "2", "PingPong"]),
        ("b", ["-msglog", "3"]),
        ("n64", ["-n", "64", "PingPong"]),
    ):
        (tmp / f"{name}.json").write_text(
            json.dumps({"format": "commbench-options 1", "argv": argv})
        )
    return tmp


def run_case(
    np_: int, argv: list[str], tmp: Path
) -> tuple[subprocess.CompletedProcess | None, float]:
    args = [a.format(tmp=tmp, np1=np_ + 1) for a in argv]
    env = dict(
        os.environ,
        **ENV,
        PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])),
    )
    cmd = [MPIEXEC, "-n", str(np_), sys.executable, "-m", "commbench", "run", *args]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=LIMIT, env=env, cwd=tmp)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - t0
    return p, time.monotonic() - t0


@pytest.mark.parametrize("np_", [1, 2, 4])
def test_bad_input_matrix(files, np_):
    # At 4 processes: every case that depends on the process count, and a third of the rest
    # (a rank parses as at 2; what 4 adds is more ranks to agree and stay quiet), 60 s -> 25 s.
    todo = [
        (cid, argv, needle)
        for i, (cid, argv, needle, applies) in enumerate(CASES)
        if (applies(np_) if applies is not None else np_ < 4 or i % 3 == 0)
    ]
    workers = 8 if np_ < 4 else 4
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda c: (c, *run_case(np_, c[1], files)), todo))
    problems = []
    for (cid, argv, needle), p, _took in results:
        if p is None:
            problems.append(f"{cid}: no answer within {LIMIT} s (a hang)")
            continue
        err = p.stderr
        msgs = [line for line in err.splitlines() if line.startswith("commbench: error: ")]
        why = []
        if p.returncode != 2:
            why.append(f"exit status {p.returncode}")
        if "Traceback" in err + p.stdout:
            why.append("a traceback")
        if len(msgs) != 1:
            why.append(f"{len(msgs)} error lines (want one, from rank 0)")
        elif needle not in msgs[0]:
            why.append(f"message lacks {needle!r}")
        elif not any(
            k in msgs[0] for k in ("accepted", "did you mean", "see commbench", "see `commbench")
        ):
            why.append("message names no accepted form")
        if "# Benchmarking" in p.stdout:
            why.append("it measured something")
        if why:
            problems.append(
                f"{cid} ({' '.join(argv)}): {', '.join(why)}\n    stderr: {err.strip()[-500:]}"
            )
    assert not problems, f"at {np_} processes:\n" + "\n".join(problems)
