"""PGAS pairing rules and family options: pure logic, no processes. The random draws
(commbench.suites.pgas.segment, which imports mpi4py.MPI) are tested in tests/mpi/test_pgas.py."""

import pytest

from commbench import run_config
from commbench.suites import pgas


def assert_valid(part: list[int]) -> None:
    n = len(part)
    assert sorted(part) == list(range(n))  # every rank is somebody's partner exactly once
    for i, p in enumerate(part):
        assert p != i and part[p] == i  # symmetric, nobody pairs with itself


@pytest.mark.parametrize("n", range(2, 34, 2))
def test_default_pairs_are_i_and_half_plus_i(n):
    part = pgas.partners(n)
    assert_valid(part)
    assert pgas.pairs(n) == [(i, n // 2 + i) for i in range(n // 2)]


@pytest.mark.parametrize("n", range(2, 42, 2))
def test_offset_rule_every_q(n):
    for q in range(1, n + 2):
        if n % (2 * q):
            with pytest.raises(pgas.PairingError, match=f"--pgas-offset {q} leaves rank"):
                pgas.partners(n, q)
            continue
        part = pgas.partners(n, q)
        assert_valid(part)
        for i, p in enumerate(part):
            # the seed's two clauses
            assert p == (i + q if i % (2 * q) < q else i - q)
        if q == n // 2:
            assert part == pgas.partners(n)  # Q = N/2 is the default pairing


def test_offset_examples():
    assert pgas.pairs(8, 1) == [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert pgas.pairs(8, 2) == [(0, 2), (1, 3), (4, 6), (5, 7)]
    assert pgas.pairs(8, 4) == [(0, 4), (1, 5), (2, 6), (3, 7)]
    assert pgas.pairs(12, 3) == [(0, 3), (1, 4), (2, 5), (6, 9), (7, 10), (8, 11)]
    assert pgas.pairs(4, 1) == [(0, 1), (2, 3)]


def test_invalid_offsets_say_what_is_accepted():
    with pytest.raises(pgas.PairingError) as e:
        pgas.partners(6, 2)
    msg = str(e.value)
    assert "multiple of 2Q = 4" in msg and "accepted for 6 processes: 1, 3" in msg
    with pytest.raises(pgas.PairingError, match="not an even number"):
        pgas.partners(5)
    with pytest.raises(pgas.PairingError, match="must be >= 1"):
        pgas.partners(4, 0)


def parse(*argv, world=None):
    return run_config.parse_run_args(["--suite", "pgas", *argv], world_size=world)


def test_odd_process_count_refused():
    with pytest.raises(
        run_config.ConfigError,
        match=r"family pgas needs an even number of processes \(communicating pairs\), got 3",
    ):
        parse(world=3)
    with pytest.raises(
        run_config.ConfigError, match="needs an even number of processes in every group: -npmin 3"
    ):
        parse("-npmin", "3", world=6)


def test_offset_checked_against_every_group():
    assert parse("--pgas-offset", "2", world=4).params["pgas_offset"] == 2
    with pytest.raises(
        run_config.ConfigError,
        match=(
            r"--pgas-offset 3 leaves rank 1 of 4 processes "
            r"without a partner \(rank 4 does not exist"
        ),
    ):
        parse("--pgas-offset", "3", world=4)
    with pytest.raises(run_config.ConfigError, match="process count 2 of the -npmin sequence"):
        parse("--pgas-offset", "2", "-npmin", "2", world=4)


def test_defaults_recorded_and_reps():
    cfg = parse(world=4)
    assert cfg.params == {
        "pgas_stride": 4,
        "pgas_strided": "target",
        "pgas_sync": "p2p",
        "pgas_seed": 1,
        "pgas_span": 2**20,
    }
    assert cfg.resolved()["params"]["pgas_seed"] == 1
    assert cfg.benchmarks == tuple(b.name for b in pgas.BENCHMARKS)
    from commbench import policy

    assert policy.np_sequence(4, cfg.npmin) == [4]  # all pairs at once
    cfg = parse(
        "--pgas-reps",
        "17",
        "--pgas-seed",
        "99",
        "--pgas-span",
        "64k",
        "--pgas-stride",
        "3",
        world=2,
    )
    assert (cfg.msgspersample, cfg.iter_policy) == (17, "off")
    assert (
        cfg.params["pgas_seed"] == 99
        and cfg.params["pgas_span"] == 65536
        and cfg.params["pgas_stride"] == 3
    )


@pytest.mark.parametrize(
    "argv, msg",
    [
        (["--pgas-stride", "0"], "--pgas-stride must be >= 1"),
        (["--pgas-offset", "x"], "--pgas-offset needs an integer"),
        (["--pgas-strided", "diag"], "--pgas-strided must be one of target|origin|both"),
        (["--pgas-sync", "spin"], "--pgas-sync must be one of p2p|barrier"),
        (["--pgas-span", "lots"], "--pgas-span needs a positive byte count"),
    ],
)
def test_bad_option_values(argv, msg):
    with pytest.raises(run_config.ConfigError, match=msg):
        parse(*argv, world=2)
