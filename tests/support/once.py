"""once: an installer run once per session, whichever thread asks first (tests/support/ahead.py
starts the system tier's installs in threads of their own; the test that needs one asks too)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable


def once(fn: Callable) -> Callable:
    """fn run once per session and for every thread: a caller while it runs waits for it,
    later callers get its result (or its exception) again."""
    lock = threading.Lock()
    done: list[tuple[bool, object]] = []

    @functools.wraps(fn)
    def wrapper():
        with lock:
            if not done:
                try:
                    done.append((True, fn()))
                except Exception as e:  # noqa: BLE001 - given to every caller alike
                    done.append((False, e))
        ok, value = done[0]
        if not ok:
            raise value  # type: ignore[misc]
        return value

    return wrapper
