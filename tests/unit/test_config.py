"""Option parsing and validation (spec §13): no MPI processes needed."""

import pytest

from commbench.run_config import ConfigError, HelpRequested, parse_run_args


def test_defaults():
    c = parse_run_args([])
    assert c.family == "mpi1"
    assert c.benchmarks[0] == "PingPong" and c.benchmarks[-1] == "Barrier"
    assert "PingPongSpecificSource" not in c.benchmarks
    assert (c.msgspersample, c.overall_vol, c.msgs_nonaggr) == (1000, 40 * 2**20, 100)
    assert c.iter_policy == "dynamic" and c.secs == 10 and c.max_mem == 1
    assert (c.minlog, c.maxlog, c.npmin) == (0, 22, 2)
    assert c.multi is None and c.map is None and c.off_cache is None
    assert c.mb_unit == 10**6 and c.alloc == "numpy"


def test_imb_options():
    c = parse_run_args(
        [
            "-npmin",
            "4",
            "-msglog",
            "3:10",
            "-iter",
            "1000,40,off",
            "-time",
            "2",
            "-mem",
            "1.5",
            "-off_cache",
            "16,128",
            "-multi",
            "0",
            "-map",
            "2x2",
            "pingpong",
            "ALLREDUCE",
        ]
    )
    assert c.npmin == 4 and (c.minlog, c.maxlog) == (3, 10)
    assert c.iter_policy == "off" and c.secs == 2 and c.max_mem == 1.5
    assert c.off_cache == (16.0, 128) and c.multi == 0 and c.map == (2, 2)
    assert c.benchmarks == ("PingPong", "Allreduce")


def test_iter_forms():
    assert parse_run_args(["-iter", "2000"]).msgspersample == 2000
    c = parse_run_args(["-iter", "2000,100"])
    assert c.overall_vol == 100 * 2**20
    assert parse_run_args(["-iter", "1000,40,150"]).msgs_nonaggr == 150
    assert parse_run_args(["-iter", "2000,multiple_np"]).iter_policy == "multiple_np"
    assert parse_run_args(["-iter", "auto"]).iter_policy == "auto"
    assert parse_run_args(["-iter", "auto", "-iter_policy", "off"]).iter_policy == "off"
    assert parse_run_args(["-iter_policy", "off", "-iter", "auto"]).iter_policy == "auto"


def test_off_cache_defaults():
    assert parse_run_args(["-off_cache", "-1"]).off_cache == (8.0, 64)
    assert parse_run_args(["-off_cache", "4"]).off_cache == (4.0, 64)


def test_include_exclude_order():
    c = parse_run_args(["-include", "PingPongSpecificSource", "-exclude", "Barrier", "Bcast"])
    assert c.benchmarks[0] == "PingPongSpecificSource"
    assert "Barrier" not in c.benchmarks and "Bcast" not in c.benchmarks
    c = parse_run_args(["Sendrecv", "-include", "PingPingSpecificSource"])
    assert c.benchmarks == ("PingPingSpecificSource", "Sendrecv")


def test_multi_prefix_implies_multi0():
    c = parse_run_args(["Multi-PingPong"])
    assert c.multi == 0 and c.benchmarks == ("PingPong",)


def test_files(tmp_path):
    names = tmp_path / "names"
    names.write_text("# comment\nPingPong\n\nallreduce extra words\n")
    assert parse_run_args(["-input", str(names)]).benchmarks == ("PingPong", "Allreduce")
    lens = tmp_path / "lens"
    lens.write_text("# sizes\n0\n1k\n2M\n100\n")
    c = parse_run_args(["-msglen", str(lens)])
    assert c.msglen == (0, 1024, 2 * 2**20, 100)
    lens.write_text("# sizes\n0\n1k\nbogus\n100\n")  # IMB skips it; commbench refuses (exit 2)
    with pytest.raises(ConfigError, match="lens:4: 'bogus' is not a byte count"):
        parse_run_args(["-msglen", str(lens)])


def test_suite_aliases():
    assert parse_run_args(["--suite", "IMB-MPI1"]).family == "mpi1"
    assert parse_run_args(["IMB-MPI1", "PingPong"]).benchmarks == ("PingPong",)


def test_help():
    with pytest.raises(HelpRequested):
        parse_run_args(["PingPong", "-h"])


BAD = [
    (["-npmin", "x"], "-npmin needs an integer"),
    (["-npmin", "0"], "-npmin must be >= 1"),
    (["-multi", "2"], "-multi takes 0 or 1"),
    (["-off_cache", "abc"], "-off_cache"),
    (["-off_cache", "8,0"], "line size"),
    (["-iter", "10,20,30,40"], "at most three"),
    (["-iter", "fast"], "unknown token"),
    (["-iter", "-5"], "positive"),
    (["-iter", "2147483648"], "at most 2147483647"),  # a C int of the timed loops
    (["-iter", "1000,40,3000000000"], "at most 2147483647"),
    (["-iter_policy", "sometimes"], "dynamic|multiple_np|auto|off"),
    (["-time", "abc"], "-time needs a number"),
    (["-time", "0"], "-time must be a positive"),
    (["-mem", "-1"], "-mem must be a positive"),
    (["-input", "/nonexistent/file"], "no such file"),
    (["-msglen", "/nonexistent/file"], "no such file"),
    (["-map", "2y2"], "-map"),
    (["-map", "0x4"], "-map"),
    (["-include"], "needs at least one benchmark"),
    (["-exclude", "-npmin", "2"], "needs at least one benchmark"),
    (["-msglog", "10:5"], "-msglog"),
    (["-msglog", "31"], "-msglog"),
    (["-msglog", "a:b"], "-msglog"),
    (["-thread_level", "many"], "single|funneled|serialized|multiple"),
    (["-npmin"], "needs a value"),
    (["PingPang"], "did you mean PingPong"),
    (["-include", "Pong"], "invalid benchmark name"),
    (["-bogus"], "unknown option"),
    (["--suite", "nope"], "unknown family"),
    (["PingPong", "-exclude", "PingPong"], "no benchmark left"),
    (["--alloc", "gpu"], "numpy|mpi|mmap"),
    # overhead's options are decided per experiment: one no selected experiment uses is refused
    (["--suite", "overhead", "loggp", "--stream-time", "0.1"], "no benchmark of this run uses"),
    (["--suite", "overhead", "loggp", "--q-time", "300"], "decomposition, interference"),
    (
        ["--suite", "overhead", "decomposition", "--loggp-n", "5"],
        "with a benchmark that uses it, loggp",
    ),
]


@pytest.mark.parametrize("argv,needle", BAD, ids=[" ".join(a) or "empty" for a, _ in BAD])
def test_bad_input(argv, needle):
    with pytest.raises(ConfigError) as e:
        parse_run_args(argv)
    assert needle in str(e.value)


def test_world_checks():
    with pytest.raises(ConfigError, match="-map 2x2"):
        parse_run_args(["-map", "2x2"], world_size=6)
    parse_run_args(["-map", "3x2"], world_size=6)
    # more places than processes: groups with gaps deadlocked or ran on part of the world
    for world, m in ((2, "3x3"), (2, "2x2"), (4, "4x2"), (3, "2x2")):
        with pytest.raises(
            ConfigError, match=f"-map {m}: .* places for {world} processes; they must match"
        ):
            parse_run_args(["-map", m], world_size=world)
    with pytest.raises(ConfigError, match="-n 2 given inside"):
        parse_run_args(["-n", "2"], world_size=4)


def test_msglen_empty(tmp_path):
    f = tmp_path / "empty"
    f.write_text("# nothing\n\n")
    with pytest.raises(ConfigError, match="no valid message length"):
        parse_run_args(["-msglen", str(f)])
    # a line that is not a byte count (negative, fractional, text) is an error, not skipped
    for bad in ("-8", "1.5", "foo"):
        f.write_text(f"4\n{bad}\n")
        with pytest.raises(ConfigError, match=f"empty:2: '{bad}' is not a byte count"):
            parse_run_args(["-msglen", str(f)])


def test_input_empty(tmp_path):
    f = tmp_path / "names"
    f.write_text("# only a comment\n")
    with pytest.raises(ConfigError, match="no benchmark name in it"):
        parse_run_args(["-input", str(f)])


def test_options_from_a_load_file_count_as_given(tmp_path):
    """What code reads after configuration is the validated configuration, -load's options
    among them, never the raw command line (a -dump file of -iter 1000,40,1,off
    -iter_policy dynamic crashed -load with an IndexError)."""
    import json
    import re
    from pathlib import Path

    def dumped(*argv: str) -> str:
        f = tmp_path / f"d{len(list(tmp_path.iterdir()))}.json"
        f.write_text(json.dumps({"format": "commbench-options 1", "argv": list(argv)}))
        return str(f)

    both = dumped("PingPong", "-iter", "1000,40,1,off", "-iter_policy", "dynamic")
    assert parse_run_args(["-load", both]).iter_policy == "dynamic"
    assert (
        parse_run_args(
            ["-load", dumped("-iter_policy", "dynamic", "-iter", "9,1,1,off")]
        ).iter_policy
        == "off"
    )
    off = dumped("PingPong", "-iter", "1000,40,1,off")
    assert parse_run_args(["-load", off]).iter_policy == "off"
    assert parse_run_args(["-load", off, "-iter_policy", "dynamic"]).iter_policy == "dynamic"
    pol = dumped("PingPong", "-iter_policy", "dynamic")
    assert parse_run_args(["-load", pol, "-iter", "1000,40,1,off"]).iter_policy == "off"
    p2p = dumped("--suite", "p2p", "PingPong", "-msglog", "3", "-iter", "1000,40,1,off")
    with pytest.raises(ConfigError, match="IMB-P2P takes a maximum and a numerator only"):
        parse_run_args(["-load", p2p], world_size=2)
    msglen = tmp_path / "lens.txt"
    msglen.write_text("8\n")
    with pytest.raises(ConfigError, match="-msglog contradicts -msglen"):
        parse_run_args(["-load", dumped("--suite", "p2p", "-msglog", "3"), "-msglen", str(msglen)])
    cfg = parse_run_args(["-load", dumped("--suite", "mt", "-window_size", "7")])
    assert cfg.params["mt_window_size"] == 7
    # the class: nothing under commbench/ reads cfg.argv but the record of the command line
    src = Path(__file__).resolve().parents[2] / "commbench"
    readers = [
        f"{p.relative_to(src)}:{i}"
        for p in src.rglob("*.py")
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\bcfg\.argv\b|\bself\.argv\b", line)
    ]
    assert readers and all(r.startswith(("run_config.py:", "run_metadata.py:")) for r in readers), (
        readers
    )
