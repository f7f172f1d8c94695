"""The physical limits' arithmetic (commbench.models.limits), the text's closing lines
(commbench.views.limits_text) and expectations against them, on records built here; the
measurement itself, with real MPI processes: tests/mpi/test_limits.py."""

from __future__ import annotations

import math

import pytest

from commbench import records
from commbench.models import expectations as ex
from commbench.models import limits
from commbench.views import limits_text

COPY = [[1, 1e9], [1024, 100e9], [4 * 2**20, 10e9]]
LIMITS = {
    "memory": {"a": {"copy": COPY, "floor_us": 0.1}},
    "link": {"rate": 25e9 / 8, "source": "--link-rate 25Gb/s"},
}
HOSTS = ["a", "a", "b"]


def _rec(name="PingPong", ranks=(0, 1), x=4 * 2**20, t=1.0, turnover=1.0):
    bw = turnover * x / (t * 1e-6) if x else None
    values = {"t_max": t, "t": t, **({"bytes_per_sec": bw} if bw else {})}
    return records.Measurement(
        name, "mpi1", "single", len(ranks), "", x, 10, groups=[list(ranks)],
        turnover=turnover, values=values,
    )  # fmt: skip


@pytest.mark.parametrize(
    "text,rate",
    [
        ("10000", 1.25e9),  # /sys/class/net/IF/speed: Mb/s
        ("-1", None),  # a link that is down, or a virtual one
        ("100 Gb/sec (4X EDR)", 12.5e9),  # /sys/class/infiniband/*/ports/*/rate
        ("200Gb/s", 25e9),
        ("25 Gbit/s", 25e9 / 8),
        ("12.5 GB/s", 12.5e9),
        ("fast", None),
    ],
)
def test_line_rates_as_sysfs_and_people_write_them(text, rate):
    assert limits.link_rate(text) == rate


def test_the_copy_rate_is_interpolated_between_measured_sizes():
    assert limits.copy_rate(COPY, 1024) == 100e9
    assert limits.copy_rate(COPY, 2**30) == 10e9  # beyond the largest: its rate
    assert limits.copy_rate(COPY, 0) is None
    mid = limits.copy_rate(COPY, 32)  # halfway between 1 and 1024 in log: the geometric mean
    assert math.isclose(mid, 10e9)


def test_a_row_on_one_host_is_held_against_its_memory_and_floor():
    lim = limits.of_row(_rec(t=1000.0, turnover=2.0), LIMITS, HOSTS)
    assert lim["of"] == "memory" and lim["host"] == "a"
    assert lim["bandwidth"] == 2 * 10e9  # turnover copies side by side
    assert math.isclose(lim["fraction"], 2 * 4 * 2**20 / 1e-3 / 20e9)
    assert lim["t"] == 0.1 and math.isclose(lim["multiple"], 1000.0 / 0.1)
    zero = limits.of_row(_rec(x=0, t=0.5), LIMITS, HOSTS)
    assert "fraction" not in zero and math.isclose(zero["multiple"], 5.0)


def test_a_row_across_hosts_is_held_against_the_link():
    lim = limits.of_row(_rec(ranks=(0, 2), t=2000.0), LIMITS, HOSTS)
    assert lim["of"] == "link" and lim["bandwidth"] == 25e9 / 8 and "multiple" not in lim
    assert math.isclose(lim["fraction"], 4 * 2**20 / 2e-3 / (25e9 / 8))
    assert limits.of_row(_rec(ranks=(0, 2), x=0), LIMITS, HOSTS) is None  # no latency floor
    assert limits.of_row(_rec(ranks=(0, 2)), {"memory": {}}, HOSTS) is None  # no link known


def _held(rec):
    rec.extra["limit"] = limits.of_row(rec, LIMITS, HOSTS)
    return rec


def test_the_closing_lines_name_each_table():
    rows = [_held(_rec(x=x, t=t)) for x, t in ((0, 0.5), (1024, 1.0), (4 * 2**20, 1000.0))]
    lines = limits_text.trailer(rows)
    assert lines[1].startswith("# commbench: against the physical limit (one copy in memory")
    assert lines[2] == (
        "# commbench:   PingPong np=2: 0 bytes at 5.0x the 0.1 us floor; "
        "4194304 bytes at 0.42 of 10 GB/s; most 0.42, at 4194304 bytes"
    )
    assert limits_text.trailer([_rec()]) == []  # no row with a limit: nothing said


@pytest.mark.parametrize(
    "limit,kept",
    [
        ({"of": "memory", "host": "h0", "t": 0.1, "multiple": 5.0}, {"t", "multiple"}),
        ({"of": "link", "bandwidth": 1e9, "fraction": 0.4}, {"bandwidth", "fraction"}),
        ({"of": "link", "bandwidth": 1e9, "fraction": "text"}, set()),
        ({"of": "memory", "t": None, "multiple": 5.0, "bandwidth": 1e9, "fraction": 0.4},
         {"bandwidth", "fraction"}),
        ({"of": "memory", "t": True, "multiple": math.nan}, set()),
        ({"of": "disk", "bandwidth": 1e9, "fraction": 0.4}, set()),
        ("text", set()),
    ],
)  # fmt: skip
def test_a_reader_takes_only_a_limit_of_the_recorded_shape(limit, kept):
    """extra is the format's open part: what a reader takes of it has of_row's shape (a
    broken fraction crashed `commbench compare` and the closing lines)."""
    got = limits.recorded({"limit": limit})
    assert set(got) - {"of", "host"} == kept
    assert (got == {}) == (not kept)
    row = _rec(x=4 * 2**20, t=1000.0)
    broken = records.Measurement(**{**row.__dict__, "extra": {**row.extra, "limit": limit}})
    lines = limits_text.trailer([broken])
    assert (lines != []) == bool(kept)


def test_expectations_as_fractions_of_the_limit(tmp_path):
    rules = ex.parse(
        '[[expect]]\nbenchmark = "PingPong"\nnp = 2\nbytes = ">= 1MiB"\n'
        'bandwidth = ">= 0.4 of limit"\n'
        '\n[[expect]]\nbenchmark = "PingPong"\nbytes = 0\nt = "<= 4 of floor"\n'
        '\n[[expect]]\nbenchmark = "PingPong"\nnp = 3\nbandwidth = ">= 0.5 of link"\n',
        "site.toml",
    )
    across = _rec(ranks=(0, 1, 2), t=3000.0)
    rows = [_held(_rec(x=0, t=0.5)), _held(_rec(t=1000.0)), _held(across), _rec(x=8)]
    got = {(v.rule.where, v.row, v.verdict, v.why) for v in ex.judge(rules, "r.json", [], rows)}
    assert got == {
        ("site.toml:1", "PingPong np=2 bytes=4194304", ex.PASS, ""),  # 0.42 of the copy
        ("site.toml:7", "PingPong np=2 bytes=0", ex.FAIL, ""),  # 5.0x the floor
        ("site.toml:12", "PingPong np=3 bytes=4194304", ex.FAIL, ""),  # 0.45 of the link
    }
    rules = ex.parse('[[expect]]\nbenchmark = "PingPong"\nbandwidth = ">= 0.5 of link"\n', "f")
    (v,) = ex.judge(rules, "r.json", [], [_held(_rec(t=1000.0))])
    assert (v.verdict, v.why) == (ex.NO_DATA, "the row's ranks share a host")
    (v,) = ex.judge(rules, "r.json", [], [_rec(t=1000.0)])
    assert (v.verdict, v.why) == (ex.NO_DATA, "the run records no limit for it")
    with pytest.raises(ex.ExpectationError, match="the floor bounds t"):
        ex.parse('[[expect]]\nbenchmark = "PingPong"\nbandwidth = ">= 2 of floor"\n', "f")


def test_a_link_rate_that_is_none_is_refused_before_the_run():
    from commbench import run_config

    with pytest.raises(run_config.ConfigError, match="--link-rate 'fast' is not a line rate"):
        run_config.parse_run_args(["--link-rate", "fast", "PingPong"])
    assert run_config.parse_run_args(["--link-rate", "200Gb/s"]).link_rate == "200Gb/s"


def test_compare_says_each_tables_largest_size_against_the_limit():
    from commbench.views import compare, compare_text

    old = [_held(_rec(x=x, t=t)) for x, t in ((0, 0.5), (4 * 2**20, 1000.0))]
    new = [_held(_rec(x=x, t=t)) for x, t in ((0, 0.6), (4 * 2**20, 1250.0))]
    rows = compare.compare(old, new)
    assert rows[1].limits["fraction"] == (
        old[1].extra["limit"]["fraction"],
        new[1].extra["limit"]["fraction"],
    )
    text = compare_text.render(rows, "a.json", "b.json")
    assert "# of the physical limit, new (old), each table's largest size (docs/limits.md): " \
        "PingPong np=2 bytes=4194304 0.34 (0.42)" in text  # fmt: skip
    got = compare_text.row_json(rows[0])["limit"]
    assert list(got) == ["multiple"] and [round(m, 9) for m in got["multiple"]] == [5.0, 6.0]
