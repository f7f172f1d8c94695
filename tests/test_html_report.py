"""`commbench report --html` (issue 18 item 3): one self-contained page, checked in a real browser.

Results files come from real short runs (PingPong and Allreduce, sizes 0 … 64,
2 ranks, twice for a comparison). Debian's chromium, headless, loads each page
from the file alone: no console message (the page has no script, so any is an
error), the figures are there as images, and a screenshot is not blank. The
set-up installs chromium with apt-get when it is missing (root); the browser
tests are skipped, saying why, where that is impossible.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.mpirun import FAST, commbench, run_json

RUN = ["PingPong", "Allreduce", "-msglog", "0:6", *FAST]
IMG = re.compile(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"')


def _install_chromium() -> str | None:
    """apt-get install chromium (root); the reason it cannot be had, or None."""
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return "chromium is not installed, and installing it needs root and apt-get"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    why = ""
    for steps in ([["apt-get", "install", "-y", "-q", "chromium"]],
                  [["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "chromium"]]):
        try:
            for cmd in steps:
                p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
                why = (p.stderr or p.stdout)[-300:]
            if shutil.which("chromium"):
                return None
        except (OSError, subprocess.TimeoutExpired) as e:
            why = str(e)
    return f"apt-get install chromium failed: {why.strip()}"


@pytest.fixture(scope="module")
def chromium() -> str:
    if not shutil.which("chromium"):
        why = _install_chromium()
        if why:
            pytest.skip(why)
    return shutil.which("chromium")


def _browser(exe: str, page: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
           "--enable-logging=stderr", "--v=0", *args, page.resolve().as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def _load(exe: str, page: Path) -> str:
    """The page's DOM after loading it; fails on any console message."""
    p = _browser(exe, page, "--dump-dom")
    assert p.returncode == 0, p.stderr[-2000:]
    console = [ln for ln in p.stderr.splitlines() if ":CONSOLE" in ln]
    assert not console, console
    return p.stdout


def _not_blank(exe: str, page: Path, shot: Path, size=(1280, 1800)) -> None:
    from PIL import Image

    p = _browser(exe, page, f"--screenshot={shot}", f"--window-size={size[0]},{size[1]}")
    assert p.returncode == 0 and shot.exists(), p.stderr[-2000:]
    im = Image.open(shot).convert("RGB")
    assert im.size == size
    counts = sorted((c for c, _ in im.getcolors(size[0] * size[1])), reverse=True)
    assert len(counts) > 50  # text, tables, the header, a figure
    assert counts[0] < 0.9 * size[0] * size[1]  # no one colour (a blank page) covers nearly all of it


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("runs")
    (d / "a").mkdir()
    (d / "b").mkdir()
    a = run_json(d / "a", 2, *RUN)[0]
    assert a.returncode == 0
    run_json(d / "b", 2, *RUN)
    return d / "a" / "r2.json", d / "b" / "r2.json"


def _report(out: Path, *files: Path) -> str:
    p = commbench("report", "--html", str(out), *map(str, files), timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert f"written to {out}" in p.stderr
    return out.read_text(encoding="utf-8")


def _self_contained(page: str) -> None:
    assert "<script" not in page.lower() and "<link" not in page.lower() and "@import" not in page
    refs = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert refs and all(r.startswith(("data:", "#")) for r in refs), refs  # nothing fetched


def _figures(page: str) -> list[ET.Element]:
    out = []
    for data in IMG.findall(page):
        svg = ET.fromstring(base64.b64decode(data))
        assert svg.tag.endswith("svg")
        out.append(svg)
    return out


def test_two_runs_in_a_browser(runs, chromium, tmp_path):
    a, b = runs
    page = _report(tmp_path / "report.html", a, b)
    _self_contained(page)
    assert len(_figures(page)) == 2  # one per table: PingPong and Allreduce at 2 processes, both runs in each
    dom = _load(chromium, tmp_path / "report.html")
    assert len(re.findall(r"<img ", dom)) == 2 and len(re.findall(r"<svg", dom)) == 0
    for anchor in ("metadata", "comparison", "plots", "tables", "text"):
        assert f'<section id="{anchor}">' in dom
    # The comparison says what `commbench compare` says.
    cmp = commbench("compare", str(a), str(b), timeout=120)
    assert cmp.returncode == 0
    verdict = cmp.stdout.strip().splitlines()[-1].removeprefix("# ")
    assert "matched rows" in verdict and html.escape(verdict) in page
    matched = int(verdict.split()[0])
    assert len(re.findall(r'<span class="(?:same|faster|slower)">', page)) == matched > 0
    # The metadata: MPI library, hosts, ranks, options, allocation.
    for needle in ("MPICH Version", "MPICH Hydra mpiexec", "buffers: numpy", "PingPong Allreduce -msglog 0:6"):
        assert needle in page
    _not_blank(chromium, tmp_path / "report.html", tmp_path / "report.png")


def test_one_run_page_escapes_what_the_file_says(runs, chromium, tmp_path):
    doc = json.loads(runs[0].read_text())
    evil = '<script>alert("x")</script>'
    doc["metadata"]["cpu_model"] = evil
    doc["notes"] = ['<img src=x onerror="alert(1)"> & more']
    doc["records"][0]["message"] = evil
    doc["records"][0]["status"] = "time-out"
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc))
    page = _report(tmp_path / "one.html", path)
    _self_contained(page)
    assert evil not in page and html.escape(evil) in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; more" in page
    assert 'id="comparison"' not in page  # one run: nothing to compare
    # The fits are those `commbench fit FILE --auto-breakpoints` prints.
    fit = commbench("fit", str(path), "--auto-breakpoints", timeout=120)
    assert fit.returncode == 0
    for block in fit.stdout.strip().split("\n\n"):
        assert html.escape(block) in page
    dom = _load(chromium, tmp_path / "one.html")
    assert "<script" not in dom and len(re.findall(r"<img ", dom)) == 2


@pytest.mark.parametrize("args,needle", [
    (["--html"], "--html needs the page to write"),
    (["--html", "out.txt", "x.json"], "must be an .html file"),
    (["--html", "out.html"], "needs at least one results file"),
    (["--html", "out.html", "missing.json"], "missing.json: cannot read"),
])
def test_bad_arguments_say_what_is_accepted(args, needle, tmp_path):
    p = commbench("report", *args, timeout=60, cwd=tmp_path)
    assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "out.html").exists()
