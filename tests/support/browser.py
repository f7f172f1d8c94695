"""Debian's chromium, headless, for the tests that open commbench's HTML pages
(tests/system/test_html_report.py and the pages that reuse its helpers)."""

from __future__ import annotations

import os
import shutil
import subprocess

from tests.support.once import once


@once
def install() -> str | None:
    """Chromium's path is then shutil.which("chromium"): None when it is there (installed now
    with apt-get, as root, when it was missing), else why it cannot be had."""
    if shutil.which("chromium"):
        return None
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return "chromium is not installed, and installing it needs root and apt-get"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    apt = ["apt-get", "-q", "-o", "DPkg::Lock::Timeout=300"]  # another install: wait for it
    why = ""
    for steps in (
        [[*apt, "install", "-y", "chromium"]],
        [[*apt, "update"], [*apt, "install", "-y", "chromium"]],
    ):
        try:
            for cmd in steps:
                p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
                why = (p.stderr or p.stdout)[-300:]
            if shutil.which("chromium"):
                return None
        except (OSError, subprocess.TimeoutExpired) as e:
            why = str(e)
    return f"apt-get install chromium failed: {why.strip()}"
