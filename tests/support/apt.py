"""Debian packages the tests install themselves (chromium, PostgreSQL, Slurm and munge,
Debian's MPICH and Open MPI): one way for all of them.

`install(packages)` runs `apt-get install -y --no-install-recommends` as root, and where that
fails (no or old package lists: a 404) `apt-get update` and the install once more. It waits
for dpkg's lock when another install holds it (apt-get's own DPkg::Lock::Timeout), and each
set of packages is installed once per session: a second caller, in any thread
(tests/support/ahead.py installs ahead in threads of their own), waits for the first and
gets its result.

Recommends are left out: they are what a desktop wants beside the package (chromium's pull
in avahi-daemon, udev, CUPS helpers and 200-odd packages; slurm-wlm-basic-plugins' every
optional plugin with its -dev package), and none of the tests uses them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading

_done: dict[tuple[str, ...], str | None] = {}
_lock = threading.Lock()  # one apt-get of the tests' at a time: dpkg runs one anyway


def last_line(text: str) -> str:
    """The last non-blank line of a tool's output: what a skip or failure quotes."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else "(no output)"


def _apt_get(*args: str) -> tuple[int, str]:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "-q", "-o", "DPkg::Lock::Timeout=300", *args]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as e:
        return -1, str(e)
    return p.returncode, last_line(p.stderr or p.stdout)


def _install(packages: tuple[str, ...]) -> str | None:
    if not shutil.which("apt-get"):
        return f"{' '.join(packages)}: not installed, and no apt-get on this machine"
    if os.geteuid() != 0:
        return f"{' '.join(packages)}: not installed, and installing them needs root"
    install = ("install", "-y", "--no-install-recommends", *packages)
    rc, why = _apt_get(*install)
    if rc != 0:  # no or old package lists: refresh them and try once more
        urc, uwhy = _apt_get("update")
        rc, why = _apt_get(*install)
        if rc != 0 and urc != 0:
            why += f" (apt-get update: {uwhy})"
    return None if rc == 0 else f"apt-get install {' '.join(packages)} failed: {why}"


def install(packages) -> str | None:
    """None once `packages` are installed, else why they could not be."""
    key = tuple(packages)
    with _lock:
        if key not in _done:
            _done[key] = _install(key)
        return _done[key]
