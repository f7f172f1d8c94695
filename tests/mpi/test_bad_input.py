"""Bad input as real MPI jobs: every invalid invocation, at 1, 2 and 4 processes under mpiexec.

tests/unit/test_config.py checks the parser; here each case runs as a user would
start it (`mpiexec -n N python -m commbench run …`, no launcher) and must give
one clear message on stderr naming the problem and the accepted form, exit
status 2, within seconds, never a traceback or a hang. The cases run in
parallel (each is a short job that ends at start-up).
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

from commbench import suites
from tests.support.mpirun import ENV, MPIEXEC

ROOT = str(Path(__file__).resolve().parents[2])
LIMIT = 60  # a hang fails the case; a healthy refusal takes a second or two


def _io_dir_option() -> str | None:
    if suites.canonical_family("io") is None:
        return None
    for opt in suites.family("io").options:
        if "dir" in opt.dest:
            return opt.names[0]
    return None


# (id, argv with {tmp}/{np1} placeholders, text the message must contain, applies to np?)
CASES: list[tuple[str, list[str], str, object]] = [
    ("unknown-benchmark", ["PingPang"], "did you mean PingPong", None),
    ("unknown-benchmark-include", ["-include", "Pong"], "invalid benchmark name 'Pong'", None),
    (
        "unknown-benchmark-exclude",
        ["-exclude", "Nothing"],
        "invalid benchmark name 'Nothing'",
        None,
    ),
    ("unknown-option", ["-bogus"], "unknown option '-bogus'", None),
    ("unknown-option-near", ["-msglg", "4"], "did you mean -msglog", None),
    ("unknown-family", ["--suite", "nope"], "unknown family", None),
    ("npmin-text", ["-npmin", "x"], "-npmin needs an integer", None),
    ("npmin-zero", ["-npmin", "0"], "-npmin must be >= 1", None),
    ("npmin-missing", ["-npmin"], "-npmin needs a value", None),
    ("multi-2", ["-multi", "2"], "-multi takes 0 or 1", None),
    ("off-cache-text", ["-off_cache", "abc"], "is not a number", None),
    ("off-cache-line0", ["-off_cache", "8,0"], "line size must be positive", None),
    ("iter-4-numbers", ["-iter", "10,20,30,40"], "at most three", None),
    ("iter-token", ["-iter", "fast"], "unknown token 'fast'", None),
    ("iter-negative", ["-iter", "-5"], "counts must be positive", None),
    ("iter-policy", ["-iter_policy", "sometimes"], "dynamic|multiple_np|auto|off", None),
    ("time-text", ["-time", "abc"], "-time needs a number", None),
    ("time-zero", ["-time", "0"], "-time must be a positive number", None),
    ("mem-negative", ["-mem", "-1"], "-mem must be a positive number", None),
    ("msglog-reversed", ["-msglog", "10:5"], "0 <= minlog < maxlog < 31", None),
    ("msglog-31", ["-msglog", "31"], "0 <= minlog < maxlog < 31", None),
    ("msglog-text", ["-msglog", "a:b"], "0 <= minlog < maxlog < 31", None),
    ("thread-level", ["-thread_level", "many"], "single|funneled|serialized|multiple", None),
    ("include-empty", ["-include"], "needs at least one benchmark", None),
    ("exclude-everything", ["PingPong", "-exclude", "PingPong"], "no benchmark left", None),
    ("alloc-kind", ["--alloc", "gpu"], "numpy|mpi|mmap", None),
    ("hugepages", ["--hugepages", "maybe"], "on|off", None),
    (
        "timeout-negative",
        ["--timeout", "-5"],
        "--timeout must be a non-negative number (0 = off)",
        None,
    ),
    ("timeout-text", ["--timeout", "soon"], "--timeout needs a number", None),
    ("maxlog-range", ["--maxlog", "50"], "--maxlog <31..40>", None),
    ("maxlog-contradicts-msglog", ["--maxlog", "33", "-msglog", "20"], "contradicts -msglog", None),
    ("input-missing", ["-input", "{tmp}/absent"], "no such file", None),
    ("input-directory", ["-input", "{tmp}/adir"], "is a directory", None),
    ("input-fifo", ["-input", "{tmp}/fifo"], "not a regular file", None),
    ("input-binary", ["-input", "{tmp}/binary"], "not text", None),
    ("msglen-missing", ["-msglen", "{tmp}/absent"], "no such file", None),
    ("msglen-directory", ["-msglen", "{tmp}/adir"], "is a directory", None),
    ("msglen-fifo", ["-msglen", "{tmp}/fifo"], "not a regular file", None),
    ("msglen-binary", ["-msglen", "{tmp}/binary"], "not text", None),
    ("msglen-no-size", ["-msglen", "{tmp}/nolens"], "'foo' is not a byte count", None),
    ("msglen-negative", ["-msglen", "{tmp}/neglens"], "'-8' is not a byte count", None),
    ("input-empty", ["-input", "{tmp}/nonames"], "no benchmark name in it", None),
    ("map-malformed", ["-map", "2y2"], "-map <A>x<B>", None),
    ("map-zero", ["-map", "0x4"], "-map <A>x<B>", None),
    ("map-does-not-fit", ["-map", "1x1"], "places for", lambda np_: np_ > 1),
    ("map-more-places", ["-map", "3x3"], "they must match", None),  # once a deadlock in warm-up
    ("np-contradicts-job", ["-n", "{np1}"], "given inside an MPI job", None),
    ("output-is-directory", ["-o", "{tmp}/adir"], "is a directory", None),
    ("output-unwritable", ["-o", "{tmp}/afile/r.json"], "cannot create directory", None),
    ("csv-unwritable", ["--csv", "{tmp}/afile/r.csv", "-o", "-"], "cannot create directory", None),
    (
        "memory-beyond-host",
        ["-mem", "100", "--maxlog", "36", "-msglen", "{tmp}/huge", "Bcast"],
        "MemAvailable",
        None,
    ),
    # options a run would not use: refused with the family and the option named (issue 22 item 3)
    (
        "foreign-family-option",
        ["--suite", "ext", "--nbc-cpu-factor", "2"],
        "option of the nbc family",
        None,
    ),
    ("foreign-family-option-mpi1", ["--pgas-stride", "8"], "option of the pgas family", None),
    (
        "driver-check",
        ["--suite", "msgrate", "-check"],
        "-check: the msgrate family does not use it",
        None,
    ),
    (
        "driver-alloc",
        ["--suite", "overhead", "--alloc", "mpi"],
        "--alloc: the overhead family does not use it",
        None,
    ),
    (
        "driver-samples",
        ["--suite", "overhead", "--samples", "3"],
        "--samples: the overhead family",
        None,
    ),
    ("driver-multi", ["--suite", "msgrate", "-multi", "0"], "-multi: the msgrate family", None),
    ("driver-fit", ["--suite", "msgrate", "--fit"], "--fit: the msgrate family", None),
    (
        "engine-without-native-loops",
        ["--suite", "pgas", "--engine", "native"],
        "has no C timed loops",
        None,
    ),
    # ... and options that only some benchmarks use, none of those given (issue 31 item 7)
    (
        "unused-sync-start",
        ["--sync-start", "window", "PingPong", "Uniband"],
        "--sync-start: no benchmark of this run uses it",
        None,
    ),
    ("unused-per-iteration", ["--per-iteration", "Uniband"], "Uniband: a window of messages", None),
    (
        "unused-sync-start-pgas",
        ["--suite", "pgas", "--sync-start", "window"],
        "the pgas family has no collective",
        None,
    ),
    ("unused-msglog-barrier", ["-msglog", "4", "Barrier"], "Barrier: no message size", None),
    # the command line's own mistakes, said as what they are (issue 31 items 6 and 9)
    ("double-dash", ["--"], "unknown option '--' (see commbench run -h)", None),
    ("option-twice", ["-msglog", "3", "-msglog", "5"], "-msglog given twice", None),
    ("load-twice", ["-load", "{tmp}/a.json", "-load", "{tmp}/b.json"], "-load given twice", None),
    ("load-with-n", ["-load", "{tmp}/n64.json"], "its argv has -n 64", None),
    (
        "thread-level-osu",
        ["--suite", "osu", "-thread_level", "single", "latency_mt"],
        "needs MPI_THREAD_MULTIPLE, but -thread_level single was given",
        None,
    ),
    (
        "mt-threads-beyond-mpi",
        ["--suite", "mt", "--mt-threads", "10000"],
        "MPICH has 2048 per process",
        None,
    ),
    # every family's own buffers checked before anything is allocated (issue 22 item 4)
    (
        "msgrate-cache-beyond-host",
        ["--suite", "msgrate", "--peers", "2", "--cache-size", "100g"],
        "MemAvailable",
        lambda np_: np_ == 4,
    ),
    (
        "msgrate-msgs-beyond-host",
        ["--suite", "msgrate", "--peers", "2", "--msgs", "1000000000"],
        "MemAvailable",
        lambda np_: np_ == 4,
    ),
    (
        "overhead-sizes-beyond-host",
        ["--suite", "overhead", "--sizes", "16,100000000000"],
        "MemAvailable",
        lambda np_: np_ >= 3,
    ),
    (
        "pgas-stride-beyond-host",
        ["--suite", "pgas", "--pgas-stride", "10000000000", "-mem", "200", "-msglog", "0:4"],
        "MemAvailable",
        lambda np_: np_ % 2 == 0,
    ),
    (
        "pgas-odd-processes",
        ["--suite", "pgas"],
        "family pgas needs",  # at 1 process: "at least 2"; odd: "an even number"
        lambda np_: np_ % 2 == 1 and suites.canonical_family("pgas") is not None,
    ),
]
_IO = _io_dir_option()
if _IO is not None:
    CASES.append(("io-dir-unwritable", ["--suite", "io", _IO, "{tmp}/afile/sub"], _IO, None))


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


def test_case_count():
    assert len(CASES) >= 30


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


def test_family_cases_present_or_skipped():
    """The PGAS and IO cases join the matrix as soon as those families exist."""
    missing = [f for f in ("pgas", "io") if suites.canonical_family(f) is None]
    if _IO is None and "io" not in missing:
        missing.append("io (no directory option)")
    if missing:
        pytest.skip(
            f"family {', '.join(missing)} not in this build: those matrix cases are skipped"
        )
