"""An option a run would not use is refused, and the rules that say so follow the code that
consumes the options, in the pytest process (no MPI: the launcher refuses while parsing).

Generated, not hand-listed: the options are the parser's own table (run_options.all_options,
every family's: tests/support/option_matrix.py), their values found by their own parsers, the
families and benchmarks the registry's, and what uses what comes from the declarations
commbench.suites.option_use reads (Family.honours, Option.uses, RULES over the descriptors).

- Refusal side: every option x family x benchmark verdict goes through config.parse_run_args;
  a refusal names the option, why and the accepted form; a run that uses it is never refused
  as not using it.
- The rules against the code that consumes the options (harness plan, the IMB text view):
  a benchmark "uses" an option exactly where that code changes with it.

The acceptance side (real MPI: the records show an accepted option) is
tests/mpi/test_option_matrix.py.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from commbench import records, row_measurement, run_config, run_options, suites
from commbench.harness.plan import Plan
from commbench.option_types import ConfigError
from commbench.suites import option_use
from commbench.suites.base import Benchmark
from commbench.views import imb_text
from tests.support.option_matrix import OPTIONS

CANDIDATES = (
    "2",
    "1",
    "on",
    "0:1",
    "1x2",
    "2%",
    "int",
    "float",
    "dynamic",
    "numpy",
    "both",
    "put",
    "1,2",
    "k=v",
)
UNUSED_FORMS = ("does not use it", "no benchmark of this run uses it", "is an option of the")


def _value(opt, tmp) -> list[str] | None:
    """argv giving opt: its name, and a value its own parser takes (metavar choices first,
    then common forms, then the words of its help)."""
    if opt.parse is None or opt.glued:  # a glued option alone is a flag (-c)
        return [opt.names[0]]
    if opt.dest == "msglen":
        (tmp / "lens").write_text("8\n")
        return [opt.names[0], str(tmp / "lens")]
    m = re.fullmatch(r"<([^<>]*)>", opt.metavar or "")
    words = re.findall(r"[\w.:=-]+", opt.help)  # the values its help names (mpi_char, …)
    for c in (m.group(1).split("|") if m and "|" in m.group(1) else []) + list(CANDIDATES) + words:
        try:
            opt.parse(c)
        except Exception:  # noqa: BLE001 - not a value of this option: the next candidate
            continue
        return [opt.names[0], c]
    return None  # an option only there to be refused with its reason (OSU's -b)


def test_every_option_has_a_value(tmp_path):
    """Or it is an option that exists to be refused, with the accepted form."""
    assert len(OPTIONS) > 60
    for opt in OPTIONS:
        if _value(opt, tmp_path) is None:
            with pytest.raises(ConfigError, match="accepted"):
                opt.parse("2")


def _forms() -> tuple[str, ...]:
    return UNUSED_FORMS + tuple(f"family {u.none}" for u in option_use.RULES.values())


def _representatives(fam, opt, values) -> dict:
    """One benchmark per verdict of opt's rule over fam's benchmarks (None: it uses it)."""
    use = option_use.rule_of(opt)
    if use is None or not option_use.takes(opt, fam, run_options.OPTIONS):
        return {None: fam.benchmarks[0].name}
    out: dict = {}
    for b in fam.benchmarks:
        out.setdefault(use.rule(fam, b, values), b.name)
    return out


@pytest.mark.parametrize("family", suites.family_names())
def test_refused_exactly_where_unused(family, tmp_path):
    fam, general, fams = suites.family(family), run_options.OPTIONS, suites.families()
    forms, bad = _forms(), []
    for opt in OPTIONS:
        argv = _value(opt, tmp_path)
        if argv is None:
            continue
        values = run_options.split_run_argv(argv)[0]
        for name in _representatives(fam, opt, values).values():
            full = ["--suite", family, *argv, name]
            want = option_use.why_unused(
                opt, fam, [name], values, general, run_options.RUN_LEVEL, lambda: fams
            )
            try:
                run_config.parse_run_args(full)
                got = None
            except ConfigError as e:
                got = str(e)
            if want is not None and got != want:
                bad.append(f"{' '.join(full)}: want the refusal {want!r}, got {got!r}")
            elif want is not None and not (got.startswith(opt.names[0]) and "accepted:" in got):
                bad.append(
                    f"{' '.join(full)}: the refusal must name "
                    f"the option and the accepted form: {got}"
                )
            elif (
                want is None
                and got is not None
                and any(f in got for f in forms)
                and got.startswith(opt.names[0])
            ):
                bad.append(f"{' '.join(full)}: refused as unused although the run uses it: {got}")
    assert not bad, "\n".join(bad[:20])


def test_a_refusal_names_each_benchmark_and_who_uses_it():
    """The issue's examples: options the preamble announced and no row used (exit 0 before)."""
    for argv, words in (
        (["--sync-start", "window", "PingPong", "Uniband"], ["PingPong:", "Uniband:", "Allreduce"]),
        (["--per-iteration", "Uniband"], ["Uniband: a window of messages", "PingPong"]),
        (["--suite", "nbc", "--sync-start", "window", "Ibcast"], ["Ibcast:", "Ibcast_pure"]),
        (["--suite", "pgas", "--sync-start", "window"], ["pgas family", "--suite mpi1|"]),
        (["--suite", "pgas", "--per-iteration"], ["pgas family", "--suite mpi1|"]),
    ):
        with pytest.raises(ConfigError) as e:
            run_config.parse_run_args(argv)
        assert all(w in str(e.value) for w in words), (argv, str(e.value))
    run_config.parse_run_args(
        ["--per-iteration", "Uniband", "PingPong"]
    )  # one row that uses it is enough


@pytest.mark.parametrize("family", ["p2p", "mt", "net", "msgrate", "overhead", "osu"])
def test_accepted_lists_are_what_the_family_takes(family):
    """The "accepted:" of a family that takes only some general options lists every one it
    takes, generated from the table that decides: each listed option parses, and one of
    every kind it does not take is refused."""
    fam = suites.family(family)
    refused = next(
        o
        for o in OPTIONS
        if o in run_options.OPTIONS and not option_use.takes(o, fam, run_options.OPTIONS)
    )
    with pytest.raises(ConfigError) as e:
        run_config.parse_run_args(
            ["--suite", family, refused.names[0], *(["2"] if refused.parse else [])]
        )
    listed = str(e.value).split("(accepted: ", 1)[1]
    for o in run_options.OPTIONS:
        if (
            o.dest != "help"
            and option_use.takes(o, fam, run_options.OPTIONS)
            or o.dest in run_options.RUN_LEVEL - {"help"}
        ):
            assert re.search(rf"(^| ){re.escape(o.names[0])}[,;]", listed), (o.names[0], listed)
    for o in fam.options:
        assert o.names[0] in listed


# ------------------------------------------------- the rules against the code that uses the options


def _kernels():
    return [(f, b) for f in suites.families() for b in f.benchmarks if isinstance(b, Benchmark)]


def _rule(dest: str, fam, b, values: dict | None = None) -> bool:
    return option_use.RULES[dest].rule(fam, b, values or {}) is None


# option -> what it changes in a RunConfig, and what of the harness's plan of a benchmark it may
# change
CHANGES = {
    "msglog": (lambda c: {"maxlog": 5}, lambda plan, b: plan.sizes(b)),
    "npmin": (lambda c: {"npmin": 4}, lambda plan, b: plan.np_sequence(b)),
    "sync": (lambda c: {"method": replace(c.method, sync=1)}, lambda plan, b: plan.sync(b)),
    "off_cache": (lambda c: {"off_cache": (8.0, 64)}, lambda plan, b: plan.buffers(b, 64, 2, 100)),
    "mpi1_data_type": (
        lambda c: {"params": {**c.params, "mpi1_data_type": "int"}},
        lambda plan, b: plan.data_type(b),
    ),
    "mpi1_red_data_type": (
        lambda c: {"params": {**c.params, "mpi1_red_data_type": "double"}},
        lambda plan, b: plan.data_type(b),
    ),
    "mpi1_window_size": (
        lambda c: {"params": {**c.params, "mpi1_window_size": 7}},
        lambda plan, b: plan.turnover(b, 2),
    ),
}


def test_rules_follow_the_harness_plan():
    """Sizes, process counts, -sync, -off_cache, the IMB 2021 types and -window_size: a
    benchmark is said to use one exactly where the harness's plan of it changes with it."""
    wrong = []
    for fam, b in _kernels():
        base = replace(
            run_config.parse_run_args(["--suite", fam.name]), minlog=0, maxlog=3, npmin=2
        )
        for dest, (change, planned) in CHANGES.items():
            changed = planned(Plan(base, 8), b) != planned(
                Plan(replace(base, **change(base)), 8), b
            )
            if _rule(dest, fam, b) != changed:
                wrong.append(
                    f"{fam.name} {b.name} {dest}: rule says {_rule(dest, fam, b)}, the plan "
                    f"changes {changed}"
                )
    assert not wrong, "\n".join(wrong[:20])


def test_mib_rule_follows_the_columns_printed():
    wrong = []
    for fam, b in _kernels():
        rec = records.Measurement(
            benchmark=b.name,
            family=fam.name,
            kind=b.kind.value,
            np=2,
            mode="",
            bytes=8,
            repetitions=1,
            groups=[[0, 1]],
        )
        printed = "Mbytes/sec" in imb_text.columns(rec, None, False)
        if _rule("mib", fam, b) != printed:
            wrong.append(
                f"{fam.name} {b.name}: rule {_rule('mib', fam, b)}, Mbytes/sec printed {printed}"
            )
    assert not wrong, "\n".join(wrong)


def test_per_row_measuring_rules_are_the_recorded_ones():
    """The per-row rules the harness arms (measuring) agree with the benchmark rule."""
    for fam, b in _kernels():
        modes = b.modes
        rows = [
            row_measurement.per_iteration_skip(fam.name, b.name, b.kind.value, m) is None
            for m in modes
        ]
        assert _rule("per_iteration", fam, b) == any(rows), (fam.name, b.name)


def test_no_option_name_means_two_things():
    """run_options.split_run_argv splits a command line with its evident family's options when
    they know every option given, else with every family's: both split alike only while an
    option name shared by two catalogs (or a catalog and the general options) is one option."""
    seen: dict[str, tuple] = {}
    for fam, opts in [("general", run_options.OPTIONS)] + [
        (f.name, f.options) for f in suites.families()
    ]:
        for o in opts:
            shape = (o.dest, o.parse is None, o.glued, o.multi_names)
            for n in o.names:
                assert seen.setdefault(n, (fam, shape))[1] == shape, (n, fam, seen[n][0])
