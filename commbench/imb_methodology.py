"""Which IMB's methodology a run follows: IMB 4.0 (the seed, default) or IMB 2021.

The two differ in how collectives are timed, where their root is, which source
PingPong/PingPing receive from and how the warm-up runs (docs/imb2021.md has
the evidence, benchmark by benchmark). Knob by knob, imb4 (seed 001, spec)
against imb2021 (IMB 2021.11), and the option that sets it alone:

- collective timing: imb4 the n-call loop as a whole; imb2021 each call alone,
  then `-sync` barrier(s); `-sync on|off`
- root of rooted collectives: imb4 i % NP, rotating; imb2021 0, fixed;
  `-root_shift on|off`
- PingPong, PingPing source: imb4 MPI_ANY_SOURCE; imb2021 the partner rank;
  (the *AnySource/*SpecificSource names)
- warm-up: imb4 N_WARMUP runs before a mode's first size; imb2021 n/10 runs
  before every size; `-warm_up on|off`
- CPU exploit of the overlap benchmarks: imb4 y += A·x, A 100×100 (spec §7.6);
  imb2021 A 10×10 (IMB 2021.11's `IMB_cpu_exploit.c`, `#define SIZE 10`): 100×
  finer, so t_CPU can follow a sub-µs t_pure; (no option)
- EXT/RMA window sections without `-off_cache`: imb4 disjoint, n0 slots of X
  (spec §6.3, A2); imb2021 one section, as IMB's C code (`r_cache_iter = 1`);
  (no option)
- EXT Accumulate's epochs: imb4 one MPI_Win_fence(0) closing each and opening the next
  (spec §6.5, as IMB-EXT's Put and Get); imb2021 each opened with
  MPI_Win_fence(MPI_MODE_NOPRECEDE) and closed with MPI_Win_fence(MPI_MODE_NOSUCCEED), two
  fences a repetition in the non-aggregate mode, as IMB-EXT 2021.11 makes them (its PMPI log:
  benchmarks/mpi_calls.py); (no option)
- Reduce_scatter's X (MPI1, NBC, MPI4): imb4 the X/4 floats summed, split evenly over the
  ranks (spec §6.7); imb2021 X/4 floats to each rank, NP·X/4 summed, as IMB 2021.11 calls
  MPI_Reduce_scatter, MPI_Ireduce_scatter and MPI_Reduce_scatter_init (its PMPI log:
  benchmarks/mpi_calls.py); (no option)

`--methodology` picks the set; the single options override one knob each and
the results file records the resolved knobs. Nothing here imports MPI.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from commbench.option_types import ConfigError, Option, choice

METHODOLOGIES = ("imb4", "imb2021")
AGGREGATE_MODES = ("multi", "aggregate", "non_aggregate")

# IMB 2021 reads its on/off options in these spellings (its -help: "on (1|enable|yes)
# or off (0|disable|no)").
ON = ("on", "1", "enable", "yes")
OFF = ("off", "0", "disable", "no")


@dataclass(frozen=True)
class Methodology:
    name: str
    sync: int  # barriers after each collective call, timed alone; 0: the loop timed as a whole
    root_shift: int  # the root of call i: (i * root_shift) % NP
    any_source: bool  # PingPong/PingPing receive from MPI_ANY_SOURCE (else from the partner)
    # n/10 warm-up runs before every size (else N_WARMUP before a mode's first)
    warmup_each_size: bool
    warmup: bool = True  # -warm_up off: none at all
    zero_size: bool = True  # -zero_size off: no 0-byte rows (IMB 2021's option; same in both sets)
    # -imb_barrier on: the harness's barriers are IMB's own (dissemination of Sendrecv)
    imb_barrier: bool = False
    # -aggregate_mode: both AGGREGATE and NON-AGGREGATE tables, or one
    aggregate_mode: str = "multi"
    cpu_matrix: int = 100  # the order of the overlap benchmarks' CPU exploit (commbench.cpu)
    # EXT/RMA aggregate transfers to disjoint window sections, n0 slots of X (spec §6.3, A2);
    # IMB 2021.11 moves them only under -off_cache, all to one section otherwise.
    disjoint_sections: bool = True
    # EXT Accumulate: every epoch fenced open (MPI_MODE_NOPRECEDE) and closed
    # (MPI_MODE_NOSUCCEED) apart, as IMB-EXT 2021.11; else one fence(0) ends one and opens the next
    fenced_accumulate: bool = False
    # Reduce_scatter (and its NBC, MPI-4 forms): X/4 floats to each rank, NP·X/4 summed, as
    # IMB 2021.11; else X/4 floats split evenly over the ranks (spec §6.7)
    reduce_scatter_each: bool = False

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict | None) -> Methodology:
        """The methodology a results file records; IMB 4.0's for files older than the field."""
        return replace(PROFILES["imb4"], **d) if d else PROFILES["imb4"]


PROFILES = {
    "imb4": Methodology("imb4", sync=0, root_shift=1, any_source=True, warmup_each_size=False),
    "imb2021": Methodology(
        "imb2021",
        sync=1,
        root_shift=0,
        any_source=False,
        warmup_each_size=True,
        cpu_matrix=10,
        disjoint_sections=False,
        fenced_accumulate=True,
        reduce_scatter_each=True,
    ),
}
DEFAULT = "imb4"  # the seed's (IMB 4.0) methodology: when seed and IMB 2021 differ, the seed wins


def on_off(name: str):
    def parse(s: str) -> bool:
        low = s.lower()
        if low in ON:
            return True
        if low in OFF:
            return False
        raise ConfigError(
            f"{name}: {s!r} is neither on nor off (accepted: {name} on|off, as IMB 2021: "
            f"{'|'.join(ON)} or {'|'.join(OFF)})"
        )

    return parse


OPTIONS: tuple[Option, ...] = (
    Option(
        ("--methodology",),
        "methodology",
        "<imb4|imb2021>",
        "IMB 4.0's methodology (default, the seed's) or IMB 2021's: collective timing, root, "
        "PingPong source, warm-up (docs/imb2021.md)",
        choice("--methodology", METHODOLOGIES),
    ),
    Option(
        ("-sync",),
        "sync",
        "<on|off>",
        "time each collective call alone with a barrier "
        "after it (IMB 2021) or the whole loop (IMB 4.0)",
        on_off("-sync"),
    ),
    Option(
        ("-root_shift",),
        "root_shift",
        "<on|off>",
        "rooted collectives: root i % NP (on, IMB 4.0) or always 0 (off, IMB 2021)",
        on_off("-root_shift"),
    ),
    Option(
        ("-warm_up",),
        "warm_up",
        "<on|off>",
        "untimed warm-up runs (default on)",
        on_off("-warm_up"),
    ),
    Option(
        ("-imb_barrier",),
        "imb_barrier",
        "<on|off>",
        "the barriers before timing and after each -sync call "
        "are IMB's own (0-byte Sendrecv dissemination), not MPI_Barrier (default off)",
        on_off("-imb_barrier"),
    ),
    Option(
        ("-aggregate_mode",),
        "aggregate_mode",
        "<multi|aggregate|non_aggregate>",
        "EXT/RMA/IO: both modes (multi, default) or only AGGREGATE or NON-AGGREGATE (IMB 2021)",
        choice("-aggregate_mode", AGGREGATE_MODES),
    ),
    Option(
        ("-zero_size",),
        "zero_size",
        "<on|off>",
        "measure 0-byte messages (default on; off: sizes from the second on, as IMB 2021)",
        on_off("-zero_size"),
    ),
)


def modes(method: Methodology, declared: tuple[str, ...]) -> tuple[str, ...]:
    """The modes of a benchmark this run measures: -aggregate_mode keeps one of
    AGGREGATE/NON-AGGREGATE where a benchmark has both."""
    keep = {"aggregate": "AGGREGATE", "non_aggregate": "NON-AGGREGATE"}.get(method.aggregate_mode)
    if keep is None or keep not in declared:
        return declared
    return (keep,)


def resolve(values: dict) -> Methodology:
    """The run's methodology: --methodology's set, then each single option."""
    m = PROFILES[values.get("methodology", DEFAULT)]
    if "sync" in values:
        m = replace(m, sync=int(values["sync"]))
    if "root_shift" in values:
        m = replace(m, root_shift=int(values["root_shift"]))
    if "warm_up" in values:
        m = replace(m, warmup=values["warm_up"])
    if "imb_barrier" in values:
        m = replace(m, imb_barrier=values["imb_barrier"])
    if "aggregate_mode" in values:
        m = replace(m, aggregate_mode=values["aggregate_mode"])
    if "zero_size" in values:
        m = replace(m, zero_size=values["zero_size"])
    return m
