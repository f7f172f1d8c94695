"""The IMB-IO name grammar and its arithmetic: pure functions of the names and the RunConfig.

{S|P|C}_[I]{Write|Read}_{Indv|Expl|Shared|Priv} (spec §10.1), the value
base of the Read benchmarks' file contents (§6.2; the bytes themselves:
files.file_pattern), each rank's share of X (§6.7), and the file sizes of
§6.6 with the disk space the run needs at most. Part of the catalog: no numpy, no MPI.
"""

from __future__ import annotations

from dataclasses import dataclass

from commbench import policy

PATTERN_BASE = 10_000_000  # BUF_VALUE of the IO assignment type (spec §6.2)


@dataclass(frozen=True)
class Spec:
    cls: str  # "S" single (NP = 1), "P" parallel, "C" collective
    write: bool
    pointer: str  # "Indv", "Expl", "Shared", "Priv"
    nonblocking: bool

    @property
    def name(self) -> str:
        return (
            f"{self.cls}_{'I' if self.nonblocking else ''}{'Write' if self.write else 'Read'}_"
            f"{self.pointer}"
        )

    @property
    def per_process(self) -> bool:
        """Own file on MPI_COMM_SELF (S_ and *_Priv, spec §6.6)."""
        return self.cls == "S" or self.pointer == "Priv"

    @property
    def collective(self) -> bool:
        return self.cls == "C"


# Default order of spec §10.1: for Write then Read, these pairs, blocking then I.
_PAIRS = (
    ("S", "Indv"),
    ("S", "Expl"),
    ("P", "Indv"),
    ("P", "Shared"),
    ("P", "Priv"),
    ("P", "Expl"),
    ("C", "Indv"),
    ("C", "Shared"),
    ("C", "Expl"),
)
SPECS: dict[str, Spec] = {}
for _write in (True, False):
    for _cls, _ptr in _PAIRS:
        for _nb in (False, True):
            _s = Spec(_cls, _write, _ptr, _nb)
            SPECS[_s.name] = _s


def nonblocking(names) -> bool:
    """Does the run hold a nonblocking benchmark (CPU_Exploit needed)?"""
    return any(SPECS[n].nonblocking for n in names if n in SPECS)


def share(spec: Spec | None, x: int, np_: int, k: int) -> tuple[int, int]:
    """(pos1, len) of file rank k's part of X (spec §6.7); Priv: rank 0's share for everyone."""
    if spec is None:
        return 0, 0
    if spec.cls == "S":
        return 0, x
    return policy.block_split(x, np_, 0 if spec.pointer == "Priv" else k)


def io_sizes(cfg) -> list[int]:
    if cfg.msglen is not None:
        return policy.user_size_list(cfg.msglen, 1, cfg.maxlog)[0]
    return policy.size_list(1, cfg.minlog, cfg.maxlog)


def upper_repetitions(cfg, x: int, np_: int) -> int:
    """The most transfers one kernel call can make at X (so files never outgrow their estimate)."""
    cap = max(cfg.msgspersample, cfg.msgs_nonaggr)
    if cfg.iter_policy == "off":
        return cap
    if cfg.iter_policy == "multiple_np":
        return policy.multiple_np_repetitions(x, np_, cap, cfg.maxlog)
    return policy.base_repetitions(x, cap, cfg.overall_vol)


def file_bytes(cfg, spec: Spec, np_: int) -> int:
    """Pre-sized length of one file (spec §6.6), at least what the largest sample touches."""
    sizes = io_sizes(cfg)
    size = max(sizes) or 2**cfg.maxlog
    total = max(size, cfg.overall_vol)
    if cfg.overall_vol // size > cfg.msgspersample:
        total = size * cfg.msgspersample
    if spec.pointer == "Priv":  # the reference's split of the common total (with slack)
        total = -(-total // np_) + (4 * cfg.msgspersample if size % np_ else 0)
    need = max(
        upper_repetitions(cfg, x, np_) * (share(spec, x, np_, 0)[1] if spec.per_process else x)
        for x in sizes
    )
    return max(total, need)


def disk_need(cfg, world_size: int) -> tuple[int, str]:
    """Bytes the run needs at most at one time (one benchmark's files exist at a time), and why."""
    need, why = 0, ""
    for name in cfg.benchmarks:
        spec = SPECS.get(name)
        if spec is None:
            continue
        nps = [1] if spec.cls == "S" else policy.np_sequence(world_size, cfg.npmin)
        for np_ in nps:
            groups = world_size // np_ if cfg.multi is not None else 1
            files = groups * (np_ if spec.pointer == "Priv" else 1)
            b = files * file_bytes(cfg, spec, np_)
            if b > need:
                need, why = b, f"{files} file(s) of {human(b // files)} for {name} at NP={np_}"
    return need, why


def human(b: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if b < 1024 or unit == "TiB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.1f} {unit}"
        b /= 1024
    return f"{b} B"
