"""What a benchmark is: a small declarative descriptor, and the family that holds it.

A descriptor says *what* to measure (pattern, buffer sizes, turnover, expected
receive contents); the harness (commbench.harness) owns *how*. Families whose
experiments are not per-size kernels (osu, p2p, mt, msgrate, overhead, net)
declare Experiments and a procedure (commbench.suites.procedure): what one
measurement of one row is; the harness runs the rows (commbench.harness.rows).
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from commbench.option_types import ALLOC_KINDS, Option
from commbench.policy import STANDARD, Profile
from commbench.records import Kind

__all__ = [
    "Benchmark",
    "Experiment",
    "Family",
    "FamilySettings",
    "Kind",
    "Procs",
    "TWO",
    "ONE",
    "xp",
    "same",
]

# A kernel performs n repetitions of the pattern on this rank and returns the
# elapsed seconds of its timed region (or a tuple of named components, see
# Benchmark.components).  The harness has already run the N_BARR barriers.
Kernel = Callable[[Any, int], Any]


def xp(x: int) -> int:
    """X' = max(X, 4): the buffer bytes behind an X-byte message (spec §6.1)."""
    return max(x, 4)


def same(x: int, np_: int) -> tuple[int, int]:
    """Send and receive buffers of X' bytes each."""
    return xp(x), xp(x)


class FamilySettings:
    """The one settings style of every family: a frozen dataclass of its options.

    A subclass names the option prefix; field `f` holds option dest
    `prefix + f` of cfg.params, or the field's default when the option is
    absent (results files of older versions lack some). Read it with
    `Settings.of(cfg.params)`.
    """

    prefix: ClassVar[str] = ""

    @classmethod
    def of(cls, params: dict) -> Any:
        names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
        return cls(**{n: params[cls.prefix + n] for n in names if cls.prefix + n in params})


@dataclass(frozen=True)
class Procs:
    """The one rule for the process counts a benchmark runs at.

    fixed: only that NP (2 for single transfers, 1 for IMB-IO's S_ benchmarks),
    capped at the world size (a row 'invalid' when the world is smaller);
    otherwise the NP sequence NPmin, 2 NPmin, …, P, where counts below
    `minimum` give 'invalid' rows.
    """

    fixed: int | None = None
    minimum: int = 1

    def allows(self, np_: int) -> bool:
        return np_ >= max(self.fixed or 0, self.minimum)


TWO = Procs(fixed=2)
ONE = Procs(fixed=1)

# A one-sided benchmark's window: over which buffer (commbench.suites.onesided.setup_window)
PUT = "recv"  # window over the receive buffer
GET = "send"  # window over the send buffer


@dataclass(frozen=True)
class Lazy:
    """A kernel, verifier or hook named in a family's catalog by its module and name, and
    imported at its first call, on the ranks that run it: a catalog (the descriptors)
    imports neither MPI nor numpy, so the launcher, `list`, `report` and `compare` load
    neither (tests/mpi/test_startup.py). Calls cost a module lookup more than a plain
    function's, once per timed block, never inside one."""

    module: str
    name: str
    args: tuple | None = None  # a factory's arguments: the target is module.name(*args)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.target()(*args, **kwargs)

    def target(self) -> Callable[..., Any]:
        made = _MADE.get(self)
        if made is None:
            made = getattr(importlib.import_module(self.module), self.name)
            if self.args is not None:
                made = made(*self.args)
            _MADE[self] = made
        return made


_MADE: dict[Lazy, Callable[..., Any]] = {}  # each Lazy's target, made once a process


def hooks(module: str) -> Callable[..., Lazy]:
    """How a catalog names one module's kernels, verifiers and set-ups: name, *args -> the
    Lazy of the module's function `name`, or of what its factory `name` makes of args."""

    def named(name: str, *args: Any) -> Lazy:
        return Lazy(module, name, args or None)

    return named


def mpi_initialized() -> Any:
    """mpi4py.MPI where this process has imported it and initialised MPI (the ranks), else
    None: a catalog's check that asks the MPI library runs there; the launcher's parse,
    `list`, `report` and `compare` load no MPI library (tests/mpi/test_startup.py)."""
    MPI = sys.modules.get("mpi4py.MPI")
    return MPI if MPI is not None and MPI.Is_initialized() else None


@dataclass(frozen=True)
class Benchmark:
    name: str
    family: str
    kind: Kind
    kernel: Kernel
    description: str
    # (X, NP) -> (send bytes, recv bytes) per slot; X' = max(X, 4) is applied by
    # the descriptor itself where the spec says so.
    buffers: Callable[[int, int], tuple[int, int]] = same
    # the buffers where the methodology gives every rank X (Methodology.reduce_scatter_each:
    # IMB 2021.11's Reduce_scatter sends NP·X bytes), else `buffers` again
    buffers_each: Callable[[int, int], tuple[int, int]] | None = None
    unit: int = 1
    turnover: Callable[[int], float] = lambda np_: 1.0  # F of spec §7.5, from NP
    time_factor: float = 1.0  # PingPong reports half the round trip
    default: bool = True  # in the default list, else only by name or -include
    default_in: tuple[
        str, ...
    ] = ()  # methodologies whose default list also has it (IMB 2021's additions)
    # Which IMB 2021 type option sets its MPI datatype and size unit: "data" (-data_type,
    # default byte), "red" (-red_data_type, default float: a reduction), "" (its own).
    typed: str = ""
    root_based: bool = False  # multiple_np under -iter_policy auto
    modes: tuple[str, ...] = ("",)  # "AGGREGATE" / "NON-AGGREGATE" tables
    nonaggr_modes: tuple[str, ...] = ("NON-AGGREGATE",)  # which modes use MSGS_NONAGGR
    nonaggr_cap: bool = False  # cap MSGS_NONAGGR in every mode (EXT Window, IO Open_Close)
    components: tuple[str, ...] = ("t",)  # names of what the kernel returns
    fixed_sizes: tuple[int, ...] | None = None  # e.g. (4,) for Fetch_and_op
    procs: Procs = Procs()  # which NPs it runs at
    slots: bool = False  # disjoint slots even without -off_cache (one-sided)
    off_cache: bool = True  # -off_cache applies
    expected: Callable[[Any, int], Any] | None = None  # check mode verifier
    setup: Callable[[Any], Any] | None = None  # per-X preparation (windows, files)
    teardown: Callable[[Any], Any] | None = None
    comments: tuple[str, ...] = ()  # "Comments on this Benchmark" lines
    dtype: str = "float32"  # assignment type for buffer contents (spec §6.2)
    warmup: bool = True
    native: str | None = None  # the native engine's pattern (commbench.native.PATTERNS)
    fit: bool = False  # --fit fits it (a latency/bandwidth benchmark)
    variant: Any = None  # family data its kernels read (IO's Spec, RMA's operation)
    # per-(benchmark, NP) preparation on the member ranks, f(session, bench, layout),
    # keeping what every size and mode shares in layout.own (IO files); np_teardown runs
    # only after a successful NP, so it may be collective.
    np_setup: Callable[[Any, Benchmark, Any], Any] | None = None
    np_teardown: Callable[[Any, Benchmark, Any], Any] | None = None
    # (params, X, NP) -> bytes per process it allocates beyond the harness's buffers
    # (PGAS segments, strided buffers): counted by -mem and the memory pre-flight.
    memory: Callable[[dict, int, int], int] | None = None
    # (X, NP) -> the largest displacement (bytes) it passes beyond X itself: the
    # v-collectives' (NP-1)*X. Where counts are C ints (an MPI without large-count
    # functions, --int-counts, the native loops) a row past 2^31-1 cannot run.
    int_extent: Callable[[int, int], int] | None = None

    @property
    def sync(self) -> bool:
        return self.kind in (Kind.SYNC, Kind.OVERLAP_SYNC)

    @property
    def has_size(self) -> bool:
        return not self.sync


@dataclass(frozen=True)
class Experiment:
    """A named part of a procedure family's run (overhead's decomposition, a msgrate pattern)."""

    name: str
    description: str
    default: bool = True
    comments: tuple[str, ...] = ()
    unit: int = 1
    fit: bool = False


@dataclass(frozen=True)
class Family:
    """A suite: IMB-MPI1, IMB-EXT, … with its header tag and constant profile."""

    name: str  # mpi1, ext, rma, nbc, io, comms, overhead, msgrate, pgas
    title: str  # "IMB-MPI1"
    part: str  # "MPI-1 part" (header tag, spec §1)
    benchmarks: tuple[Benchmark, ...] | tuple[Experiment, ...]
    profile: Profile = STANDARD
    description: str = ""
    aliases: tuple[str, ...] = ()
    min_world: int = 1
    even_world: bool = False  # PGAS pairs need an even process count
    options: tuple[Option, ...] = ()  # family-specific options; cfg.params holds every one
    # (bare words) -> (the benchmark names among them, params the others set): words a family
    # takes besides its names (osu: OMB's buffer operands, `latency D D`); None: all are names
    operands: Callable[[list[str]], tuple[list[str], dict]] | None = None
    # (RunConfig) -> RunConfig: family options that set core settings (--pgas-reps N)
    configure: Callable[[Any], Any] | None = None
    # (RunConfig, P) -> None, raises ConfigError: checks that need P (PGAS pairing rules)
    validate: Callable[[Any, int], None] | None = None
    # Optional hooks: preamble(cfg) -> extra preamble lines (world rank 0);
    # start(session) and finish(session, completed) wrap the run on every rank
    # (finish also after a failure, with completed False: then it must not communicate).
    preamble: Callable[[Any], list[str]] | None = None
    start: Callable[[Any], None] | None = None
    finish: Callable[[Any, bool], None] | None = None
    # Families of Experiments, which follow a procedure of their own (OSU's, IMB-P2P's,
    # a seed's): procedure(session) -> commbench.suites.procedure.Procedure, whose rows
    # the harness measures (commbench.harness.rows).
    procedure: Callable[[Any], Any] | None = None
    # What -time means to a procedure family's own steps ("" : nothing; then -time bounds
    # only the samples of --samples K or --precision, commbench.suites.option_use).
    secs: str = ""
    # The text view that prints the run: a key of commbench.views.TEXT_VIEWS.
    view: str = "imb"
    # The buffer allocation kind (commbench.option_types.ALLOC_KINDS) the family's runs use
    # unless --alloc is given; the run records whichever was used. "mpi": MPI_Alloc_mem,
    # which the spec (§6.1) says one-sided families SHOULD use.
    alloc: str = "numpy"
    # The general options (RunConfig dests, beyond the run-level ones every family
    # takes: -o, --csv, --timeout, -n …) this family uses; None: all of them. A run
    # that gives one it does not use is refused, never silently recorded.
    honours: frozenset[str] | None = None
    # Driver families: (params, P) -> (largest bytes per process, what needs them), for
    # the memory pre-flight that kernel families get from their buffer plans.
    memory: Callable[[dict, int], tuple[int, str]] | None = None
    # Fit every fittable table by default (--no-fit turns it off): COMMS prints
    # r_inf and n_1/2 after each table (seed 000).
    fits: bool = False
    # Its collectives follow -sync and -root_shift (commbench.imb_methodology): IMB 2021's
    # MPI1, NBC and MPI4 parts.
    methodology: bool = False
    # IMB 2021.11's order of the default list, where it differs from the seed's (IMB-RMA).
    imb2021_order: tuple[str, ...] = ()

    @property
    def kernels(self) -> bool:
        """Does the harness sweep its Benchmark kernels (not rows of a procedure of its own)?"""
        return self.procedure is None

    @property
    def has_native(self) -> bool:
        """Does any benchmark have a C timed loop (--engine native|both means something)?"""
        return any(getattr(b, "native", "") for b in self.benchmarks)

    def __post_init__(self) -> None:
        if self.alloc not in ALLOC_KINDS:
            raise ValueError(
                f"family {self.name}: alloc {self.alloc!r} is not one of {ALLOC_KINDS}"
            )

    def default_list(self, methodology: str = "imb4") -> list[str]:
        """The run list without names: the seed's,
        plus IMB 2021's additions under its methodology."""
        names = [
            b.name
            for b in self.benchmarks
            if b.default or methodology in getattr(b, "default_in", ())
        ]
        if methodology == "imb2021" and self.imb2021_order:
            order = self.imb2021_order
            names.sort(key=lambda n: order.index(n) if n in order else len(order))
        return names

    def get(self, name: str) -> Benchmark | Experiment | None:
        low = name.lower()
        for b in self.benchmarks:
            if b.name.lower() == low:
                return b
        return None
