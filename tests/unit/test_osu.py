"""The osu family's names and counts without MPI: its programs need the suite (IMB's bare names
stay IMB's), OSU's iteration counts and its percentile rule, read off the binaries. latency, bw
and bibw in real MPI processes are tests/mpi/test_osu.py."""

from __future__ import annotations

import pytest

from commbench import run_config, suites
from commbench.suites.osu.spec import Defaults, percentile


def test_names_need_the_suite_and_imb_bare_names_stay():
    assert [b.name for b in suites.family("osu").benchmarks][:3] == ["latency", "bw", "bibw"]
    assert suites.canonical_family("OMB") == "osu"
    for name, fam in (
        ("barrier", "mpi1"),
        ("PingPong", "mpi1"),
        ("Ibarrier", "nbc"),
        ("allreduce", "mpi1"),
    ):
        assert run_config.parse_run_args([name, "-o", "-"]).family == fam, name
    with pytest.raises(run_config.ConfigError, match="belongs to family osu"):
        run_config.parse_run_args(["latency", "-o", "-"])
    with pytest.raises(run_config.ConfigError, match="-m is an option of the osu family"):
        run_config.parse_run_args(["PingPong", "-m", "16", "-o", "-"])
    for argv in (
        ["--suite", "osu", "latency", "-m", "1:16", "-i", "5"],
        ["latency", "-m", "1:16", "--suite", "omb"],
    ):
        cfg = run_config.parse_run_args([*argv, "-n", "2", "-o", "-"])
        assert (cfg.family, cfg.benchmarks, cfg.params["osu_message_size"]) == (
            "osu",
            ("latency",),
            (1, 16),
        )


def test_osus_counts_and_percentile_rule():
    """Read off the binaries (tests/data/osu/README.md): -i/-x set every size's counts,
    else small/large (> 8192 bytes); the tail value is sorted[floor(p n / 100) - 1]."""
    lat = Defaults()
    assert lat.counts(8192, None, None) == (10000, 100) and lat.counts(8193, None, None) == (
        1000,
        10,
    )
    assert lat.counts(16384, 50, None) == (50, 10) and lat.counts(16384, None, 5) == (1000, 5)
    xs = [float(v) for v in range(10, 0, -1)]
    assert [percentile(xs, p) for p in (10, 20, 25, 30, 40, 50, 90, 99)] == [1, 2, 2, 3, 4, 5, 9, 9]
