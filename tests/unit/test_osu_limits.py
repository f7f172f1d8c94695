"""The osu family's limits and extras without MPI (issue 31, items 4, 5 and 9), as the parser
and the memory pre-flight take them:

- counts: -i, -x, -W and -p past a C int are refused, never wrapped, and every integer option
  of the family has the bound; P blocks whose displacements pass a C int are refused;
- the memory pre-flight counts every array: per-iteration times, -W's requests and windows,
  P blocks, -c's data;
- OMB's buffer operands (`latency D D`) taken wherever the names stand, by the osu family only;
- a process count refusal names the process count that runs.

The same against real runs (the calls made, the ranks' peak memory, the refusals' exit
status) is tests/mpi/test_osu_limits.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from commbench import run_config, suites
from commbench.option_types import ConfigError
from commbench.suites.osu import checks
from commbench.suites.osu.settings import OPTIONS, OsuSettings
from tests.support.osu_parse import need, parse

DATA = Path(__file__).parents[1] / "data" / "osu"
INT_MAX = 2**31 - 1
NAMES = [b.name for b in suites.family("osu").benchmarks]


# -- item 4: counts past what the loops take ---------------------------------------------------

OVER = ["2147483648", "4294967296", "4294967297", "9223372036854775808"]
COUNTS = [("latency", "-i"), ("latency", "-x"), ("bw", "-W"), ("mbw_mr", "-p")]


@pytest.mark.parametrize("name,opt", COUNTS)
def test_counts_past_a_c_int_are_refused_at_most_int_max_taken(name, opt):
    for v in OVER:
        with pytest.raises(
            ConfigError,
            match=rf"{opt} {v}: at most 2147483647 .* \(accepted: {opt} \d … {opt} "
            "2147483647\\)",
        ):
            parse(name, opt, v)
    if opt != "-p":  # -p's own limit is the pairs the processes make (P / 2)
        dest = next(o.dest for o in OPTIONS if o.names == (opt,))
        assert parse(name, opt, str(INT_MAX)).params[dest] == INT_MAX


def test_every_count_option_has_the_limit():
    """No integer option of the family is left without the bound (-M is a size, not a count)."""
    for o in OPTIONS:
        if (
            o.parse is None
            or o.names[0] in ("-m", "-z", "-c", "-T", "-w", "-s", "-N", "-M")
            or "not_" in o.dest
        ):
            continue
        with pytest.raises(ConfigError):
            o.parse(str(INT_MAX + 1))


def test_p_blocks_displacements_past_a_c_int_are_refused():
    with pytest.raises(
        ConfigError,
        match="alltoallv at 1073741824 bytes and 4 processes: its 4 blocks' "
        "displacements reach 3221225472 bytes",
    ):
        parse("alltoallv", "-m", "1073741824:1073741824", "-M", "99999999999", np_=4)
    assert parse(
        "alltoallv", "-m", "536870912:536870912", "-M", "99999999999", np_=4
    ).benchmarks == ("alltoallv",)


# -- item 4: the memory pre-flight counts every array ------------------------------------------


def test_the_preflight_counts_times_requests_windows_blocks_and_checks():
    base = need("latency", "-m", "1:1", "-i", "1000")
    assert need("latency", "-m", "1:1", "-i", "1001000") - base >= 10**6 * (
        checks.TIME + checks.ROW
    )
    # every rank's times gathered to rank 0 (collectives): P values an iteration
    assert need("allreduce", "-m", "1:1", "-i", "1001000", p=4) - need(
        "allreduce", "-m", "1:1", "-i", "1000", p=4
    ) >= 10**6 * 4 * (checks.ROW + checks.GATHER)
    # -W: bw's requests; put_bw's window and origin buffer of -W sizes
    assert (
        need("bw", "-m", "1:1", "-W", "1000064") - need("bw", "-m", "1:1")
        >= 2 * 10**6 * checks.REQUEST
    )
    assert need("put_bw", "-m", "1048576:1048576", "-W", "1064") - need(
        "put_bw", "-m", "1048576:1048576"
    ) >= (2 * 1000 * 1048576)
    # P blocks: alltoall's send and receive buffers hold P blocks each
    assert need("alltoall", "-m", "1048576:1048576", "-i", "1", p=8) >= 16 * 1048576
    # -c's patterns and expected data
    assert (
        need("bw", "-m", "4194304:4194304", "-c") - need("bw", "-m", "4194304:4194304")
        >= 2 * 4194304
    )


# -- item 5: OMB's buffer operands ----------------------------------------------------------------


@pytest.mark.parametrize("ops", ["D D", "H H", "M M", "H D", "D M", "D"])
def test_every_program_takes_the_operands_wherever_the_names_stand(ops):
    for name in NAMES:
        for argv in ([name, *ops.split()], [*ops.split(), name]):
            cfg = parse(*argv, np_=4 if "neighbor" in name else 2)
            assert (cfg.benchmarks, cfg.params["osu_buffers"]) == ((name,), ops), argv
    cfg = parse("latency", "D", "bw", "D")
    assert (cfg.benchmarks, cfg.params["osu_buffers"]) == (("latency", "bw"), "D D")
    assert "osu_buffers" not in parse("latency").params


def test_other_families_take_no_operands():
    with pytest.raises(ConfigError, match="invalid benchmark name 'D' in family mpi1"):
        run_config.parse_run_args(["PingPong", "D", "D", "-o", "-"])


# -- item 9: refusals that name what fixes them ----------------------------------------------------


@pytest.mark.parametrize(
    "argv,np_,count",
    [
        (["neighbor_allgather"], 2, 3),
        (["neighbor_allgather", "-N", "cart:2:1"], 4, 9),
        (["ineighbor_alltoallv", "-N", "cart:1:2"], 4, 5),
        (["neighbor_alltoall", "-N", "cart:3:1"], 8, 27),
        (["neighbor_allgather", "-N", f"graph:{DATA / 'graph3.txt'}"], 2, 3),
        (["latency"], 3, 2),
        (["latency", "bw", "multi_lat"], 3, 2),
        (["mbw_mr", "neighbor_allgather"], 1, 2),
    ],
)
def test_a_count_refusal_names_a_count_that_runs(argv, np_, count):
    s = OsuSettings.of(run_config.parse_run_args(["--suite", "osu", *argv, "-o", "-"]).params)
    benches = [suites.family("osu").get(n) for n in argv if suites.family("osu").get(n)]
    assert checks.suggest(benches, s, np_).startswith(f"-n {count},"), argv
    if np_ > 1 and all(b.nprocs(np_) or (b.fits and b.fits(s, np_)) for b in benches):
        with pytest.raises(ConfigError, match=f"accepted: -n {count}, the smallest process count"):
            parse(*argv, np_=np_)
