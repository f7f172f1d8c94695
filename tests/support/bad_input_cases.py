"""The invalid invocations of tests/mpi/test_bad_input.py, each as the user would type it and
the words its one-line refusal must contain, and the IO family's directory option they take;
tests/unit/test_bad_input.py holds the list itself (how many, which families it covers)."""

from __future__ import annotations

from commbench import suites


def _io_dir_option() -> str | None:
    if suites.canonical_family("io") is None:
        return None
    for opt in suites.family("io").options:
        if "dir" in opt.dest:
            return opt.names[0]
    return None


# (id, argv with {tmp}/{np1} placeholders, text the message must contain, applies to np?)
CASES: list[tuple[str, list[str], str, object]] = [
    ("unknown-benchmark", ["PingPang"], "did you mean PingPong", None),
    ("unknown-benchmark-include", ["-include", "Pong"], "invalid benchmark name 'Pong'", None),
    (
        "unknown-benchmark-exclude",
        ["-exclude", "Nothing"],
        "invalid benchmark name 'Nothing'",
        None,
    ),
    ("unknown-option", ["-bogus"], "unknown option '-bogus'", None),
    ("unknown-option-near", ["-msglg", "4"], "did you mean -msglog", None),
    ("unknown-family", ["--suite", "nope"], "unknown family", None),
    ("npmin-text", ["-npmin", "x"], "-npmin needs an integer", None),
    ("npmin-zero", ["-npmin", "0"], "-npmin must be >= 1", None),
    ("npmin-missing", ["-npmin"], "-npmin needs a value", None),
    ("multi-2", ["-multi", "2"], "-multi takes 0 or 1", None),
    ("off-cache-text", ["-off_cache", "abc"], "is not a number", None),
    ("off-cache-line0", ["-off_cache", "8,0"], "line size must be positive", None),
    ("iter-4-numbers", ["-iter", "10,20,30,40"], "at most three", None),
    ("iter-token", ["-iter", "fast"], "unknown token 'fast'", None),
    ("iter-negative", ["-iter", "-5"], "counts must be positive", None),
    ("iter-policy", ["-iter_policy", "sometimes"], "dynamic|multiple_np|auto|off", None),
    ("time-text", ["-time", "abc"], "-time needs a number", None),
    ("time-zero", ["-time", "0"], "-time must be a positive number", None),
    ("mem-negative", ["-mem", "-1"], "-mem must be a positive number", None),
    ("msglog-reversed", ["-msglog", "10:5"], "0 <= minlog < maxlog < 31", None),
    ("msglog-31", ["-msglog", "31"], "0 <= minlog < maxlog < 31", None),
    ("msglog-text", ["-msglog", "a:b"], "0 <= minlog < maxlog < 31", None),
    ("thread-level", ["-thread_level", "many"], "single|funneled|serialized|multiple", None),
    ("include-empty", ["-include"], "needs at least one benchmark", None),
    ("exclude-everything", ["PingPong", "-exclude", "PingPong"], "no benchmark left", None),
    ("alloc-kind", ["--alloc", "gpu"], "numpy|mpi|mmap", None),
    ("hugepages", ["--hugepages", "maybe"], "on|off", None),
    (
        "timeout-negative",
        ["--timeout", "-5"],
        "--timeout must be a non-negative number (0 = off)",
        None,
    ),
    ("timeout-text", ["--timeout", "soon"], "--timeout needs a number", None),
    ("maxlog-range", ["--maxlog", "50"], "--maxlog <31..40>", None),
    ("maxlog-contradicts-msglog", ["--maxlog", "33", "-msglog", "20"], "contradicts -msglog", None),
    ("input-missing", ["-input", "{tmp}/absent"], "no such file", None),
    ("input-directory", ["-input", "{tmp}/adir"], "is a directory", None),
    ("input-fifo", ["-input", "{tmp}/fifo"], "not a regular file", None),
    ("input-binary", ["-input", "{tmp}/binary"], "not text", None),
    ("msglen-missing", ["-msglen", "{tmp}/absent"], "no such file", None),
    ("msglen-directory", ["-msglen", "{tmp}/adir"], "is a directory", None),
    ("msglen-fifo", ["-msglen", "{tmp}/fifo"], "not a regular file", None),
    ("msglen-binary", ["-msglen", "{tmp}/binary"], "not text", None),
    ("msglen-no-size", ["-msglen", "{tmp}/nolens"], "'foo' is not a byte count", None),
    ("msglen-negative", ["-msglen", "{tmp}/neglens"], "'-8' is not a byte count", None),
    ("input-empty", ["-input", "{tmp}/nonames"], "no benchmark name in it", None),
    ("map-malformed", ["-map", "2y2"], "-map <A>x<B>", None),
    ("map-zero", ["-map", "0x4"], "-map <A>x<B>", None),
    ("map-does-not-fit", ["-map", "1x1"], "places for", lambda np_: np_ > 1),
    ("map-more-places", ["-map", "3x3"], "they must match", None),  # once a deadlock in warm-up
    ("np-contradicts-job", ["-n", "{np1}"], "given inside an MPI job", None),
    ("output-is-directory", ["-o", "{tmp}/adir"], "is a directory", None),
    ("output-unwritable", ["-o", "{tmp}/afile/r.json"], "cannot create directory", None),
    ("csv-unwritable", ["--csv", "{tmp}/afile/r.csv", "-o", "-"], "cannot create directory", None),
    (
        "memory-beyond-host",
        ["-mem", "100", "--maxlog", "36", "-msglen", "{tmp}/huge", "Bcast"],
        "MemAvailable",
        None,
    ),
    # options a run would not use: refused with the family and the option named (issue 22 item 3)
    (
        "foreign-family-option",
        ["--suite", "ext", "--nbc-cpu-factor", "2"],
        "option of the nbc family",
        None,
    ),
    ("foreign-family-option-mpi1", ["--pgas-stride", "8"], "option of the pgas family", None),
    (
        "driver-check",
        ["--suite", "msgrate", "-check"],
        "-check: the msgrate family does not use it",
        None,
    ),
    (
        "driver-alloc",
        ["--suite", "overhead", "--alloc", "mpi"],
        "--alloc: the overhead family does not use it",
        None,
    ),
    (
        "driver-samples",
        ["--suite", "overhead", "--samples", "3"],
        "--samples: the overhead family",
        None,
    ),
    ("driver-multi", ["--suite", "msgrate", "-multi", "0"], "-multi: the msgrate family", None),
    ("driver-fit", ["--suite", "msgrate", "--fit"], "--fit: the msgrate family", None),
    (
        "engine-without-native-loops",
        ["--suite", "pgas", "--engine", "native"],
        "has no C timed loops",
        None,
    ),
    # ... and options that only some benchmarks use, none of those given (issue 31 item 7)
    (
        "unused-sync-start",
        ["--sync-start", "window", "PingPong", "Uniband"],
        "--sync-start: no benchmark of this run uses it",
        None,
    ),
    ("unused-per-iteration", ["--per-iteration", "Uniband"], "Uniband: a window of messages", None),
    (
        "unused-sync-start-pgas",
        ["--suite", "pgas", "--sync-start", "window"],
        "the pgas family has no collective",
        None,
    ),
    ("unused-msglog-barrier", ["-msglog", "4", "Barrier"], "Barrier: no message size", None),
    # the command line's own mistakes, said as what they are (issue 31 items 6 and 9)
    ("double-dash", ["--"], "unknown option '--' (see commbench run -h)", None),
    ("option-twice", ["-msglog", "3", "-msglog", "5"], "-msglog given twice", None),
    ("load-twice", ["-load", "{tmp}/a.json", "-load", "{tmp}/b.json"], "-load given twice", None),
    ("load-with-n", ["-load", "{tmp}/n64.json"], "its argv has -n 64", None),
    (
        "thread-level-osu",
        ["--suite", "osu", "-thread_level", "single", "latency_mt"],
        "needs MPI_THREAD_MULTIPLE, but -thread_level single was given",
        None,
    ),
    (
        "mt-threads-beyond-mpi",
        ["--suite", "mt", "--mt-threads", "10000"],
        "MPICH has 2048 per process",
        None,
    ),
    # every family's own buffers checked before anything is allocated (issue 22 item 4)
    (
        "msgrate-cache-beyond-host",
        ["--suite", "msgrate", "--peers", "2", "--cache-size", "100g"],
        "MemAvailable",
        lambda np_: np_ == 4,
    ),
    (
        "msgrate-msgs-beyond-host",
        ["--suite", "msgrate", "--peers", "2", "--msgs", "1000000000"],
        "MemAvailable",
        lambda np_: np_ == 4,
    ),
    (
        "overhead-sizes-beyond-host",
        ["--suite", "overhead", "--sizes", "16,100000000000"],
        "MemAvailable",
        lambda np_: np_ >= 3,
    ),
    (
        "pgas-stride-beyond-host",
        ["--suite", "pgas", "--pgas-stride", "10000000000", "-mem", "200", "-msglog", "0:4"],
        "MemAvailable",
        lambda np_: np_ % 2 == 0,
    ),
    (
        "pgas-odd-processes",
        ["--suite", "pgas"],
        "family pgas needs",  # at 1 process: "at least 2"; odd: "an even number"
        lambda np_: np_ % 2 == 1 and suites.canonical_family("pgas") is not None,
    ),
]
IO_DIR_OPTION = _io_dir_option()
if IO_DIR_OPTION is not None:
    CASES.append(
        (
            "io-dir-unwritable",
            ["--suite", "io", IO_DIR_OPTION, "{tmp}/afile/sub"],
            IO_DIR_OPTION,
            None,
        )
    )
