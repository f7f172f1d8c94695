"""IMB 4.0's and IMB 2021's methodologies (commbench.imb_methodology) as the parser and the
harness's plan take them, without MPI: the profiles and their overrides, the values refused,
-aggregate_mode only where a family has the modes, and the window sections of each
methodology. The methodologies in real MPI runs are tests/mpi/test_methodology.py."""

from __future__ import annotations

import pytest

from commbench import imb_methodology, run_config
from commbench.option_types import ConfigError


def test_profiles_and_overrides():
    cfg = run_config.parse_run_args(["PingPong"])
    assert cfg.method == imb_methodology.PROFILES["imb4"]
    assert (cfg.method.sync, cfg.method.root_shift, cfg.method.any_source) == (0, 1, True)
    cfg = run_config.parse_run_args(
        ["--methodology", "imb2021", "-root_shift", "on", "-sync", "no"]
    )
    assert (cfg.method.name, cfg.method.sync, cfg.method.root_shift, cfg.method.any_source) == (
        "imb2021",
        0,
        1,
        False,
    )
    assert cfg.resolved()["methodology"]["warmup_each_size"] is True
    assert run_config.parse_run_args(["-warm_up", "disable"]).method.warmup is False
    assert imb_methodology.Methodology.from_dict(None) == imb_methodology.PROFILES["imb4"]


@pytest.mark.parametrize(
    "argv, words",
    [
        (["-sync", "maybe"], "-sync: 'maybe' is neither on nor off"),
        (["--methodology", "imb3"], "--methodology must be one of imb4|imb2021"),
        (["--suite", "ext", "-root_shift", "on"], "-root_shift: the ext family has no collectives"),
        (
            ["--suite", "msgrate", "--methodology", "imb2021"],
            "--methodology: the msgrate family does not use it",
        ),
    ],
)
def test_bad_values_are_refused(argv, words):
    with pytest.raises(ConfigError) as e:
        run_config.parse_run_args(argv)
    assert words in str(e.value)


def test_aggregate_mode_refused_without_modes():
    with pytest.raises(
        ConfigError, match="-aggregate_mode: the mpi1 family has no AGGREGATE/NON-AGGREGATE modes"
    ):
        run_config.parse_run_args(["-aggregate_mode", "aggregate"])
    with pytest.raises(
        ConfigError, match="-aggregate_mode must be one of multi|aggregate|non_aggregate"
    ):
        run_config.parse_run_args(["--suite", "ext", "-aggregate_mode", "both"])


@pytest.mark.parametrize(
    "argv, slots",
    [([], 200), (["--methodology", "imb2021"], 1), (["--methodology", "imb2021", "-check"], 200)],
)
def test_window_sections_follow_the_methodology(argv, slots):
    """imb4: aggregate transfers to n0 disjoint sections (spec §6.3, A2); imb2021: one section,
    as IMB 2021.11's C code without -off_cache (its rows from 64 KiB read 1.2-1.8x IMB's with
    n0 sections); -check keeps them disjoint (thousands of float sums in one section round)."""
    from commbench.harness.plan import Plan

    cfg = run_config.parse_run_args(
        ["--suite", "rma", "Unidir_put", "Accumulate", *argv], world_size=2
    )
    plan = Plan(cfg, 2)
    for b in plan.benchmarks():
        assert plan.buffers(b, 65536, 2, 200).slots == slots, b.name
