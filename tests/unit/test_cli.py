"""The command line's own mistakes, read by the parser in the pytest process (issue 31 item 9):
an unknown option suggests only what resembles it, an option given twice with two values is
refused. The command line end to end, in real MPI processes, is tests/mpi/test_cli.py."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "arg, meant",
    [
        ("--", None),
        ("---", None),
        ("--a", None),
        ("-+", None),
        ("--qq", None),  # too short to resemble anything
        ("--msglog", "-msglog"),
        ("-msglg", "-msglog"),
        ("--sampels", "--samples"),
        ("--suit", "--suite"),
        ("-iter_polcy", "-iter_policy"),
        ("--per-iter", "--per-iteration"),
        ("-Check", "-check"),
        ("--TIMEOUT", "--timeout"),
    ],
)
def test_unknown_option_suggests_only_what_resembles_it(arg, meant):
    from commbench import run_config, run_options

    with pytest.raises(run_config.ConfigError) as e:
        run_config.parse_run_args([arg, "3"])
    msg = str(e.value)
    assert msg.startswith(f"unknown option {arg!r}")
    if meant is None:
        assert "did you mean" not in msg and "see commbench run -h" in msg, msg
        return
    said = msg.split("did you mean ", 1)[1].rstrip("?)").split(", ")
    assert said[0] == meant, msg
    names = {n for o in run_options.all_options() for n in o.names}
    assert set(said) <= names  # every suggestion is an option that exists


@pytest.mark.parametrize(
    "argv, ok",
    [
        (["-msglog", "3", "-msglog", "5", "PingPong"], False),
        (["--suite", "mpi1", "--suite", "ext"], False),
        (["-n", "2", "--np", "4"], False),
        (["--samples", "3", "--samples=4"], False),
        (["-msglog", "3", "-msglog", "3", "PingPong"], True),
        (["-check", "--check", "PingPong"], True),
    ],
)
def test_an_option_given_twice_with_different_values_is_refused(argv, ok):
    from commbench import run_config

    if ok:
        run_config.parse_run_args(argv)
        return
    with pytest.raises(
        run_config.ConfigError, match="given twice .* one would be silently ignored .accepted: one "
    ):
        run_config.parse_run_args(argv)
