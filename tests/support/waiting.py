"""Polling a condition until it holds or a time limit passes."""

from __future__ import annotations

import time


def until(cond, timeout: float = 10) -> bool:
    end = time.monotonic() + timeout
    while not cond() and time.monotonic() < end:
        time.sleep(0.02)
    return cond()
