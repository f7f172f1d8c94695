"""How busy this machine is while a test measures: a spinning probe's share of a core.
The load average cannot tell a quiet machine from a busy one here, because a test's own
ranks raise it; the share one spinning thread gets can (issue 45)."""

from __future__ import annotations

import time

QUIET = 0.85  # a probe that gets less than this of a core: the cores are busy with other work


def cpu_share(seconds: float = 0.5) -> float:
    """The share of a core one spinning thread gets now: ~1 on a quiet machine, ~0.55-0.6
    with two busy loops on 2 cores."""
    wall, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        pass
    return (time.process_time() - cpu) / (time.perf_counter() - wall)


def said(share: float) -> str:
    return f"a spinning probe got {share:.0%} of a core ({'quiet' if share >= QUIET else 'busy'})"
