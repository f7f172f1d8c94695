"""The options of `commbench run`: the general options' table (OPTIONS), those every family
takes (RUN_LEVEL), a family's own added to them, argv split into their values and bare
names, and the `run -h` text made from them.

IMB options keep IMB's own syntax (single dash, value in the next argv item,
spec §13); commbench's own options use a double dash (plus `-n`). The value
parsers are commbench.option_types'; commbench.run_config turns the values into a
RunConfig. Nothing here imports MPI.
"""

from __future__ import annotations

from typing import Any

from commbench import (
    imb_methodology,
    options_file,
    process_origin,
    records,
    row_measurement,
    suites,
)
from commbench.option_types import (
    ALLOC_KINDS,
    ENGINES,
    HUGEPAGES,
    POLICIES,
    THREAD_LEVELS,
    ConfigError,
    Option,
    byte_list,
    choice,
    integer,
    parse_iter,
    parse_map,
    parse_msglog,
    parse_multi,
    parse_off_cache,
    positive_float,
    readable_file,
    split_argv,
    store_tags,
    text,
)


def link_rate(text: str) -> str:
    """--link-rate: a line rate (ConfigError otherwise); the text as given."""
    from commbench.models import limits

    if not limits.link_rate(text):
        raise ConfigError(
            f"--link-rate {text!r} is not a line rate (accepted: 200Gb/s, 25Gbit/s, 12.5GB/s, "
            "100000 for Mb/s)"
        )
    return text


def rank_detail(s: str) -> int | None:
    """--rank-detail: a number of ranks (>= 1), or all (None: every rank's times always)."""
    return None if s.lower() == "all" else integer("--rank-detail", 1)(s)


OPTIONS: tuple[Option, ...] = (
    Option(("-h", "-help", "--help"), "help", "", "print this usage and exit"),
    Option(
        ("-npmin",),
        "npmin",
        "<NPmin>",
        "first process count of the sequence NPmin, 2NPmin, …, P",
        integer("-npmin", 1),
    ),
    Option(
        ("-multi",),
        "multi",
        "<0|1>",
        "run groups simultaneously (0: one row per size, 1: one row per group)",
        parse_multi,
    ),
    Option(
        ("-off_cache",),
        "off_cache",
        "<cs[,cls]>|-1",
        "avoid cache reuse: cache size MB [, line bytes]; -1 for 8 MB/64 B (not IO)",
        parse_off_cache,
    ),
    Option(
        ("-iter",),
        "iter",
        "<msgs[,MB[,nonaggr]]>[,policy]",
        "repetition caps and/or policy",
        parse_iter,
    ),
    Option(
        ("-iter_policy",),
        "iter_policy",
        "<policy>",
        "dynamic|multiple_np|auto|off",
        choice("-iter_policy", POLICIES),
    ),
    Option(
        ("-time",),
        "time",
        "<secs>",
        "run-time target per size for the dynamic policy (default 10)",
        positive_float("-time"),
    ),
    Option(
        ("-mem",),
        "mem",
        "<GB>",
        "per-process memory cap for message buffers (default 1)",
        positive_float("-mem"),
    ),
    Option(
        ("-input",),
        "input",
        "<file>",
        "file with benchmark names, one per line",
        readable_file("-input"),
    ),
    Option(
        ("-msglen",),
        "msglen",
        "<file>",
        "file with message lengths, one per line",
        readable_file("-msglen"),
    ),
    Option(
        ("-map",),
        "map",
        "<A>x<B>",
        "rank placement: ranks fill A rows column-wise, groups taken row-wise",
        parse_map,
    ),
    Option(
        ("-include",),
        "include",
        "<b1> [b2 …]",
        "add benchmarks (e.g. PingPongSpecificSource)",
        multi_names=True,
    ),
    Option(("-exclude",), "exclude", "<b1> [b2 …]", "remove benchmarks", multi_names=True),
    Option(("-msglog",), "msglog", "[<min>:]<max>", "sizes 0, 2^min … 2^max", parse_msglog),
    Option(
        ("-thread_level",),
        "thread_level",
        "<level>",
        "single|funneled|serialized|multiple",
        choice("-thread_level", THREAD_LEVELS),
    ),
    Option(
        ("-check", "--check"), "check", "", "verify every received buffer (timings then not valid)"
    ),
    Option(
        ("-n", "--np"),
        "np",
        "<N>",
        "start N processes under mpiexec (outside an MPI job)",
        integer("-n", 1),
    ),
    Option(
        ("--mpiexec",),
        "mpiexec",
        "<path>",
        "mpiexec to launch with (default: the one of mpi4py's MPI)",
        text,
    ),
    Option(("--suite",), "suite", "<name>", "family: " + "|".join(suites.family_names()), text),
    Option(
        ("-o", "--output"),
        "output",
        "<file.json>",
        "results file (default results/commbench-<suite>-<date>.json; '-' or /dev/null for none)",
        text,
    ),
    Option(("--csv",), "csv", "<file.csv>", "also write the records as CSV", text),
    Option(
        ("--store",),
        "store",
        "[=PATH|URL]",
        "also keep the run in a results store: alone the default store ($COMMBENCH_STORE, else "
        "~/.local/share/commbench/results.db), or --store=FILE.db, "
        "--store=postgresql://USER@HOST/DB (commbench store -h)",
        text,
        glued=True,
    ),
    Option(
        ("--system",),
        "system",
        "<name>",
        "the system the run belongs to, recorded in its file for the results store (default: "
        "its sorted host list)",
        text,
    ),
    Option(
        ("--tag",),
        "tag",
        "<tag[,tag]>",
        "with --store: the run's tags, e.g. nightly,after-ucx-1.18",
        store_tags,
    ),
    Option(
        ("--link-rate",),
        "link_rate",
        "<rate>",
        "the line rate of the link between hosts, e.g. 200Gb/s or 25GB/s, where the system "
        "cannot tell it (rows across hosts are shown as a fraction of it: docs/limits.md)",
        link_rate,
    ),
    Option(
        ("--expect",),
        "expect",
        "<rules.toml>",
        "judge every row the file's rules select when the run ends: pass, fail, no data; a "
        "failure makes the exit status 1 (commbench expect -h, docs/expect.md)",
        text,
    ),
    Option(
        ("--alloc",),
        "alloc",
        "<kind>",
        "buffer allocation: numpy (default; mpi for ext/rma, as the spec says) | mpi "
        "(MPI.Alloc_mem) | mmap",
        choice("--alloc", ALLOC_KINDS),
    ),
    Option(
        ("--hugepages",),
        "hugepages",
        "<on|off|default>",
        "transparent huge pages for buffers (madvise)",
        choice("--hugepages", HUGEPAGES),
    ),
    Option(
        ("--engine",),
        "engine",
        "<native|mpi4py|both>",
        "timed loops in C (native, default; mpi4py when it cannot be built) or Python; both: "
        "binding overhead",
        choice("--engine", ENGINES),
    ),
    Option(
        ("--samples",),
        "samples",
        "<K>",
        "repeat every measurement K times: the row shows the per-rank median, the results file "
        "every sample and a 95% CI of the median (default 1, as IMB)",
        integer("--samples", 1),
    ),
    Option(
        ("--force",),
        "force",
        "",
        "run what commbench would refuse: a --samples plan whose samples could pass 256 MB in "
        "the results file, a benchmark a known defect of the MPI library hangs",
    ),
    Option(
        ("--fit",),
        "fit",
        "",
        "fit t = (n + n_1/2)/r_inf after each fittable benchmark (automatic breakpoints; the comms "
        "family by default)",
    ),
    Option(
        ("--int-counts",),
        "int_counts",
        "",
        "C int counts and displacements, as IMB: sizes that need more read int-overflow (automatic "
        "with an MPI without large counts)",
    ),
    Option(
        ("--no-fit",),
        "no_fit",
        "",
        "no fits, also for the comms family (which fits by default, as COMMS does)",
    ),
    Option(
        ("--no-progress",),
        "no_progress",
        "",
        "no progress line on stderr (drawn by default when stderr is a terminal)",
    ),
    Option(
        ("--breakpoint",),
        "breakpoints",
        "<n[,n…]>",
        "fit with these breakpoints (sizes in bytes) instead of automatic ones; implies --fit",
        byte_list("--breakpoint"),
    ),
    Option(
        ("--mib",),
        "mib",
        "",
        "print Mbytes/sec in 2^20 bytes/s (IMB 4.0) instead of 10^6 (current IMB)",
    ),
    Option(
        ("--timeout",),
        "timeout",
        "<secs>",
        "watchdog: end the job when one measurement makes no progress for secs (default max(300, 3 "
        "x -time); 0 = off)",
        positive_float("--timeout", zero_ok=True),
    ),
    Option(
        ("--maxlog",),
        "maxlog",
        "<31..40>",
        "largest size 2^maxlog beyond -msglog's range (< 31), e.g. with -msglen, for messages >= 2 "
        "GiB (MPI-4 large counts)",
        integer("--maxlog", 1),
    ),
    Option(
        ("--rank-detail",),
        "rank_detail",
        "<N|all>",
        f"records keep every rank's times up to N ranks (default {records.RANK_DETAIL}); beyond, "
        "each row's distribution over ranks and its slowest ranks with their hosts (recorded)",
        rank_detail,
    ),
    *imb_methodology.OPTIONS,
    *options_file.OPTIONS,
    *row_measurement.OPTIONS,
)

# Options every family takes: where and how the job runs and what it writes.
RUN_LEVEL = frozenset(
    {
        "help",
        "np",
        "mpiexec",
        "suite",
        "output",
        "csv",
        "store",
        "system",
        "tag",
        "expect",
        "link_rate",
        "timeout",
        "thread_level",
        "include",
        "exclude",
        "input",
        "dump",
        "load",
        "no_progress",
        "rank_detail",
    }
)


def hinted_family() -> str | None:
    """The family the self-launcher resolved for this job (commbench.process_origin), else None."""
    return suites.canonical_family(process_origin.family_hint() or "-")


def all_options() -> list[Option]:
    """OPTIONS and the families' own: the hinted family's only, where there is one."""
    opts = list(OPTIONS)
    hint = hinted_family()
    for fam in [suites.family(hint)] if hint else suites.families():
        opts.extend(fam.options)
    return opts


def usage(argv: list[str] | None = None) -> str:
    """`run -h`: every option; with --suite of a family that takes only some (overhead,
    msgrate: `commbench overhead -h`), those it takes, under its own command name."""
    fam = None
    if argv and "--suite" in argv[:-1]:
        name = suites.canonical_family(argv[argv.index("--suite") + 1])
        fam = suites.family(name) if name else None
    opts = all_options()
    prog = "commbench run"
    if fam is not None and fam.honours is not None:
        prog = (
            f"commbench {fam.name}"
            if fam.name == "overhead"
            else f"commbench run --suite {fam.name}"
        )
        opts = [o for o in OPTIONS if o.dest in RUN_LEVEL | fam.honours] + list(fam.options)
    lines = [
        f"usage: {prog} [options] [benchmark ...]",
        "",
        "Benchmarks are case-insensitive names (see `commbench list`); without names the",
        "family's default list runs. Families: "
        + ", ".join(suites.family_names())
        + " (IMB-MPI1 … accepted).",
        "",
        "options:",
    ]
    for opt in opts:
        head = ", ".join(opt.names) + (f" {opt.metavar}" if opt.metavar else "")
        lines.append(f"  {head:<40} {opt.help}")
    return "\n".join(lines)


def split_run_argv(argv: list[str], given: dict | None = None) -> tuple[dict[str, Any], list[str]]:
    """Options into raw values, the rest into bare benchmark names (given: options.split_argv).
    The options of the family argv evidently runs (its --suite, else the default family) split
    it when they know every option given, so the launcher loads no other catalog; else every
    family's do (and an option of another family is refused by name, commbench.suites.option_use).
    Both split alike: no option name means two things in two families (test_option_matrix)."""
    fam = None if hinted_family() else evident_family(argv)
    if fam is not None:
        mine: dict = {}
        try:
            out = split_argv(argv, [*OPTIONS, *suites.family(fam).options], mine)
        except ConfigError:
            pass
        else:
            if given is not None:
                given.update(mine)
            return out
    return split_argv(argv, all_options(), given)


def evident_family(argv: list[str]) -> str | None:
    """The family of a command line's --suite (its last), else the default family; None for a
    --suite value that names no family."""
    fam = suites.DEFAULT_FAMILY
    for i, arg in enumerate(argv):
        if arg == "--suite" and i + 1 < len(argv):
            fam = suites.canonical_family(argv[i + 1])
        elif arg.startswith("--suite="):
            fam = suites.canonical_family(arg.split("=", 1)[1])
    return fam
