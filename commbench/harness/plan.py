"""Pure planning of a run: process counts, sizes, repetition caps and policy, buffers.

Everything here follows from the RunConfig and the descriptors alone, so it is
testable without MPI and shared by the harness (which measures) and by the
pre-flight checks (commbench.resources, which refuse a run before it starts).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from commbench import imb_methodology, policy, row_measurement, suites
from commbench.resources import INT_MAX
from commbench.suites.base import Benchmark, Kind


@dataclass(frozen=True)
class BufferPlan:
    """The buffers of one (benchmark, X, NP): spec §6.3's slots and strides."""

    send_len: int  # bytes one transfer sends
    recv_len: int
    slots: int  # disjoint buffer areas cycled through (off-cache, one-sided)
    send_stride: int
    recv_stride: int
    extra: int = 0  # bytes the benchmark allocates itself (Benchmark.memory)

    @property
    def send_alloc(self) -> int:
        return max(self.send_len, self.slots * self.send_stride) if self.send_len else 0

    @property
    def recv_alloc(self) -> int:
        return max(self.recv_len, self.slots * self.recv_stride) if self.recv_len else 0

    @property
    def total(self) -> int:
        return self.send_alloc + self.recv_alloc + self.extra

    @property
    def gib(self) -> float:
        return self.total / 2**30


class Plan:
    def __init__(self, cfg, world_size: int, large_counts: bool = True):
        self.cfg = cfg
        self.world_size = world_size
        self.family = suites.family(cfg.family)
        # MPI-4 large-count functions usable (mpi4py picks them by the count), and
        # not --int-counts (IMB's C ints): else a row past 2^31-1 is int-overflow.
        self.large_counts = large_counts and not getattr(cfg, "int_counts", False)

    def benchmarks(self) -> list[Benchmark]:
        """The benchmarks in the order they run: the run list's, or drawn from --shuffle's seed."""
        out = [
            b for b in (self.family.get(n) for n in self.cfg.benchmarks) if isinstance(b, Benchmark)
        ]
        return self.shuffled(out, "benchmarks")

    # -- --shuffle: the order of benchmarks and sizes ------------------------------------
    @property
    def seed(self) -> int | None:
        """--shuffle's seed (drawn at start for 'random'), None for IMB's order."""
        m = getattr(self.cfg, "measuring", None)
        return None if m is None else m.shuffle_seed

    def order(self, bench: Benchmark, np_: int, mode: str) -> list[int]:
        """The sizes of one sweep in the order they are measured: ascending (IMB), or a
        permutation drawn from the seed and the sweep (every rank draws the same)."""
        return self.shuffled(self.sizes(bench), bench.name, str(np_), mode)

    def shuffled(self, items: list, *key: str) -> list:
        """items in the run's order: as given, or a permutation drawn from the seed and key."""
        if self.seed is None or len(items) < 2:
            return items
        rng = np.random.default_rng([self.seed, *(zlib.crc32(k.encode()) for k in key)])
        return [items[i] for i in rng.permutation(len(items))]

    # -- process counts -------------------------------------------------------------
    def np_sequence(self, bench: Benchmark) -> list[int]:
        if bench.procs.fixed is not None:
            return [min(bench.procs.fixed, self.world_size)]
        return policy.np_sequence(self.world_size, self.cfg.npmin)

    # -- sizes and repetitions --------------------------------------------------------
    def sizes(self, bench: Benchmark) -> list[int]:
        if bench.sync:
            return [0]
        if bench.fixed_sizes:
            return list(bench.fixed_sizes)
        if self.cfg.msglen is not None:
            sizes = policy.user_size_list(self.cfg.msglen, self.unit(bench), self.cfg.maxlog)[0]
        else:
            sizes = policy.size_list(self.unit(bench), self.cfg.minlog, self.cfg.maxlog)
        if not self.cfg.method.zero_size:  # -zero_size off (IMB 2021)
            sizes = [x for x in sizes if x > 0]
        return sizes

    def cap(self, bench: Benchmark, mode: str) -> int:
        """The repetition cap of a mode: MSGS_NONAGGR or MSGSPERSAMPLE."""
        if bench.nonaggr_cap or (mode and mode in bench.nonaggr_modes):
            return self.cfg.msgs_nonaggr
        return self.cfg.msgspersample

    def base_repetitions(self, bench: Benchmark, mode: str, x: int) -> int:
        """n0 of spec §7.3: the cap, lowered for large X by OVERALL_VOL."""
        return policy.base_repetitions(x, self.cap(bench, mode), self.cfg.overall_vol, bench.sync)

    def data_type(self, bench: Benchmark) -> str:
        """The IMB 2021 type name bench's messages use (policy.DATA_TYPES): -data_type for
        "data" benchmarks, -red_data_type for reductions; byte for the others."""
        params = self.cfg.params
        if bench.typed == "red":
            return params.get("mpi1_red_data_type", "float")
        if bench.typed == "data":
            return params.get("mpi1_data_type", "byte")
        return "byte"

    def unit(self, bench: Benchmark) -> int:
        """The size unit: the type's bytes for a typed benchmark (IMB 2021), else its own."""
        return policy.DATA_TYPES[self.data_type(bench)][1] if bench.typed else bench.unit

    def turnover(self, bench: Benchmark, np_: int) -> float:
        """F of spec §7.5 for a row; a Kind.RATE benchmark's counts messages per
        repetition: F(NP) per window slot times the -window_size."""
        f = bench.turnover(np_)
        if bench.kind == Kind.RATE:
            f *= self.cfg.params.get("mpi1_window_size", 1)
        return f

    def sync(self, bench: Benchmark) -> int:
        """Barriers after each call of bench, each call timed alone (-sync, IMB 2021): the
        collectives of a methodology family (mpi1, nbc); 0 times the loop as a whole."""
        if self.family.methodology and bench.kind in (Kind.COLLECTIVE, Kind.OVERLAP):
            return self.cfg.method.sync
        return 0

    def policy_for(self, bench: Benchmark) -> str:
        pol = self.cfg.iter_policy
        if pol == "auto":
            return "multiple_np" if bench.root_based else "dynamic"
        return pol

    def fixed_repetitions(
        self, bench: Benchmark, mode: str, x: int, np_: int, n0: int
    ) -> int | None:
        """The repetitions of the policies that need no timing; None for 'dynamic'."""
        pol = self.policy_for(bench)
        # spec §5.2 and IMB's IMB_mem_manager.c: MSGSPERSAMPLE, even where MSGS_NONAGGR caps
        if pol == "off":
            return self.cfg.msgspersample
        if pol == "multiple_np":
            return policy.multiple_np_repetitions(x, np_, self.cap(bench, mode), self.cfg.maxlog)
        return None

    def sweeps(self) -> list[tuple[str, int, str, int]]:
        """(benchmark, NP, mode, sizes) of every sweep the harness runs, in its order."""
        return [
            (b.name, np_, mode, len(self.sizes(b)))
            for b in self.benchmarks()
            for np_ in self.np_sequence(b)
            if b.procs.allows(np_)
            for mode in imb_methodology.modes(self.cfg.method, b.modes)
        ]

    def engines(self) -> int:
        return 2 if getattr(self.cfg, "engine", "") == "both" else 1

    def row_budget(self) -> tuple[float, int]:
        """(seconds, samples) one row's samples may take: --samples K cut at -time, or
        --precision's budget (default -time and 1000 samples, at least --samples K)."""
        cfg = self.cfg
        m = getattr(cfg, "measuring", None)
        if m is None or m.precision is None:
            return cfg.secs, cfg.samples
        secs, k = m.precision_budget or (cfg.secs, None)
        return secs, k if k is not None else max(row_measurement.PRECISION_SAMPLES, cfg.samples)

    def sweep_bound(self, sizes: int, spent: float = 0.0) -> float:
        """Seconds a sweep of that many sizes may still take, spent seconds into it: each
        size's repetitions (or --samples) are cut at -time (--precision: its budget), and
        its later sizes time out once it has used time_budget() (spec §5.4), so at most
        that and one more row."""
        secs, engines = self.row_budget()[0], self.engines()
        return min(sizes * engines * secs, max(self.time_budget() - spent, 0.0) + engines * secs)

    def samples_bound(self) -> tuple[int, float]:
        """(rows, seconds) of a --samples run, each --engine counted (sweep_bound)."""
        sweeps = self.sweeps()
        return (
            sum(n for *_, n in sweeps) * self.engines(),
            sum(self.sweep_bound(n) for *_, n in sweeps),
        )

    def past_int(self, bench: Benchmark, x: int, np_: int) -> bool:
        """Does a row pass MPI a count or displacement (bytes) beyond a C int?"""
        return max(x, bench.int_extent(x, np_) if bench.int_extent is not None else 0) > INT_MAX

    def int_overflow(self, bench: Benchmark, x: int, np_: int) -> str | None:
        """IMB's int-overflow row (spec §6.4) where counts are C ints and a row needs more."""
        if self.large_counts or not self.past_int(bench, x, np_):
            return None
        if bench.int_extent is not None and x <= INT_MAX:
            return "The production rank*size caused int overflow"  # IMB's words
        return f"count {x} > 2^31-1 needs MPI-4 large counts"

    def time_budget(self) -> float:
        """Seconds a sweep may run before its later sizes time out (spec §5.4); with
        --precision at least every size's row budget and -time for its calibration."""
        cfg = self.cfg
        imb = policy.time_budget(cfg.secs, cfg.maxlog, cfg.minlog, len(cfg.msglen or ()))
        m = getattr(cfg, "measuring", None)
        if m is None or m.precision is None:
            return imb
        sizes = len(cfg.msglen) if cfg.msglen else cfg.maxlog - cfg.minlog + 2
        return max(imb, sizes * (self.row_budget()[0] + cfg.secs))

    # -- buffers ---------------------------------------------------------------------
    def buffers(self, bench: Benchmark, x: int, np_: int, n0: int) -> BufferPlan:
        each = bench.buffers_each if self.cfg.method.reduce_scatter_each else None
        send_len, recv_len = (each or bench.buffers)(x, np_)
        extra = bench.memory(self.cfg.params, x, np_) if bench.memory is not None else 0
        oc = self.cfg.off_cache
        if oc and bench.off_cache and not bench.sync and self.family.profile.name != "io":
            ss = policy.off_cache_slots(send_len, n0, *oc)
            rs = policy.off_cache_slots(recv_len, n0, *oc)
            return BufferPlan(
                send_len, recv_len, min(ss.count, rs.count), ss.stride, rs.stride, extra
            )
        # Disjoint window sections (spec §6.3, A2); IMB 2021.11 targets one section, but -check
        # keeps them apart: thousands of float accumulations into one section round past the
        # tolerance.
        if bench.slots and (self.cfg.method.disjoint_sections or self.cfg.check):
            return BufferPlan(send_len, recv_len, n0, send_len, recv_len, extra)
        return BufferPlan(send_len, recv_len, 1, send_len, recv_len, extra)

    def warmup_size(self, bench: Benchmark) -> int:
        """X of the N_WARMUP untimed executions before a mode's first size (spec §7.1)."""
        if bench.sync:
            return 0
        return bench.fixed_sizes[0] if bench.fixed_sizes else max(4, self.unit(bench))

    def peak(self) -> tuple[int, int, str]:
        """(largest buffer bytes per process, largest message size, where) over the run.

        Sizes whose need exceeds -mem are left out: the harness skips them.
        """
        if self.family.memory is not None:  # a driver family's own buffers
            need, what = self.family.memory(self.cfg.params, self.world_size)
            return need, 0, what
        cap = self.cfg.max_mem * 2**30
        peak, biggest, where = 0, 0, ""
        for bench in self.benchmarks():
            for np_ in self.np_sequence(bench):
                if not bench.procs.allows(np_):
                    continue
                for mode in imb_methodology.modes(self.cfg.method, bench.modes):
                    for x in self.sizes(bench):
                        bp = self.buffers(bench, x, np_, self.base_repetitions(bench, mode, x))
                        need = bp.total
                        if need > cap or self.int_overflow(bench, x, np_):
                            continue
                        biggest = max(biggest, x)
                        if need > peak:
                            peak, where = need, f"{bench.name} at {x} bytes, NP {np_}"
        return peak, biggest, where
