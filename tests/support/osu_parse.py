"""The osu family's options parsed as the launcher parses them (parse), and the bytes the
memory pre-flight counts for them (need): tests/unit/test_osu_limits.py (the refusals and the
pre-flight's arithmetic) and tests/mpi/test_osu_limits.py (against real runs) use them."""

from __future__ import annotations

from commbench import run_config
from commbench.suites.osu import checks


def parse(*argv: str, np_: int = 2):
    return run_config.parse_run_args(["--suite", "osu", *argv, "-o", "-"], world_size=np_)


def need(*argv: str, p: int = 2) -> int:
    return checks.memory(parse(*argv, np_=p).params, p)[0]
