"""`commbench report --html` (issue 18 item 3): one self-contained page, checked in a real browser.

Results files come from real short runs (PingPong and Allreduce, sizes 0 … 64,
2 ranks, twice for a comparison). Debian's chromium, headless, loads each page
from the file alone: no console message (the page has no script, so any is an
error), the figures are there as images, and a screenshot is not blank. The
set-up installs chromium with apt-get when it is missing (root); the browser
tests are skipped, saying why, where that is impossible.

The page at the edges (issue 31 item 10): long names, imported runs, numbers
beyond the range of floats and up to 50 runs, each laid out by Chromium at
1280 px (_laid_out): nothing beyond the page's right edge, no bare nan, inf or
"?" in a cell.
"""

from __future__ import annotations

import base64
import html
import json
import math
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support import browser
from tests.support.mpirun import FAST, commbench, run_json

pytestmark = pytest.mark.needs("chromium")

RUN = ["PingPong", "Allreduce", "-msglog", "0:6", *FAST]
IMG = re.compile(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"')


@pytest.fixture(scope="module")
def chromium() -> str:
    why = browser.install()
    if why:
        pytest.skip(why)
    return shutil.which("chromium")


def _browser(exe: str, page: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [
        exe,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--enable-logging=stderr",
        "--v=0",
        *args,
        page.resolve().as_uri(),
    ]
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
    assert (
        counts[0] < 0.9 * size[0] * size[1]
    )  # no one colour (a blank page) covers nearly all of it


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
    assert (
        len(_figures(page)) == 2
    )  # one per table: PingPong and Allreduce at 2 processes, both runs in each
    dom = _load(chromium, tmp_path / "report.html")
    assert len(re.findall(r"<img ", dom)) == 2 and len(re.findall(r"<svg", dom)) == 0
    for anchor in ("metadata", "comparison", "plots", "tables", "text"):
        assert f'<section id="{anchor}">' in dom
    # The comparison says what `commbench compare` says.
    cmp = commbench("compare", str(a), str(b), timeout=120)
    assert (
        cmp.returncode == 2 and "# REFUSED [nothing-tested]" in cmp.stdout
    )  # runs without --samples
    verdict = cmp.stdout.strip().splitlines()[-1].removeprefix("# ")
    assert "matched rows" in verdict and html.escape(verdict) in page
    matched = int(verdict.split()[0])
    assert len(re.findall(r'<span class="(?:same|faster|slower)">', page)) == matched > 0
    # The metadata: MPI library, hosts, ranks, options, allocation.
    for needle in (
        "MPICH Version",
        "MPICH Hydra mpiexec",
        "buffers: numpy",
        "PingPong Allreduce -msglog 0:6",
    ):
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
    dom = _load(chromium, tmp_path / "one.html")
    assert "<script" not in dom and len(re.findall(r"<img ", dom)) == 2
    # The fits are those `commbench fit FILE --auto-breakpoints` prints, an unbounded end of
    # an interval said in a word ("inf" in the text).
    fit = commbench("fit", str(path), "--auto-breakpoints", timeout=120)
    assert fit.returncode == 0
    cells = [c["text"] for c in _laid_out(chromium, tmp_path / "one.html")["cells"]]
    rows = [
        ln.split(None, 3)[1:]
        for ln in fit.stdout.splitlines()
        if re.match(r"#   \d+\.\.\d+ \(\d+\)", ln)
    ]
    assert rows
    for sizes, points, rest in rows:
        found = [
            cells[i : i + 8]
            for i in range(len(cells))
            if cells[i] == sizes and cells[i + 1] == points[1:-1]
        ]
        ests = re.findall(r"(\S+) \[(\S+), (\S+)\]", rest)
        want = [f"{_word(v)}[{_word(lo, True)}, {_word(hi, True)}]" for v, lo, hi in ests]
        assert any(row[2 : 2 + len(want)] == want for row in found), (sizes, want, found)


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--html"], "--html needs OUT.html"),
        (["--html", "out.txt", "x.json"], "must be an .html file"),
        (["--html", "out.html"], "needs at least one results file"),
        (["--html", "out.html", "missing.json"], "missing.json: cannot read"),
    ],
)
def test_bad_arguments_say_what_is_accepted(args, needle, tmp_path):
    p = commbench("report", *args, timeout=60, cwd=tmp_path)
    assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "out.html").exists()


# --------------------------------------------------------- the page at the edges (issue 31 item 10)
# Each page is laid out by Chromium at 1280 px with every <details> open, and a
# script in a copy of it reports where every element and cell lies: nothing may
# reach beyond the page's right edge (no column pushed off by a long name, a
# long number or many runs), and no cell may show a bare NaN or inf or a "?".

GEOMETRY = """(function () {
  for (const d of document.querySelectorAll("details")) d.open = true;
  const W = document.documentElement.clientWidth, out = {width: W, scroll: document.documentElement.scrollWidth,
    over: [], cells: [], tables: []};
  const box = (el) => el.getBoundingClientRect();
  for (const el of document.body.querySelectorAll("*")) {
    const r = box(el);
    if ((el.closest("pre") && el.tagName !== "PRE") || (r.width === 0 && r.height === 0)) continue;
    if (r.right > W + 0.5 || r.left < -0.5) out.over.push([el.tagName, r.right, el.textContent.slice(0, 80)]);
  }
  for (const t of document.querySelectorAll("table"))
    out.tables.push({cls: t.className, caption: t.caption ? t.caption.textContent : "", rows: t.rows.length,
      cols: Math.max(...[...t.rows].map((row) => [...row.cells].reduce((n, c) => n + c.colSpan, 0)))});
  for (const c of document.querySelectorAll("td, th"))
    out.cells.push({meta: c.closest("table").className, width: box(c).width, text: c.textContent.trim()});
  const pre = document.createElement("pre");
  pre.id = "geometry";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();"""  # noqa: E501
BARE = re.compile(r"(?<![\w.])[-+]?(nan|inf|infinity)(?![\w.])|\?", re.I)
IMPORT = Path(__file__).parents[1] / "data" / "import"


def _word(token: str, end: bool = False) -> str:
    """How the page shows a number `commbench fit` prints as inf or n/a."""
    return {
        "n/a": "\u2013",
        "inf": "unbounded",
        "-inf": "unbounded" if end else "\u2212unbounded",
    }.get(token, token)


def _laid_out(exe: str, page: Path, width: int = 1280) -> dict:
    """Where everything of the page lies at width px; fails on anything beyond the right
    edge, a page wider than the window, a bare NaN, inf or "?" in a cell, a word for a
    missing or non-finite number without a title saying why."""
    probe = page.with_name(page.stem + ".probe.html")
    text = page.read_text(encoding="utf-8")
    probe.write_text(
        text.replace("</body>", f"<script>{GEOMETRY}</script></body>"), encoding="utf-8"
    )
    p = _browser(exe, probe, "--dump-dom", f"--window-size={width},900")
    m = re.search(r'<pre id="geometry">(.*?)</pre>', p.stdout, re.S)
    assert p.returncode == 0 and m, p.stderr[-2000:]
    g = json.loads(html.unescape(m.group(1)))
    assert g["width"] == width and g["scroll"] <= width, (g["width"], g["scroll"])
    assert not g["over"], g["over"][:8]
    assert not [c for c in g["cells"] if BARE.search(c["text"])], [
        c for c in g["cells"] if BARE.search(c["text"])
    ][:8]
    spans = re.findall(r'<span class="(?:nf|na)"([^>]*)>', text)
    assert all(re.fullmatch(r' title="[^"]{20,}"', a) for a in spans), spans[:5]
    assert all(t["cols"] <= 7 for t in g["tables"] if t["cls"] == "meta"), g["tables"]
    return g


def _edited(src: Path, out: Path, edit) -> Path:
    doc = json.loads(src.read_text())
    edit(doc)
    out.write_text(json.dumps(doc))
    return out


def _rename(old: str, new: str):
    def edit(doc):
        doc["config"]["benchmarks"] = [new if b == old else b for b in doc["config"]["benchmarks"]]
        for r in doc["records"]:
            r["benchmark"] = new if r["benchmark"] == old else r["benchmark"]

    return edit


def _mode(mode: str):
    def edit(doc):
        for r in doc["records"]:
            r["mode"] = mode if r["benchmark"] == "PingPong" else r["mode"]

    return edit


def _host(host: str):
    def edit(doc):
        meta = doc["metadata"]
        meta["ranks_per_host"] = {host: 2}
        meta["hosts"], meta["cpu_model"], meta["launcher"] = [host], host, host

    return edit


LONG = "W" * 100  # the widest letter, nowhere to break


@pytest.mark.parametrize(
    "name,edit",
    [
        ("benchmark", _rename("PingPong", LONG)),
        ("words", _rename("Allreduce", "Allreduce_" + "with_a_long_descriptive_suffix_" * 3)),
        ("mode", _mode("M" * 100)),
        ("host", _host("node-" + "x" * 95)),
        ("file", lambda doc: None),
    ],
)
def test_long_names_keep_every_column_on_the_page(name, edit, runs, chromium, tmp_path):
    a, b = runs
    stem = "r" * 100 if name == "file" else name
    old = _edited(a, tmp_path / f"{stem}-old.json", edit)
    new = _edited(b, tmp_path / f"{stem}-new.json", edit)
    page = _report(tmp_path / "long.html", old, new)
    g = _laid_out(chromium, tmp_path / "long.html")
    cells = [c["text"] for c in g["cells"]]
    assert (
        re.search(r"\d+ matched rows", page) and "(every row)" in page
    )  # the long-named rows compared
    long = {"benchmark": LONG, "mode": "M" * 100, "host": "node-" + "x" * 95, "file": stem}.get(
        name
    )
    if long:
        assert any(long in c for c in cells)  # whole in its cell, which stays on the page
    assert (
        sum(1 for c in cells if re.fullmatch(r"\d+\.\d\d", c)) > 20
    )  # the numeric columns are there


def _import(log: Path, out: Path) -> Path:
    p = commbench("import", str(log), "-o", str(out), timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    return out


def _section(page: str, anchor: str) -> str:
    return page.split(f'<section id="{anchor}">')[1].split("</section>")[0]


def _meta_row(page: str, label: str) -> list[str]:
    row = re.search(rf"<tr><th>{re.escape(label)}</th>(.*?)</tr>", _section(page, "metadata"))
    return re.findall(r"<td>(.*?)</td>", row.group(1)) if row else []


@pytest.mark.parametrize(
    "log,tool",
    [
        ("imb-mpi1-pingpong-np2.txt", "IMB-MPI1"),
        ("osu_latency.txt", "osu_latency"),
        ("osu_bw.txt", "osu_bw"),
        ("nccl_all_reduce_perf.json", "all_reduce_perf"),
    ],
)
def test_imported_runs_say_what_their_logs_do_not_record(log, tool, runs, chromium, tmp_path):
    imp = _import(IMPORT / log, tmp_path / "imported.json")
    page = _report(tmp_path / "one.html", imp)
    meta = _section(page, "metadata")
    for fake in ("?", "--samples", "mpi4py", "buffers:", "none set", "-mem", "unknown"):
        assert fake not in re.sub(r"<[^>]+>", "", meta), fake  # nothing the log did not say
    assert (
        "imported by commbench" in _meta_row(page, "made by")[0]
        and tool in _meta_row(page, "made by")[0]
    )
    assert "Not recorded in this file: " in meta and f"imported from {tool}" in meta
    assert "family are its own" not in page and f"Imported from {tool}" in _section(page, "tables")
    _laid_out(chromium, tmp_path / "one.html")
    # Beside a run of commbench: each run's own values, "not recorded" (saying why) where the log
    # has none.
    page = _report(tmp_path / "two.html", runs[0], imp)
    for label in ("repetitions", "Python", "memory", "MPI variables"):
        ours, theirs = _meta_row(page, label)
        assert "not recorded" not in ours and "?" not in ours
        assert re.fullmatch(
            rf'<span class="na" title="imported from {re.escape(tool)}[^"]*">not recorded</span>',
            theirs,
        ), theirs
    assert "--samples 1" in _meta_row(page, "repetitions")[0]
    _laid_out(chromium, tmp_path / "two.html")


def test_every_imported_log_on_one_page(chromium, tmp_path):
    logs = sorted(p for p in IMPORT.iterdir() if p.suffix in (".txt", ".json"))
    files = [_import(log, tmp_path / f"{log.stem}{log.suffix[1:]}.json") for log in logs]
    page = _report(tmp_path / "all.html", *files)
    assert "The same in all" in page and "?" not in re.sub(
        r"<[^>]+>", "", _section(page, "metadata")
    )
    g = _laid_out(chromium, tmp_path / "all.html")
    assert sum(1 for t in g["tables"] if t["cls"] == "meta") >= 2


def _times(value: float):
    def edit(doc):
        for r in doc["records"]:
            r["values"].update(
                {k: value for k in ("t_min", "t_max", "t_avg", "t_median", "t") if k in r["values"]}
            )

    return edit


@pytest.mark.parametrize(
    "old,new,shown",
    [
        (1e-300, 1e300, "overflow"),  # new/old and their mean beyond the range of floats
        (
            1e300,
            1e-300,
            "= 0.000|not compared",
        ),  # new/old 0, whose logarithm `commbench compare` takes
        (None, 1e300, "1e+300"),  # a time printed "%.2f": 301 digits, in exponent form
    ],
)
def test_numbers_beyond_range_are_named_not_printed(old, new, shown, runs, chromium, tmp_path):
    a, b = runs
    first = _edited(a, tmp_path / "old.json", _times(old)) if old else a
    page = _report(tmp_path / "range.html", first, _edited(b, tmp_path / "new.json", _times(new)))
    g = _laid_out(chromium, tmp_path / "range.html")
    assert re.search(shown.replace("+", r"\+"), page)
    assert not re.search(
        r"[>\s](nan|-?inf)[<\s]", _section(page, "comparison") + _section(page, "tables")
    )
    if shown == "overflow":
        assert re.search(r'<span class="nf" title="infinity: [^"]+">overflow</span>', page)
    if shown == "1e+300":
        assert "1e+300" in [c["text"] for c in g["cells"]]
    # The fits of the real run: an unbounded end of an interval is a word with a title, never "inf".
    fits = _section(page, "plots")
    assert not re.search(r"\binf\b|\bnan\b", re.sub(r"<[^>]+>", " ", fits))


def test_non_finite_numbers_in_words():
    from commbench.views import html_sections as sec

    for v in (math.nan, math.inf, -math.inf):
        for shown in (
            sec.number(v, ".2f", "why it is so"),
            sec.number_cell(str(v), "why it is so"),
            sec.mark_nonfinite(f"[1.5, {v}]", "why it is so"),
        ):
            assert (
                'title="' in shown
                and "why it is so" in shown
                and not BARE.search(re.sub(r"<[^>]+>", "", shown))
            )
    assert sec.number(1e300, ".2f", "") == "1e+300" and sec.number(12.345, ".2f", "") == "12.35"
    assert sec.geometric_mean([0.0, 2.0]) == 0.0 and sec.geometric_mean([math.inf, 2.0]) == math.inf
    assert math.isnan(sec.geometric_mean([0.0, math.inf])) and math.isclose(
        sec.geometric_mean([1e300, 1e300]), 1e300
    )
    assert (
        sec.mark_nonfinite("info nano inf.json", "") == "info nano inf.json"
    )  # words that only contain them


def _series_of_runs(src: Path, d: Path, n: int, differing: bool) -> list[Path]:
    """n copies of a real run: times 1 % apart, each its own date and -o; differing: also its
    own host, launcher, thread level, MPI variables and engine (the tables of four runs)."""
    out = []
    for i in range(n):

        def edit(doc, i=i):
            meta = doc["metadata"]
            meta["date"] = f"2026-01-{1 + i % 28:02d}T03:00:{i % 60:02d}"
            meta["calling_sequence"] = [*meta["calling_sequence"][:-1], f"night-{i:02d}.json"]
            for r in doc["records"]:
                r["values"].update(
                    {k: v * (1 + 0.01 * i) for k, v in r["values"].items() if k.startswith("t")}
                )
            if differing:
                meta["ranks_per_host"], meta["launcher"] = {f"node{i:02d}": 2}, f"srun {i}"
                meta["thread_level"], meta["mpi_env"] = f"MPI_THREAD_{i}", {"MPIR_CVAR_X": str(i)}
                meta["engine"], meta["cpu_model"] = f"native {i}", f"CPU model {i}"

        out.append(_edited(src, d / f"night-{i:02d}.json", edit))
    return out


@pytest.mark.parametrize("n,differing", [(5, False), (12, True), (50, False)])
def test_many_runs_stay_readable(n, differing, runs, chromium, tmp_path):
    files = _series_of_runs(runs[0], tmp_path, n, differing)
    page = _report(tmp_path / "many.html", *files)
    g = _laid_out(chromium, tmp_path / "many.html")
    meta = [t for t in g["tables"] if t["cls"] == "meta"]
    assert meta[0]["caption"] == f"The same in all {n} runs" and meta[0]["cols"] == 2
    if differing:  # a column per run, four runs a table
        assert len(meta) == 1 + -(-n // 4) and all(t["cols"] <= 5 for t in meta)
    else:  # file, date, options differ: a row per run
        assert len(meta) == 2 and meta[1]["rows"] == n + 1 and meta[1]["cols"] == 4
    assert (
        min(c["width"] for c in g["cells"] if c["meta"] == "meta") > 90
    )  # every value has room to be read
    overview = next(t for t in g["tables"] if t["caption"].startswith("Every later run against"))
    assert overview["rows"] == n  # the head and a row per later run
    assert len(_figures(page)) == 2 * -(-n // 8)  # PingPong and Allreduce, eight runs a figure
    for f in files:
        assert f"run {files.index(f) + 1}: {f.name}" in [c["text"] for c in g["cells"]]
