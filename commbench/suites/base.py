"""What a benchmark is: a small declarative descriptor, and the family that holds it.

A descriptor says *what* to measure (pattern, buffer sizes, turnover, expected
receive contents); the harness (commbench.harness) owns *how*.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from commbench.policy import STANDARD, Profile


class Kind(str, Enum):
    """Classification that decides process counts and output columns (spec §14.3)."""

    SINGLE = "single"  # two processes, t = t_max, throughput
    PARALLEL = "parallel"  # NP sequence, t_min/t_max/t_avg, throughput
    COLLECTIVE = "collective"  # NP sequence, t_min/t_max/t_avg
    SYNC = "sync"  # one row without size
    MULTIPLE = "multiple"  # RMA one-to-all: t, throughput ×(NP−1)
    OVERLAP = "overlap"  # t_ovrl, t_pure, t_CPU, overlap
    OVERLAP_SYNC = "overlap_sync"  # Ibarrier: overlap columns without size
    PASSIVE = "passive"  # Truly_passive_put: t_pure, t_ovrl
    SINGLE_ONE = "single_one"  # S_ IO: one process


# A kernel performs n repetitions of the pattern on this rank and returns the
# elapsed seconds of its timed region (or a tuple of named components, see
# Benchmark.components).  The harness has already run the N_BARR barriers.
Kernel = Callable[["Context", int], Any]


@dataclass(frozen=True)
class Benchmark:
    name: str
    family: str
    kind: Kind
    kernel: Kernel
    description: str
    # (X, NP) -> (send bytes, recv bytes) per slot; X' = max(X, 4) is applied by
    # the descriptor itself where the spec says so.
    buffers: Callable[[int, int], tuple[int, int]] = lambda x, np_: (max(x, 4), max(x, 4))
    unit: int = 1
    turnover: Callable[[int], float] = lambda np_: 1.0  # F of spec §7.5, from NP
    time_factor: float = 1.0  # PingPong reports half the round trip
    default: bool = True  # in the default list, else only by name or -include
    root_based: bool = False  # multiple_np under -iter_policy auto
    modes: tuple[str, ...] = ("",)  # "AGGREGATE" / "NON-AGGREGATE" tables
    nonaggr_modes: tuple[str, ...] = ("NON-AGGREGATE",)  # which modes use MSGS_NONAGGR
    nonaggr_cap: bool = False  # cap MSGS_NONAGGR in every mode (EXT Window, IO Open_Close)
    components: tuple[str, ...] = ("t",)  # names of what the kernel returns
    fixed_sizes: tuple[int, ...] | None = None  # e.g. (4,) for Fetch_and_op
    min_np: int = 1
    two_process: bool = False  # NP = 2 only (single transfers)
    slots: bool = False  # disjoint slots even without -off_cache (one-sided)
    off_cache: bool = True  # -off_cache applies
    expected: Callable[[Context, int], Any] | None = None  # check mode verifier
    setup: Callable[[Context], Any] | None = None  # per-X preparation (windows, files)
    teardown: Callable[[Context], Any] | None = None
    comments: tuple[str, ...] = ()  # "Comments on this Benchmark" lines
    dtype: str = "float32"  # assignment type for buffer contents (spec §6.2)
    warmup: bool = True
    extra: dict = field(default_factory=dict)
    one_process: bool = False  # NP = 1 only, like Kind.SINGLE_ONE (IO S_I* overlap flavours)
    # per-(benchmark, NP) preparation on the member ranks, f(harness, bench, layout),
    # sharing layout.state with every size and mode (IO files); np_teardown runs
    # only after a successful NP, so it may be collective.
    np_setup: Callable[[Any, Benchmark, Any], Any] | None = None
    np_teardown: Callable[[Any, Benchmark, Any], Any] | None = None

    @property
    def sync(self) -> bool:
        return self.kind in (Kind.SYNC, Kind.OVERLAP_SYNC)

    @property
    def has_size(self) -> bool:
        return not self.sync


@dataclass(frozen=True)
class Family:
    """A suite: IMB-MPI1, IMB-EXT, … with its header tag and constant profile."""

    name: str  # mpi1, ext, rma, nbc, io, comms, overhead, msgrate, pgas
    title: str  # "IMB-MPI1"
    part: str  # "MPI-1 part" (header tag, spec §1)
    benchmarks: tuple[Benchmark, ...]
    profile: Profile = STANDARD
    description: str = ""
    aliases: tuple[str, ...] = ()
    min_world: int = 1
    even_world: bool = False  # PGAS pairs need an even process count
    options: tuple[Any, ...] = ()  # family-specific commbench.config.Option entries
    # (RunConfig) -> RunConfig: family options that set core settings (--pgas-reps N)
    configure: Callable[[Any], Any] | None = None
    # (RunConfig, P) -> None, raises ConfigError: checks that need P (PGAS pairing rules)
    validate: Callable[[Any, int], None] | None = None
    # Optional hooks: preamble(cfg) -> extra preamble lines (world rank 0);
    # start(harness) and finish(harness, completed) wrap the run on every rank
    # (finish also after a failure, with completed False: then it must not communicate).
    preamble: Callable[[Any], list[str]] | None = None
    start: Callable[[Any], None] | None = None
    finish: Callable[[Any, bool], None] | None = None
    # Families whose experiments do not fit the per-size kernel shape (overhead,
    # msgrate) bring their own driver(cfg, sinks, comm) -> failures and text view
    # factory view(stream).
    driver: Any = None
    view: Any = None

    def default_list(self) -> list[str]:
        return [b.name for b in self.benchmarks if b.default]

    def get(self, name: str) -> Benchmark | None:
        low = name.lower()
        for b in self.benchmarks:
            if b.name.lower() == low:
                return b
        return None


class Context:
    """Declared here for typing; the harness defines the real class."""
