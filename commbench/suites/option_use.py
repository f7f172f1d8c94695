"""Which options a run uses: the one decision behind "an option the run would not use is
refused" (docs/options.md), read from declarations.

For every option given, in this order:

1. a family's own option (Family.options) belongs to it: given to another family, refused;
2. Family.honours: the general options a family uses (None: all of them);
3. the benchmarks selected: an option some benchmarks use and others do not is refused when
   none of the run's use it. RULES below says why a benchmark does not use a general
   option, from its descriptor (kind, modes, sizes, process counts, verifier, C loop, fit,
   root, warm-up, type) and from commbench.row_measurement, the functions the harness itself
   reads; a family option declares it with Option(uses=...).

commbench.run_config calls `refusal` while parsing (in the launcher: no MPI); the refusals and
their "accepted:" forms are generated here from the same declarations, and
tests/mpi/test_option_matrix.py runs the matrix of options x families x benchmarks over them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from commbench import imb_methodology, row_measurement, suites
from commbench.option_types import Option
from commbench.records import Kind
from commbench.suites.base import Benchmark, Family

# (family, descriptor, the run's option values) -> why the descriptor does not use the option,
# or None when it does.
Rule = Callable[[Family, Any, dict], "str | None"]


@dataclass(frozen=True)
class Use:
    rule: Rule
    none: str  # what a family none of whose benchmarks use it lacks ("has no collectives …")


def _kernel(b) -> bool:
    return isinstance(b, Benchmark)


def _modes(b: Benchmark, values: dict) -> tuple[str, ...]:
    return imb_methodology.modes(imb_methodology.resolve(values), b.modes)


def _per_iteration(fam: Family, b, values: dict) -> str | None:
    if not _kernel(b):
        return None
    whys = [
        row_measurement.per_iteration_skip(fam.name, b.name, b.kind.value, m)
        for m in _modes(b, values)
    ]
    return None if None in whys else whys[0]


def _sync_start(fam: Family, b, values: dict) -> str | None:
    if not _kernel(b) or any(
        row_measurement.window_applies(fam.name, b.name, b.kind.value, m) for m in _modes(b, values)
    ):
        return None
    if b.kind.value not in row_measurement.WINDOW_KINDS:
        return f"not a collective ({b.kind.value}): no repetitions started together"
    return _per_iteration(fam, b, values) or "its repetitions are not started one by one"


def _sync(fam: Family, b, values: dict) -> str | None:
    if _kernel(b) and fam.methodology and b.kind in (Kind.COLLECTIVE, Kind.OVERLAP):
        return None  # harness.plan.Plan.sync
    return "not a collective timed call by call under IMB 2021's -sync"


def _root_shift(fam: Family, b, values: dict) -> str | None:
    return None if _kernel(b) and fam.methodology and b.root_based else "not a rooted collective"


def _modes_rule(fam: Family, b, values: dict) -> str | None:
    return None if not _kernel(b) or len(b.modes) > 1 else "one mode only"


def _sizes(fam: Family, b, values: dict) -> str | None:
    if not _kernel(b):
        return None
    if b.sync:
        return "no message size (one row per process count)"
    if b.fixed_sizes:
        return (
            f"fixed size{'s' * (len(b.fixed_sizes) > 1)} {', '.join(map(str, b.fixed_sizes))} bytes"
        )
    return None


def _npmin(fam: Family, b, values: dict) -> str | None:
    if _kernel(b) and b.procs.fixed is not None:
        return f"runs at {b.procs.fixed} process{'es' * (b.procs.fixed > 1)} only"
    return None


def _off_cache(fam: Family, b, values: dict) -> str | None:
    if not _kernel(b):
        return None
    if b.sync:
        return "no message buffers"
    if not b.off_cache or fam.profile.name == "io":  # harness.plan.Plan.buffers
        return "its buffers are its own (no off-cache slots)"
    return None


def _check(fam: Family, b, values: dict) -> str | None:
    verifies = b.expected is not None if _kernel(b) else getattr(b, "checked", True)
    return None if verifies else "no verifier (no data it receives to check)"


def _fit(fam: Family, b, values: dict) -> str | None:
    return (
        None if getattr(b, "fit", False) else "not a latency/bandwidth table the Hockney model fits"
    )


def _no_fit(fam: Family, b, values: dict) -> str | None:
    if not (fam.fits or "fit" in values or "breakpoints" in values):
        return "nothing to turn off: it is fitted only with --fit"
    return _fit(fam, b, values)


def _engine(fam: Family, b, values: dict) -> str | None:
    if values.get("engine") == "mpi4py" or getattr(b, "native", None):
        return None
    return "no C timed loop (its loop runs in mpi4py)"


MBYTES_KINDS = (
    Kind.SINGLE,
    Kind.SINGLE_ONE,
    Kind.MULTIPLE,
    Kind.PARALLEL,
    Kind.RATE,
)  # views.imb_text.columns


def _mib(fam: Family, b, values: dict) -> str | None:
    return None if not _kernel(b) or b.kind in MBYTES_KINDS else "no Mbytes/sec column"


def _warm_up(fam: Family, b, values: dict) -> str | None:
    return None if not _kernel(b) or b.warmup else "no warm-up"


def _window(fam: Family, b, values: dict) -> str | None:
    if (_kernel(b) and b.kind == Kind.RATE) or getattr(b, "window", False):
        return None
    return "sends no window of messages"


def _overlap(fam: Family, b, values: dict) -> str | None:
    if not _kernel(b) or b.kind in (Kind.OVERLAP, Kind.OVERLAP_SYNC):
        return None
    return "no computation overlapped with it (a pure or blocking flavour)"


def _typed(which: str, other: str) -> Rule:
    def rule(fam: Family, b, values: dict) -> str | None:
        if getattr(b, "typed", "") == which:
            return None
        return (
            f"typed by {other}" if getattr(b, "typed", "") else "its messages have no IMB 2021 type"
        )

    return rule


def _time(fam: Family, b, values: dict) -> str | None:
    """-time bounds a procedure family's row only through its samples (harness.rows)."""
    if fam.procedure is None or fam.secs or values.get("samples", 1) > 1 or "precision" in values:
        return None
    return (
        "its repetitions are its own; -time bounds only the samples of --samples K or --precision"
    )


SIZES = Use(_sizes, "has no benchmark with a message-size sweep")
RULES: dict[str, Use] = {
    "per_iteration": Use(_per_iteration, "times no repetition on its own"),
    "time": Use(
        _time, "takes -time only with --samples K or --precision (it bounds their samples)"
    ),
    "sync_start": Use(_sync_start, "has no collective whose repetitions it starts"),
    "sync": Use(_sync, "has no collectives it applies to"),
    "root_shift": Use(_root_shift, "has no collectives with a root it shifts"),
    "aggregate_mode": Use(_modes_rule, "has no AGGREGATE/NON-AGGREGATE modes"),
    "msglog": SIZES,
    "msglen": SIZES,
    "maxlog": SIZES,
    "zero_size": SIZES,
    "npmin": Use(_npmin, "has no benchmark that runs at a sequence of process counts"),
    "off_cache": Use(_off_cache, "has no buffers -off_cache places"),
    "check": Use(_check, "has no verifier"),
    "fit": Use(_fit, "has no table the Hockney model fits"),
    "breakpoints": Use(_fit, "has no table the Hockney model fits"),
    "no_fit": Use(_no_fit, "fits nothing by default"),
    "engine": Use(_engine, "has no C timed loops, its loops run in mpi4py"),
    "mib": Use(_mib, "prints no Mbytes/sec"),
    "warm_up": Use(_warm_up, "has no warm-up runs"),
    "mpi1_window_size": Use(_window, "has no windows of messages"),
    "mpi1_data_type": Use(_typed("data", "-red_data_type"), "has no benchmark typed by -data_type"),
    "mpi1_red_data_type": Use(
        _typed("red", "-data_type"), "has no reduction typed by -red_data_type"
    ),
    # family options declared in modules of their own (nbc, mpi4, io), kept with the general ones
    "nbc_cpu_factor": Use(_overlap, "has no computation overlapped"),
    "mpi4_cpu_factor": Use(_overlap, "has no computation overlapped"),
    "io_cpu_secs": Use(_overlap, "has no computation overlapped"),
}


def rule_of(opt: Option) -> Use | None:
    """The declaration that says which benchmarks use opt (None: every one of a family that takes
    it)."""
    if opt.uses is not None:
        uses = opt.uses
        return Use(
            lambda fam, b, values: None if uses(b) else f"{opt.names[0]} does not apply to it",
            f"has no benchmark {opt.names[0]} applies to",
        )
    return RULES.get(opt.dest)


def users(opt: Option, fam: Family, values: dict) -> list[str]:
    """The benchmarks of fam that use opt with these values (all when no rule says otherwise)."""
    use = rule_of(opt)
    return [b.name for b in fam.benchmarks if use is None or use.rule(fam, b, values) is None]


def takes(opt: Option, fam: Family, general: Iterable[Option]) -> bool:
    """Does fam take opt at all (its own option, or a general one it honours)?"""
    if opt in fam.options:
        return True
    return opt in general and (fam.honours is None or opt.dest in fam.honours)


def why_unused(
    opt: Option,
    fam: Family,
    run: list[str],
    values: dict,
    general: tuple[Option, ...],
    run_level: frozenset[str],
    families: Callable[[], list[Family]],
) -> str | None:
    """The refusal of opt in a run of fam's benchmarks `run`, or None when the run uses it.
    families() gives every family (loaded only to name another family's option in a refusal)."""
    name = opt.names[0]
    if opt.dest in run_level:
        return None
    if opt not in general and opt not in fam.options:
        owner = next((f for f in families() if opt in f.options), None)
        if owner is not None:
            return (
                f"{name} is an option of the {owner.name} family ({owner.title}), not of "
                f"{fam.name} (accepted: --suite {owner.name}, or no {name})"
            )
    if not takes(opt, fam, general):
        return (
            f"{name}: the {fam.name} family does not use it (accepted: "
            f"{accepted_options(fam, general, run_level)}; no {name})"
        )
    use = rule_of(opt)
    if use is None:
        return None
    whys = {n: use.rule(fam, fam.get(n), values) for n in run}
    if any(w is None for w in whys.values()):
        return None
    those = users(opt, fam, values)
    if not those:
        elsewhere = [f.name for f in families() if takes(opt, f, general) and users(opt, f, values)]
        where = f"--suite {'|'.join(elsewhere)}, or " if elsewhere else ""
        return f"{name}: the {fam.name} family {use.none} (accepted: {where}no {name})"
    said = "; ".join(f"{n}: {w}" for n, w in list(whys.items())[:4]) + (
        "; …" if len(whys) > 4 else ""
    )
    shown = ", ".join(those[:8]) + (f" … ({len(those)} in all)" if len(those) > 8 else "")
    return (
        f"{name}: no benchmark of this run uses it ({said}) (accepted: with a benchmark that uses "
        f"it, {shown}; or no {name})"
    )


def accepted_options(fam: Family, general: tuple[Option, ...], run_level: frozenset[str]) -> str:
    """What fam takes, generated from its options and honours: the "accepted:" of a refusal."""
    own = [o.names[0] for o in fam.options]
    used = [o.names[0] for o in general if o.dest not in run_level and takes(o, fam, general)]
    every = [o.names[0] for o in general if o.dest in run_level and o.dest != "help"]
    parts = [
        f"its own options {', '.join(own)}" if own else "",
        f"the general options it uses {', '.join(used)}" if used else "",
        f"those of every run {', '.join(every)}",
    ]
    return "; ".join(p for p in parts if p)


def refusal(
    fam: Family,
    run: list[str],
    values: dict,
    options: list[Option],
    general: tuple[Option, ...],
    run_level: frozenset[str],
    families: Callable[[], list[Family]],
) -> str | None:
    """The first given option the run would not use, as its refusal; None when it uses them all
    (families: as why_unused's)."""
    seen: set[int] = set()
    for opt in options:
        if id(opt) in seen:
            continue
        seen.add(id(opt))
        if opt.dest in values:
            why = why_unused(opt, fam, run, values, general, run_level, families)
            if why:
                return why
    return None


def thread_level_refusal(fam: Family, run: list[str], level: str | None) -> str | None:
    """Benchmarks whose threads call MPI at once (suites.THREADED, THREADED_BENCHMARKS) need
    MPI_THREAD_MULTIPLE: a lower -thread_level is refused as what it is, before anything
    else can report it as another problem (a name, a process count)."""
    whole = fam.name in suites.THREADED
    need = (
        list(run)
        if whole
        else [n for n in run if n in suites.THREADED_BENCHMARKS.get(fam.name, ())]
    )
    if level in (None, "multiple") or not need:
        return None
    what, s = (
        (f"the {fam.name} family ({fam.title})", "s")
        if whole
        else (", ".join(need), "s" * (len(need) == 1))
    )
    return (
        f"{what} call{s} MPI from several threads at once and need{s} MPI_THREAD_MULTIPLE, but "
        f"-thread_level {level} was given (accepted: -thread_level multiple, or no -thread_level)"
    )


def table(
    general: tuple[Option, ...], run_level: frozenset[str], families: list[Family]
) -> list[str]:
    """Which general option each family uses, as a Markdown table generated from the same
    declarations the refusals come from (docs/options.md quotes it: `commbench list --options`).
    A cell: "all" (every benchmark), "k/n" (k of its n benchmarks), "—" (refused: the
    family does not take it), or a number naming a note (taken, used only as the note says)."""
    opts = [o for o in general if o.dest not in run_level]
    head = "| option | " + " | ".join(f.name for f in families) + " |"
    lines, notes = [head, "|" + "---|" * (len(families) + 1)], []
    for opt in opts:
        cells = []
        for fam in families:
            if not takes(opt, fam, general):
                cells.append("—")
                continue
            n, k = len(fam.benchmarks), len(users(opt, fam, {}))
            if k:
                cells.append("all" if k == n else f"{k}/{n}")
                continue
            note = f"the {fam.name} family {rule_of(opt).none}"  # type: ignore[union-attr]
            notes.append(note)
            cells.append(f"({len(notes)})")
        lines.append(f"| `{opt.names[0]}` | " + " | ".join(cells) + " |")
    return lines + [""] + [f"({i}) {n}" for i, n in enumerate(notes, 1)]
