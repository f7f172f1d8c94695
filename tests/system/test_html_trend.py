"""`commbench report --html OUT --trend STORE[:SELECTOR] [FILE ...]`: stored rows over time on
the HTML page, with their baseline bands, the flagged runs and the runs that changed options.

The store is made for real: three short PingPong runs (2 ranks) stored by `commbench run
--store`, the middle one with --methodology imb2021 (a setting that changes the numbers, so
the runs after it and it itself are marked as changes). The machine's timings are too noisy
to count on a flag, so a second system, "lab", gets five copies of the first run's file with
their times scaled by 1.00, 1.02, 0.98, 1.01 and 3 and later dates, kept by `commbench store
add --system lab`: its fifth run is 3 times slower than a tight baseline, flagged on every
row. The pages are read as text and as SVG, and loaded by the headless Chromium of
tests/system/test_html_report.py (skipped, saying why, where it cannot be had).
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from commbench.store import selector, trend
from commbench.store.db import Store
from commbench.views import html_trend
from tests.support.mpirun import commbench
from tests.system.test_html_report import (
    IMG,
    _laid_out,
    _load,
    _not_blank,
    _self_contained,
    chromium,
)

pytestmark = pytest.mark.needs("chromium")

RUN = ["PingPong", "-msglog", "0:3", "-iter", "50", "-time", "10", "--samples", "3"]
__all__ = ["chromium"]  # a fixture of tests/system/test_html_report.py, used here
LAB = (
    0.999,
    1.02,
    0.98,
    1.01,
    3.0,
)  # the lab copies' time factors: the last one is slower; none 1.0
# exactly (a copy with the same records as its run is that run: the store keeps it once)


def _scaled(src: Path, out: Path, factor: float, date: str) -> Path:
    """A copy of a results file with every time scaled by factor and another date."""
    doc = json.loads(src.read_text())
    doc["metadata"]["date"] = date
    for r in doc["records"]:
        r["values"] = {
            k: v * factor if k.startswith("t") and isinstance(v, float) else v
            for k, v in r["values"].items()
        }
        samples = (r.get("extra") or {}).get("samples") or {}
        for k, v in samples.items():
            if k.startswith("t_max") and isinstance(v, list):
                samples[k] = [x * factor for x in v]
            elif k.startswith("t_max") and isinstance(v, float):
                samples[k] = v * factor
    out.write_text(json.dumps(doc))
    return out


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> tuple[Path, Path]:
    """(the store, the first run's results file)."""
    d = tmp_path_factory.mktemp("trend")
    db = d / "results.db"
    for i, extra in enumerate(([], ["--methodology", "imb2021"], [])):
        out = d / f"r{i}.json"
        p = commbench("run", "-n", "2", *RUN, *extra, "-o", str(out), f"--store={db}",
                      "--tag", "nightly", timeout=300)  # fmt: skip
        assert p.returncode == 0, p.stderr[-3000:]
    lab = [
        _scaled(d / "r0.json", d / f"lab{k}.json", f, f"2026-12-0{k + 1}T06:00:00+00:00")
        for k, f in enumerate(LAB)
    ]
    p = commbench("store", "add", *map(str, lab), "--system", "lab", "--store", str(db))
    assert p.returncode == 0, p.stderr[-3000:]
    return db, d / "r0.json"


@pytest.fixture(scope="module")
def page(store) -> tuple[Path, str]:
    db, _ = store
    out = db.parent / "trend.html"
    p = commbench("report", "--html", str(out), "--trend", f"{db}:benchmark=PingPong")
    assert p.returncode == 0, p.stderr[-3000:]
    assert f"the trend of 8 stored runs written to {out}" in p.stderr
    return out, out.read_text(encoding="utf-8")


def _section(page: str, anchor: str) -> str:
    m = re.search(rf'<section id="{anchor}">(.*?)</section>', page, re.S)
    assert m, anchor
    return m.group(1)


def _svgs(text: str) -> list[str]:
    return [base64.b64decode(data).decode("utf-8") for data in IMG.findall(text)]


def _table(text: str, caption: str) -> list[list[str]]:
    m = re.search(rf"<caption>{caption}.*?</caption>(.*?)</table>", text, re.S)
    assert m, caption
    return [
        [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
        for tr in re.findall(r"<tr>(.*?)</tr>", m.group(1), re.S)
    ][1:]  # the heading's row


def test_the_page_draws_values_bands_flags_and_changes(page):
    _, text = page
    _self_contained(text)
    assert re.findall(r'<section id="([^"]+)"', text) == ["trend"]  # no file: the trend alone
    trend_ = _section(text, "trend")
    titles = re.findall(r"<h3>(.*?)</h3>", trend_)
    assert sorted(titles) == ["PingPong np=2 [lab]", "PingPong np=2 [vm]"], titles
    figures = dict(zip(titles, _svgs(trend_)))
    assert len(figures) == 2
    lab, vm = figures["PingPong np=2 [lab]"], figures["PingPong np=2 [vm]"]
    # vm: the imb2021 run (2) and the run after it (3) changed options, drawn and labelled
    for run_id in (2, 3):
        assert f'id="change-{run_id}-0"' in vm and f"<!-- run {run_id}: methodology -->" in vm
    assert 'id="slower-0"' not in vm
    # lab: bands from its tight baseline, its 5th run (8) flagged slower in every panel
    sizes = ["0 B", "1 B", "2 B", "4 B", "8 B"]
    assert all(f"<!-- {s} -->" in lab for s in sizes)
    assert all(f'id="band-{k}"' in lab and f'id="slower-{k}"' in lab for k in range(5))
    assert "change-" not in lab and 'id="faster-' not in lab
    changed = _table(trend_, "Runs that changed")
    assert [r[0] for r in changed] == ["2", "3"], changed
    assert all("methodology (--methodology) differs" in r[-1] for r in changed)
    flagged = _table(trend_, "Flagged points")
    assert len(flagged) == 5 and {r[2] for r in flagged} == {"8"}, flagged
    assert {r[0] for r in flagged} == {f"PingPong np=2 bytes={b}" for b in (0, 1, 2, 4, 8)}
    assert all(r[1] == "lab" and r[-1] == "slower" and float(r[-3]) > 2.5 for r in flagged)
    assert "Left out of the figures" not in trend_  # 2 tables of 5 sizes: all drawn


def test_the_page_in_a_browser(page, chromium):
    out, _ = page
    dom = _load(chromium, out)
    assert dom.count('<img src="data:image/svg+xml;base64,') == 2
    _laid_out(chromium, out)  # nothing beyond the right edge at 1280 px, no bare nan
    _not_blank(chromium, out, out.with_suffix(".png"))


def test_files_and_the_trend_on_one_page(store, chromium, tmp_path):
    db, r0 = store
    out = tmp_path / "both.html"
    p = commbench("report", "--html", str(out), str(r0), f"--trend={db}:system=lab")
    assert p.returncode == 0, p.stderr[-3000:]
    assert "report of 1 results file and the trend of 5 stored runs" in p.stderr
    text = out.read_text(encoding="utf-8")
    sections = re.findall(r'<section id="([^"]+)"', text)
    assert sections[:2] == ["metadata", "trend"] and "plots" in sections, sections
    assert "r0.json, trend of " in text
    assert re.findall(r"<h3>(.*?)</h3>", _section(text, "trend")) == ["PingPong np=2"]
    _load(chromium, out)


def test_what_the_figures_leave_out_is_said(store, monkeypatch):
    db, _ = store
    with Store.open(str(db)) as s:
        data = trend.compute(s, selector.parse(None))
    monkeypatch.setattr(html_trend, "MAX_FIGURES", 1)
    monkeypatch.setattr(html_trend, "MAX_PANELS", 2)
    monkeypatch.setattr(html_trend, "MAX_RUNS", 6)
    text = html_trend.section(data)
    assert re.findall(r"<h3>(.*?)</h3>", text) == ["PingPong np=2 [lab]"]  # the flagged one
    assert "1 of 2 tables are not drawn (PingPong np=2 [vm])" in text
    assert "show only some of their sizes" in text and "PingPong np=2 [lab]: 2 of 5" in text
    assert "the latest 6 runs; 2 older runs are left out" in text
    assert "benchmark=NAME" in text and "last=N" in text
    assert len(_table(text, "Flagged points")) == 5  # the table keeps every flagged point


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--html", "out.html", "--trend", "{d}/missing.db"], "missing.db: no such store"),
        (["--html", "out.html", "--trend", "{db}:benchmark=Nope"], "no run that matches"),
        (["--html", "out.html", "--trend", "{db}:colour=red"], "selector key 'colour'"),
        (["--html", "out.html", "--trend", "{d}/r0.json"], "not an SQLite database"),
        (["--html", "out.html", "--trend"], "--trend needs STORE[:SELECTOR]"),
        (["--trend", "{db}"], "it needs --html OUT.html"),
    ],
    ids=["missing", "no-match", "bad-selector", "not-a-store", "no-store", "no-html"],
)
def test_bad_trends_are_refused_with_no_page(args, needle, store, tmp_path):
    db, r0 = store
    args = [a.format(d=r0.parent, db=db) for a in args]
    p = commbench("report", *args, timeout=60, cwd=tmp_path)
    assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert not (tmp_path / "out.html").exists()
