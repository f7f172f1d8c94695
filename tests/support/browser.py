"""Debian's chromium, headless, for the tests that open commbench's HTML pages
(tests/system/test_html_report.py and the pages that reuse its helpers)."""

from __future__ import annotations

import shutil

from tests.support import apt
from tests.support.once import once


@once
def install() -> str | None:
    """Chromium's path is then shutil.which("chromium"): None when it is there (installed now
    with apt-get, as root, when it was missing), else why it cannot be had."""
    if shutil.which("chromium"):
        return None
    why = apt.install(["chromium"])
    if why is None and not shutil.which("chromium"):
        why = "apt-get install chromium left no chromium on PATH"
    return why
