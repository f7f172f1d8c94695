"""Every `commbench run` option parsed and validated in one place, into one RunConfig.

The options are commbench.run_options' table, the family and its benchmarks what
commbench.selection makes of the names. Bad input raises ConfigError with one line
naming what was wrong and the accepted form; nothing downstream re-parses strings.
Nothing here imports MPI.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from commbench import (
    imb_methodology,
    options_file,
    policy,
    process_origin,
    records,
    row_measurement,
    suites,
)
from commbench.option_types import (  # noqa: F401 - ConfigError, HelpRequested: the config vocabulary
    THREAD_LEVELS,
    ConfigError,
    HelpRequested,
    read_msglen_file,
    read_name_file,
    readable_file,
)
from commbench.outputs import check_distinct, check_writable, default_output, normal_output  # noqa: F401 - API
from commbench.redact import redact
from commbench.run_options import OPTIONS, RUN_LEVEL, all_options, hinted_family, split_run_argv
from commbench.selection import select
from commbench.suites import option_use


@dataclass(frozen=True)
class RunConfig:
    family: str
    benchmarks: tuple[str, ...]
    profile: policy.Profile
    npmin: int
    multi: int | None
    off_cache: tuple[float, int] | None
    msgspersample: int
    overall_vol: int
    msgs_nonaggr: int
    iter_policy: str
    secs: float
    max_mem: float
    minlog: int
    maxlog: int
    msglen: tuple[int, ...] | None
    map: tuple[int, int] | None
    thread_level: str | None
    check: bool
    alloc: str
    hugepages: str
    output: str | None
    csv: str | None
    mb_unit: int
    np: int | None
    mpiexec: str | None
    argv: tuple[str, ...]
    # dest -> [raw value each time given] of every option given, -load's first, then the
    # command line's, in the order given: what code after configuration asks, not argv
    given: dict = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    params: dict = field(default_factory=dict)  # family-specific options
    engine: str = "native"  # native | mpi4py | both (commbench.native.resolve)
    timeout: float | None = None  # --timeout; None: watchdog_timeout() picks the default
    store: str | bool | None = None  # --store: True the default store, else its path or URL
    system: str | None = None  # --system: the run's system in the store
    tags: tuple[str, ...] = ()  # --tag
    expect: str | None = None  # --expect: the rules the finished run is judged by
    link_rate: str | None = None  # --link-rate: the line rate between hosts, as given
    # --fit: Hockney fits printed and stored (views.fit_text); a Family.fits default
    fit: bool = False
    breakpoints: tuple[int, ...] = ()  # --breakpoint: the fits' breakpoints; () automatic
    int_counts: bool = False  # --int-counts: IMB's C int limits (harness.plan.Plan.int_overflow)
    rank_detail: int | None = records.RANK_DETAIL  # --rank-detail (records.summarise); None all
    samples: int = 1  # --samples K: K timed runs per row (records.sample_stats)
    force: bool = False  # --force: run a --samples plan past resources.samples_plan's limit
    # --methodology, -sync, …
    method: imb_methodology.Methodology = imb_methodology.PROFILES[imb_methodology.DEFAULT]
    # --per-iteration, --sync-start, --precision …
    measuring: row_measurement.Measuring = row_measurement.Measuring()

    def watchdog_timeout(self) -> float:
        """Seconds without progress before the watchdog ends the job (0 = off)."""
        return self.timeout if self.timeout is not None else max(300.0, 3 * self.secs)

    def resolved(self) -> dict:
        """Every setting as plain data, for the results file."""
        out = {
            k: getattr(self, k)
            for k in self.__dataclass_fields__
            if k not in ("profile", "params", "method", "measuring", "given")
        }
        out["profile"] = self.profile.name
        out["methodology"] = self.method.as_dict()
        out["measuring"] = self.measuring.as_dict()
        out["params"] = dict(self.params)
        out["argv"] = [redact(a) for a in self.argv]  # a store URL's password is not recorded
        out["store"] = redact(self.store)
        return out


def _refuse_unused(fam: suites.Family, run_list: list[str], values: dict) -> None:
    """An option the run would not use is an error that names it, never silently recorded:
    decided by commbench.suites.option_use from the families' and benchmarks' declarations."""
    known = [*OPTIONS, *fam.options]  # every family's only where another's option was given
    if not set(values) - {"operands"} <= {o.dest for o in known}:  # (operands: selection's)
        known = all_options()
    why = option_use.refusal(fam, run_list, values, known, OPTIONS, RUN_LEVEL, suites.families)
    why = why or option_use.thread_level_refusal(fam, run_list, values.get("thread_level"))
    if why:
        raise ConfigError(why)
    if values.get("force") and values.get("samples", 1) <= 1:
        raise ConfigError(
            "--force only lifts the limit of a --samples plan (accepted: --samples K with K > 1, "
            "or no --force)"
        )


# Options whose value is the configuration's as parsed (None when not given).
AS_GIVEN = (
    "off_cache", "map", "thread_level", "csv", "mpiexec", "timeout", "store", "system", "expect",
    "link_rate",
)  # fmt: skip


def parse_run_args(argv: list[str], world_size: int | None = None) -> RunConfig:
    """Parse `commbench run` arguments; world_size enables the checks that need P."""
    values, names, given = _options_and_names(argv)
    fam, run_list, multi_prefix = select(values, names, hinted_family())
    _refuse_unused(fam, run_list, values)
    prof = fam.profile
    multi = 0 if values.get("multi") is None and multi_prefix else values.get("multi")  # A3
    msgs, vol, nonaggr, pol = policy.repetition_settings(values, list(given), prof)
    minlog, maxlog = _size_range(values, prof)
    msglen, np_ = _msglen_and_np(values, world_size)
    cfg = RunConfig(
        family=fam.name,
        benchmarks=tuple(run_list),
        profile=prof,
        npmin=values.get("npmin", prof.npmin),
        multi=multi,
        msgspersample=msgs,
        overall_vol=vol,
        msgs_nonaggr=nonaggr,
        iter_policy=pol,
        secs=values.get("time", prof.secs_per_sample),
        max_mem=values.get("mem", policy.MAX_MEM_GB),
        minlog=minlog,
        maxlog=maxlog,
        msglen=msglen,
        check=bool(values.get("check", False)),
        alloc=values.get("alloc", fam.alloc),  # the family's kind unless --alloc (ext/rma: mpi)
        hugepages=values.get("hugepages", "default"),
        output=normal_output(values.get("output")),
        mb_unit=2**20 if values.get("mib") else 10**6,
        np=np_,
        argv=tuple(argv),
        given=given,
        params=_family_params(fam, values),
        **{k: values.get(k) for k in AS_GIVEN},
        engine=values.get("engine", "native" if fam.has_native else "mpi4py"),
        tags=tuple(t for t in (values.get("tag") or "").split(",") if t),
        fit=_fits(fam, values),
        breakpoints=values.get("breakpoints", ()),
        int_counts=bool(values.get("int_counts")),
        rank_detail=values.get("rank_detail", records.RANK_DETAIL),
        samples=values.get("samples", 1),
        force=bool(values.get("force", False)),
        method=imb_methodology.resolve(values),
        measuring=row_measurement.resolve(values),
    )
    if fam.configure is not None:
        cfg = fam.configure(cfg)
    size = world_size if world_size is not None else np_
    if size is not None:
        check_world(cfg, size)
    return cfg


def _msglen_and_np(
    values: dict[str, Any], world_size: int | None
) -> tuple[list[int] | None, int | None]:
    """-msglen's sizes (None: no file) and -n, refused where they cannot be."""
    msglen = read_msglen_file(values["msglen"]) if "msglen" in values else None
    if msglen is not None and not any(msglen) and values.get("zero_size") is False:
        raise ConfigError(
            "-zero_size off leaves no size of the -msglen file (accepted: a size > 0 in it, or "
            "-zero_size on)"
        )
    np_ = values.get("np")
    if np_ is not None and world_size is not None and np_ != world_size:
        raise ConfigError(
            f"-n {np_} given inside an MPI job of {world_size} processes (accepted: no -n inside a "
            "job "
            f"started by mpiexec/srun, or -n {world_size}; or run commbench run -n {np_} outside "
            "any job)"
        )
    return msglen, np_


def _options_and_names(argv: list[str]) -> tuple[dict[str, Any], list[str], dict]:
    """The options and bare names of argv, with a -load file's under them (commbench.options_file),
    and the options given (dest -> raw value; the file's first, then the command line's, which
    come later and win)."""
    given: dict = {}
    values, names = split_run_argv(list(argv), given)
    if "load" in values:
        loaded_given: dict = {}
        loaded, loaded_names = _loaded(values["load"], loaded_given)
        values, names = {**loaded, **values}, names or loaded_names
        given = {**{k: v for k, v in loaded_given.items() if k not in given}, **given}
    return values, names, given


# Where and how a job starts, which a command line says and an options file cannot: the
# file is read inside the job too, whose size was set before (-dump never writes them).
LAUNCH_ONLY = ("np", "mpiexec")


def _loaded(path: str, given: dict) -> tuple[dict[str, Any], list[str]]:
    """The options and names of a -load file; ConfigError for what a file cannot set."""
    file_argv = options_file.read(path)
    try:
        loaded, names = split_run_argv(file_argv, given)
    except HelpRequested:
        raise ConfigError(
            f"-load {path}: its argv asks for -h (accepted: options and benchmark names)"
        ) from None
    except ConfigError as e:
        raise ConfigError(f"-load {path}: {e}") from None
    for dest in LAUNCH_ONLY:
        if dest in loaded:
            name = next(o.names[0] for o in OPTIONS if o.dest == dest)
            raise ConfigError(
                f"-load {path}: its argv has {name} {loaded[dest]}, which says where the job "
                "starts, "
                "not what it measures, and cannot apply to a job already started (accepted: "
                f"{name} "
                f"on the command line, e.g. commbench run {name} {loaded[dest]} -load {path}; "
                "remove "
                f"{name} from the file's argv)"
            )
    return loaded, names


def _fits(fam: suites.Family, values: dict) -> bool:
    """--fit, --breakpoint, or the family's default (comms, seed 000); --no-fit wins over a
    default only."""
    asked = bool(values.get("fit")) or "breakpoints" in values
    if values.get("no_fit") and asked:
        raise ConfigError("--no-fit contradicts --fit / --breakpoint (accepted: one of them)")
    return (asked or fam.fits) and not values.get("no_fit")


def _size_range(values: dict, prof: policy.Profile) -> tuple[int, int]:
    """(minlog, maxlog) from -msglog and --maxlog."""
    minlog, maxlog = prof.minmsglog, prof.maxmsglog
    if "msglog" in values:
        lo, hi = values["msglog"]
        maxlog = hi
        if lo is not None:
            minlog = lo
        elif minlog >= maxlog:
            raise ConfigError(f"-msglog {hi}: maxlog must exceed minlog {minlog}")
    if "maxlog" in values:
        big = values["maxlog"]
        if not 31 <= big <= 40:
            raise ConfigError(
                f"--maxlog {big}: out of range (accepted: --maxlog <31..40>; below 31 use -msglog)"
            )
        if "msglog" in values:
            raise ConfigError(
                f"--maxlog {big} contradicts -msglog {values['msglog'][1]} (accepted: one of them; "
                "-msglog [<minlog>:]<maxlog < 31> or --maxlog <31..40>)"
            )
        maxlog = big
    return minlog, maxlog


def _family_params(fam: suites.Family, values: dict) -> dict:
    """The family's own options: given values, else their declared defaults."""
    params = dict(values.get("operands", {}))
    for opt in fam.options:
        if opt.dest in values:
            params[opt.dest] = values[opt.dest]
        elif opt.default is not None:
            params[opt.dest] = opt.default
    return params


def check_world(cfg: RunConfig, size: int) -> None:
    """Checks that need the process count P."""
    if cfg.map is not None:
        # Spec §3.4 requires A*B >= P and says it SHOULD equal P. With more places than
        # processes the placement keys leave gaps: groups then miss members and the
        # first collective deadlocks (or a pairing silently runs on part of the world),
        # so commbench requires equality.
        a, b = cfg.map
        if a * b != size:
            fits = [f"{d}x{size // d}" for d in range(1, size + 1) if size % d == 0]
            raise ConfigError(
                f"-map {a}x{b}: {a}*{b} = {a * b} places for {size} processes; they must match "
                f"(accepted: -map AxB with A*B = {size}: {', '.join(fits)})"
            )
    fam = suites.family(cfg.family)
    if size < fam.min_world:
        raise ConfigError(
            f"family {fam.name} needs at least {fam.min_world} processes, got {size} "
            f"(accepted: mpiexec -n <N >= {fam.min_world}>)"
        )
    if fam.even_world and size % 2:
        raise ConfigError(
            f"family {fam.name} needs an even number of processes (communicating pairs), got "
            f"{size} "
            "(accepted: mpiexec -n <even N>)"
        )
    _something_runs(cfg, fam, size)
    if fam.validate is not None:
        fam.validate(cfg, size)


def _something_runs(cfg: RunConfig, fam: suites.Family, size: int) -> None:
    """A run in which no benchmark can run at any process count measures nothing:
    refused (IMB prints only 'invalid' rows and exits 0)."""
    need = {}
    for b in (fam.get(n) for n in cfg.benchmarks):
        if not isinstance(b, suites.Benchmark):
            return
        nps = (
            [min(b.procs.fixed, size)]
            if b.procs.fixed is not None
            else policy.np_sequence(size, cfg.npmin)
        )
        if any(b.procs.allows(n) for n in nps):
            return
        need[b.name] = max(b.procs.fixed or 0, b.procs.minimum)
    least = min(need.values())
    names = ", ".join(f"{n} needs {k}" for n, k in need.items())
    if len(need) > 3 and len(set(need.values())) == 1:
        names = f"each of its {len(need)} benchmarks needs {least}"
    raise ConfigError(
        f"nothing to measure with {size} process{'es' if size > 1 else ''}: {names} "
        f"(accepted: -n {least} or more)"
    )


def dump_path(argv: list[str]) -> str | None:
    """The -dump file of argv (parsed already), else None."""
    return next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-dump"), None)


def with_output(cfg: RunConfig, output: str | None) -> RunConfig:
    return replace(cfg, output=output)


def scan_thread_level(argv: list[str]) -> str | None:
    """Every rank reads -thread_level itself before MPI is initialised (spec §13.1); a
    family whose threads call MPI at once (suites.THREADED: mt) asks for multiple."""
    # a -load file's options and an -input file's names count too
    argv = list(argv) + _files_words(argv)
    for i, a in enumerate(argv[:-1]):
        if a == "-thread_level" and argv[i + 1].lower() in THREAD_LEVELS:
            return argv[i + 1].lower()
    named = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--suite"]
    named += (
        [a.split("=", 1)[1] for a in argv if a.startswith("--suite=")]
        + list(argv)
        + [process_origin.family_hint() or ""]
    )
    return "multiple" if suites.threaded(named) else None


def _files_words(argv: list[str]) -> list[str]:
    """The words of argv's -load and -input files, for scan_thread_level (before MPI starts:
    a file it cannot read is left to the parse, which says what is wrong with it)."""
    words: list[str] = []
    for i, a in enumerate(argv[:-1]):
        try:
            if a == "-load":
                # never opens a FIFO
                words += options_file.read(readable_file("-load")(argv[i + 1]))
            elif a == "-input":
                words += read_name_file(readable_file("-input")(argv[i + 1]))
        except ConfigError:
            continue
    for i, a in enumerate(words[:-1]):  # the -load file's own -input
        if a == "-input" and "-input" not in argv:
            try:
                words += read_name_file(readable_file("-input")(words[i + 1]))
            except ConfigError:
                continue
    return words
