"""--shuffle <seed|random> as the parser and the harness's plan take it, without MPI: the order
is a permutation drawn from the seed, each sweep its own, and random draws a seed that is
recorded. Runs measured in that order are tests/mpi/test_shuffle.py."""

from __future__ import annotations

from commbench import run_config
from commbench.harness.plan import Plan


def _plan(*argv: str) -> Plan:
    return Plan(run_config.parse_run_args(list(argv), world_size=2), 2)


def test_the_order_is_a_permutation_drawn_from_the_seed():
    plan = _plan("PingPong", "Sendrecv", "Exchange", "-msglog", "0:12", "--shuffle", "7")
    bench = plan.benchmarks()[0]
    order = plan.order(bench, 2, "")
    assert sorted(order) == plan.sizes(bench) and order != plan.sizes(bench)
    assert order == _plan(
        "PingPong", "Sendrecv", "Exchange", "-msglog", "0:12", "--shuffle", "7"
    ).order(bench, 2, "")
    assert order != plan.order(bench, 4, "")  # each sweep its own order
    assert order != _plan("PingPong", "-msglog", "0:12", "--shuffle", "8").order(bench, 2, "")
    names = {b.name for b in plan.benchmarks()}
    assert names == {"PingPong", "Sendrecv", "Exchange"}
    imb = _plan("PingPong", "-msglog", "0:12")
    assert imb.order(bench, 2, "") == imb.sizes(bench) and imb.seed is None


def test_random_draws_a_seed_that_is_recorded():
    m = run_config.parse_run_args(["PingPong", "--shuffle", "random"], world_size=2).measuring
    assert m.shuffle == "random" and isinstance(m.shuffle_seed, int) and m.shuffle_seed >= 0
    assert (
        run_config.parse_run_args(
            ["PingPong", "--shuffle", "42"], world_size=2
        ).measuring.shuffle_seed
        == 42
    )
