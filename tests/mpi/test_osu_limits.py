"""The osu family's limits and extras (issue 31, items 4, 5 and 9), in real MPI processes:

- what -c -u 0 measures: OSU's rounds run in C, the barrier in the same call as the timed
  repetition (checked with a preloaded MPI_Barrier that names its caller);
- counts: -i, -x, -W, -p, -t and -m past a C int are refused, never wrapped, and the
  record holds the counts that ran (checked against the MPI calls made);
- the memory pre-flight counts every array: per-iteration times (checked against the
  ranks' measured peak memory), -W's requests and windows, P blocks, -c's data;
- OMB's buffer operands (`latency D D`) taken as OMB 7.4's CPU build takes them;
- refusals that name the process count that runs, -M when -M emptied a range, and the
  -t form of the program at hand.

What the parser and the pre-flight decide without a run (the counts' bounds, the pre-flight's
arithmetic, where the operands stand, the count a refusal names): tests/unit/test_osu_limits.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mpi.test_osu import shape, structure
from tests.support.mpirun import ENV, MPIEXEC, mpiexec, run_json
from tests.support.osu_common import DATA, assert_refused, library
from tests.support.osu_parse import need, parse


def barrier_log(tmp_path: Path, np_: int, *args: str) -> dict[str, int]:
    """A run under tests/data/osu/barrier_caller.c: rank 0's MPI_Barrier calls by the file
    that called them (the C loops' library or mpi4py's), and its MPI_Send calls."""
    lib = library(tmp_path, "barrier_caller.c")
    trace = tmp_path / f"trace{len(list(tmp_path.glob('trace*')))}"
    trace.mkdir()
    p = mpiexec(
        np_,
        "run",
        "--suite",
        "osu",
        *args,
        "-o",
        "-",
        env={"LD_PRELOAD": str(lib), "COMMBENCH_TRACE_DIR": str(trace)},
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    got = {"c": 0, "mpi4py": 0, "send": 0}
    for line in (trace / "out.0").read_text().splitlines():
        what, _, where = line.partition(" ")
        if what == "Send":
            got["send"] += 1
        else:
            got["c" if where.startswith("libcommbench_osu_") else "mpi4py"] += 1
    return got


# -- item 4: what -c -u 0 measures ------------------------------------------------------------


@pytest.mark.parametrize(
    "np_,name",
    [
        (2, "latency"),
        (2, "bw"),
        (2, "allreduce"),
        (3, "neighbor_allgather"),
        (2, "iallreduce"),
        (2, "latency_persistent"),
    ],
)
def test_osus_rounds_run_in_c_with_no_barrier_from_python_per_round(tmp_path, np_, name):
    """The barrier before a timed round is the C loop's, in the call that times it; the
    rounds of a size are one C call: mpi4py's barriers do not grow with the rounds (the
    earlier driver called MPI_Barrier from Python before every round and every size)."""
    few = barrier_log(tmp_path, np_, name, "-m", "4:4", "-i", "2", "-x", "1", "-c", "-u", "0")
    many = barrier_log(tmp_path, np_, name, "-m", "4:4", "-i", "6", "-x", "3", "-c", "-u", "0")
    assert few["mpi4py"] == many["mpi4py"] and many["c"] >= few["c"] + 6, (few, many)
    one = barrier_log(tmp_path, np_, name, "-m", "4:4", "-i", "3", "-x", "2")
    four = barrier_log(tmp_path, np_, name, "-m", "4:32", "-i", "3", "-x", "2")
    assert one["mpi4py"] == four["mpi4py"] and four["c"] >= one["c"] + 3, (one, four)


PEERS = Path(__file__).resolve().parents[3] / "shared" / "peers" / "osu"  # ../shared/peers/osu


def call_log(tmp_path: Path, command: list[str]) -> list[list[str]]:
    """Each rank's MPI calls under tests/data/osu/trace.c, without MPI_Wtime, OSU's Bcast of the
    verdicts after a size and commbench's barrier at its end."""
    lib = library(tmp_path, "trace.c")
    Path("/tmp/osutrace").mkdir(exist_ok=True)
    p = subprocess.run(
        [MPIEXEC, "-n", "2", "-genv", "LD_PRELOAD", str(lib), *command],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **ENV, "LD_LIBRARY_PATH": str(Path(sys.prefix) / "lib")},
    )
    assert p.returncode == 0, p.stderr[-2000:]
    logs = [Path(f"/tmp/osutrace/out.{r}").read_text().splitlines() for r in (0, 1)]
    return [[c for c in log if c not in ("Wtime", "Bcast 1")] for log in logs]


@pytest.mark.parametrize("name", ["latency", "bw", "bibw", "latency_persistent", "bw_persistent"])
def test_check_rounds_make_the_binaries_calls(tmp_path, name):
    """-c -u 1 in commbench's C loops makes OMB 7.4's calls in OMB's order on both ranks: the
    size's barrier, per round a barrier, the repetitions and the receiver's 4-byte verdict
    (latency and bw and their persistent forms; tag 2 and 102, as the binaries send it)."""
    if not (PEERS / f"osu_{name}").exists():
        pytest.skip(f"peer binaries absent: no {PEERS}/osu_{name}")
    opts = ["-m", "4:8", "-i", "2", "-x", "1", "-c", "-u", "1"]
    osu = call_log(tmp_path, [str(PEERS / f"osu_{name}"), *opts])
    cb = call_log(
        tmp_path,
        [sys.executable, "-m", "commbench", "run", "--suite", "osu", name, *opts, "-o", "-"],
    )
    assert [log[:-1] if log[-1] == "Barrier" else log for log in cb] == osu


def test_the_record_holds_the_counts_that_ran(tmp_path):
    """Rank 0 of latency sends once per iteration: -x 3 -i 4 is 7 sends a size, and the
    record says 3 and 4; under -c -u 2 every round makes 3 (7 rounds: 21)."""
    got = barrier_log(tmp_path, 2, "latency", "-m", "1:2", "-i", "4", "-x", "3")
    assert got["send"] == 2 * 7, got
    got = barrier_log(tmp_path, 2, "latency", "-m", "1:1", "-i", "4", "-x", "3", "-c", "-u", "2")
    assert got["send"] == 7 * 3, got
    _, res = run_json(
        tmp_path, 2, "--suite", "osu", "latency", "-m", "1:1", "-i", "4", "-x", "3", "-c", "-u", "2"
    )
    ex = res["records"][0]["extra"]
    assert (
        res["records"][0]["repetitions"],
        ex["warmup_iterations"],
        ex["validated_rounds"],
        ex["validation_warmup"],
    ) == (4, 3, 7, 2)


def test_checked_rounds_count_every_wrong_byte_on_both_engines(tmp_path):
    """The C rounds compare each round's data with a checked round's: a spoilt sender's byte
    is still counted once per round (2 warm-up + 10 timed), as the mpi4py rounds count it."""
    for engine in ("native", "mpi4py"):
        out = tmp_path / f"{engine}.json"
        p = mpiexec(
            3,
            "run",
            "--suite",
            "osu",
            "latency_persistent",
            "allgather",
            "iallreduce",
            "neighbor_allgather",
            "-m",
            "4:4",
            "-i",
            "10",
            "-x",
            "2",
            "-c",
            "-u",
            "1",
            "--engine",
            engine,
            "-o",
            str(out),
            env={"COMMBENCH_FAULT_CORRUPT": "1"},
            timeout=300,
        )
        assert p.returncode == 1, p.stderr[-2000:]
        got = {
            r["benchmark"]: r["defects"]
            for r in json.loads(out.read_text())["records"]
            if r["status"] == "ok"
        }
        assert got == {"allgather": 36, "iallreduce": 72, "neighbor_allgather": 24}, (engine, got)


# -- item 4: counts past what the loops take ---------------------------------------------------


@pytest.mark.parametrize(
    "args,words",
    [
        (["latency", "-x", "4294967296"], "-x 4294967296: at most 2147483647 warm-up iterations"),
        (["latency", "-i", "4294967297"], "-i 4294967297: at most 2147483647 iterations"),
        (["iallreduce", "-t", "4294967297"], "-t '4294967297': not a count"),
        (
            ["latency", "-m", "1:4294967296"],
            "-m 1:4294967296: sizes past 2147483647 bytes are not measured",
        ),
        (["bw", "-m", "2147483648:"], "sizes past 2147483647 bytes"),
        (["latency", "-c", "-u", "4294967296"], "-u 4294967296: at most 10"),
    ],
    ids=lambda a: " ".join(a) if isinstance(a, list) else "",
)
def test_counts_past_the_loops_are_refused_before_anything_runs(tmp_path, args, words):
    assert_refused(tmp_path, args, words)


# -- item 4: the memory pre-flight counts every array ------------------------------------------


def test_a_run_past_the_memory_is_refused_naming_it(tmp_path):
    """-i 2147483647 (the most the loops take): 16 GiB of times on every rank and rank 0's
    row: refused up front, naming -i, never numpy's MemoryError halfway."""
    assert_refused(
        tmp_path,
        ["latency", "-i", "2147483647"],
        "per-iteration times of 2147483647 iterations (-i)",
    )
    assert_refused(tmp_path, ["bw", "-W", "1000000000"], "2000000000 requests (-W)")


def peak_kb(np_: int, *args: str) -> list[int]:
    """Every rank's peak resident memory (kB) in a run of commbench with these arguments."""
    code = (
        "import atexit, resource, sys\n"
        "atexit.register(lambda: sys.stderr.write("
        "f'peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n'))\n"
        "from commbench.commands import main\nsys.exit(main())"
    )
    p = subprocess.run(
        [
            MPIEXEC,
            "-n",
            str(np_),
            sys.executable,
            "-c",
            code,
            "run",
            "--suite",
            "osu",
            *args,
            "-o",
            "-",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **ENV},
    )
    assert p.returncode == 0, p.stderr[-2000:]
    return sorted(
        int(line.split()[1]) for line in p.stderr.splitlines() if line.startswith("peak ")
    )


@pytest.mark.parametrize("name", ["latency", "bw", "multi_lat", "iallreduce"])
def test_the_preflight_model_covers_what_the_ranks_hold(name):
    """The per-iteration bytes the pre-flight counts (checks.demand) cover the growth of the
    busiest rank's peak memory from -i 2000 to -i 202000 (-z: the percentiles' sorts too)."""
    args = [name, "-m", "1:1", "-x", "0", "-z"] + (["-W", "1"] if name == "bw" else [])
    low, high = peak_kb(2, *args, "-i", "2000"), peak_kb(2, *args, "-i", "202000")
    grown = (high[-1] - low[-1]) * 1024
    model = need(*args, "-i", "202000") - need(*args, "-i", "2000")
    assert 0 < grown <= model, (name, grown, model)


# -- item 5: OMB's buffer operands ----------------------------------------------------------------

REF = DATA / "ref"


def test_buffer_operands_run_as_ombs_cpu_build_runs_them(tmp_path):
    """osu_latency … D D, osu_bw … H H, osu_allreduce … M D: the CPU build of OMB 7.4 runs them on
    host memory (ref/latency-D-D.txt …); commbench too, with the same table, a line saying where
    the buffers were (OMB's accelerator builds' words) and the operands in the results file."""
    for name, ops, opts in (
        ("latency", "D D", "-m 1:64 -i 100 -x 10"),
        ("bw", "H H", "-m 1:64 -i 20 -x 2"),
        ("allreduce", "M D", "-m 1:64 -i 20 -x 2"),
    ):
        p, res = run_json(tmp_path, 2, "--suite", "osu", name, *opts.split(), *ops.split())
        ref = (REF / f"{name}-{ops.replace(' ', '-')}.txt").read_text()
        assert "Buffer on" not in ref and shape(structure(p.stdout)) == shape(structure(ref)), name
        lines = p.stdout.splitlines()
        at = lines.index("# Send Buffer on HOST (H) and Receive Buffer on HOST (H)")
        assert lines[at - 1] == "# Datatype: MPI_CHAR." and lines[at + 1].startswith("# Size"), (
            lines[at - 2 : at + 2]
        )
        assert f"host memory for the operands {ops}" in lines[-1]
        assert res["config"]["params"]["osu_buffers"] == ops
        assert {(r["extra"]["buffer_operands"], r["extra"]["buffers"]) for r in res["records"]} == {
            (ops, "host")
        }


@pytest.mark.parametrize(
    "args,words",
    [
        (["latency", "D", "D", "D"], "D D D: OMB takes two buffer operands"),
        (["latency", "-d", "cuda", "D", "D"], "-d: accelerator buffers (-d) are not offered"),
        (["latency", "d", "d"], "invalid benchmark name 'd'"),
    ],
    ids=lambda a: " ".join(a) if isinstance(a, list) else "",
)
def test_operands_refused_only_where_they_are_not_omb_operands(tmp_path, args, words):
    assert_refused(tmp_path, args, words)


# -- item 9: refusals that name what fixes them ----------------------------------------------------


def test_the_count_refusal_in_a_run(tmp_path):
    assert_refused(
        tmp_path, ["neighbor_allgather"], "(OSU's rules; accepted: -n 3, the smallest process count"
    )
    p = mpiexec(
        4, "run", "--suite", "osu", "neighbor_allgather", "-N", "cart:2:1", "-o", "-", timeout=120
    )
    assert p.returncode == 2 and "accepted: -n 9," in p.stderr and "-n 2" not in p.stderr, p.stderr


@pytest.mark.parametrize(
    "args,words",
    [
        (
            ["alltoall", "-M", "1000", "-m", "1048576:4194304"],
            (
                "-M 1000: alltoall measures at most 524288 bytes at 2 processes under it (the "
                "limit / P, as OMB 7.4), which leaves no size of -m 1048576:4194304 (accepted: "
                "-M 2097152 or more"
            ),
        ),
        (
            ["alltoall", "-m", "1073741824:1073741824"],
            "-M's default 536870912: alltoall measures at most 268435456",
        ),
        (
            ["allreduce", "-M", "1048576", "-m", "2097152:4194304"],
            (
                "-M 1048576: allreduce measures at most 1048576 bytes at 2 processes under it (the "
                "limit, as OMB 7.4)"
            ),
        ),
        (
            ["iallgather", "-M", "2000000", "-m", "4194304:8388608"],
            "-M 2000000: iallgather measures at most 1000000",
        ),
        (["gather", "-m", "128:64"], "-m 128:64: no message size of gather"),
        (
            ["gather", "-m", "2097152:"],
            "-m 2097152: (up to gather's default 1048576): no message size of gather",
        ),
    ],
    ids=lambda a: " ".join(a) if isinstance(a, list) else "",
)
def test_an_empty_range_names_the_option_that_emptied_it(tmp_path, args, words):
    assert_refused(tmp_path, args, words)


@pytest.mark.parametrize(
    "args,words",
    [
        (
            ["latency_mt", "-t", "128"],
            "-t 128: latency_mt and latency_mp take -t RECV or -t SEND:RECV, each a count",
        ),
        (
            ["latency_mp", "-t", "0:2"],
            "-t 0:2: latency_mt and latency_mp take -t RECV or -t SEND:RECV",
        ),
        (
            ["latency_mt", "-t", "2:"],
            "-t '2:': not a count nor a pair of counts (accepted: -t CALLS for the nonblocking",
        ),
        (["latency_mt", "-t", "2:3:4"], "-t '2:3:4': not a count"),
        (["latency_mt", "-t", ":3"], "-t ':3': not a count"),
        (
            ["iallreduce", "-t", "2:3"],
            "-t 2:3 is a SEND:RECV pair, latency_mt's and latency_mp's form",
        ),
        (["latency_mt", "iallreduce", "-t", "1:1"], "-t 1:1 is a SEND:RECV pair"),
    ],
    ids=lambda a: " ".join(a) if isinstance(a, list) else "",
)
def test_t_refusals_name_the_form_of_the_program(tmp_path, args, words):
    assert_refused(tmp_path, args, words)


def test_the_help_spells_t_as_the_programs_take_it():
    p = subprocess.run(
        [sys.executable, "-m", "commbench", "run", "-h"], capture_output=True, text=True, timeout=60
    )
    assert "-t <CALLS|RECV|SEND:RECV>" in p.stdout and "SEND:[RECV]" not in p.stdout + p.stderr


def test_t_values_the_binaries_take(tmp_path):
    """osu_latency_mt takes 1 … 127 threads a side (-t 128: "Invalid Number of Threads"),
    osu_iallreduce -t 0 (no MPI_Test): so does commbench."""
    assert parse("latency_mt", "-t", "127:127").params["osu_test_calls"] == "127:127"
    _, res = run_json(
        tmp_path, 2, "--suite", "osu", "iallreduce", "-t", "0", "-m", "4:4", "-i", "5", "-x", "1"
    )
    assert res["records"][0]["extra"]["test_calls"] == 0
