"""The harness: how to measure, once for every family.

It owns process groups (-npmin, -multi, -map), size lists, the repetition
policy and time budget, buffer allocation and contents, off-cache slots,
warm-up, barriers, the reduction of per-rank times, check mode, and hands one
Measurement per row to the sinks (views) on world rank 0. Benchmarks only say
what one repetition does (commbench.suites).
"""

from __future__ import annotations

import os
import statistics
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import cycle, islice, repeat
from typing import Any, Protocol

import numpy as np
from mpi4py import MPI

from commbench import buffers, native, policy, records, suites
from commbench.config import RunConfig
from commbench.suites.base import Benchmark, Kind

BIG = 2**62


class Sink(Protocol):
    def start(self, header: dict) -> None: ...
    def record(self, rec: records.Measurement) -> None: ...
    def finish(self, summary: dict) -> None: ...


@dataclass
class Layout:
    """The process groups of one NP: every rank knows all groups."""

    np: int
    groups: list[list[int]]  # world ranks per group in group-rank order
    comm: MPI.Comm | None  # MY_COMM, None on idle ranks
    group: int  # my group index, -1 when idle
    state: dict = field(default_factory=dict)  # per-(benchmark, NP) state of np_setup

    def free(self) -> None:
        if self.comm is not None and self.comm != MPI.COMM_NULL:
            self.comm.Free()


class Context:
    """What a kernel sees for one (benchmark, NP, mode, X) on one member rank."""

    def __init__(self, harness: Harness, bench: Benchmark, layout: Layout, mode: str, x: int,
                 bufs: buffers.Buffers, send_len: int, recv_len: int):
        self.harness = harness
        self.cfg = harness.cfg
        self.bench = bench
        self.comm: MPI.Comm = layout.comm  # type: ignore[assignment]
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self.world_rank = harness.world_rank
        self.members = layout.groups[layout.group]
        self.group = layout.group
        self.mode = mode
        self.x = x
        self.bufs = bufs
        self.sbuf = bufs.send.array if bufs.send is not None else np.empty(0, np.uint8)
        self.rbuf = bufs.recv.array if bufs.recv is not None else np.empty(0, np.uint8)
        self.send_len = send_len
        self.recv_len = recv_len
        self.slots = bufs.slots
        self.params = harness.cfg.params
        self.state: dict[str, Any] = {}
        self.np_state = layout.state  # shared by every size and mode of this NP

    # -- buffer specs, prebuilt outside the timed loop ------------------------
    def send_specs(self, count: int | None = None, offset: int = 0, dtype=MPI.BYTE) -> list:
        return self._specs(self.sbuf, self.bufs.send_stride, count, offset, dtype)

    def recv_specs(self, count: int | None = None, offset: int = 0, dtype=MPI.BYTE) -> list:
        return self._specs(self.rbuf, self.bufs.recv_stride, count, offset, dtype)

    def _specs(self, buf: np.ndarray, stride: int, count: int | None, offset: int, dtype) -> list:
        nbytes = self.x if count is None else count
        width = dtype.Get_size() if dtype != MPI.BYTE else 1
        out = []
        for k in range(self.slots):
            a = k * stride + offset
            view = buf[a : a + nbytes]
            if width == 4:
                view = view.view(np.float32) if dtype == MPI.FLOAT else view.view(np.int32)
            out.append([view, dtype])
        return out

    @staticmethod
    def each(n: int, *spec_lists: list) -> Iterable:
        """n items cycling through the slots: a constant tuple when there is one slot."""
        if all(len(s) == 1 for s in spec_lists):
            return repeat(tuple(s[0] for s in spec_lists), n)
        return islice(zip(*(cycle(s) for s in spec_lists)), n)

    def slot_view(self, buf: np.ndarray, stride: int, k: int, offset: int, nbytes: int) -> np.ndarray:
        a = k * stride + offset
        return buf[a : a + nbytes]


class Harness:
    def __init__(self, cfg: RunConfig, sinks: list[Sink], comm: MPI.Comm = MPI.COMM_WORLD,
                 watchdog: Any = None):
        self.cfg = cfg
        self.sinks = sinks
        self.watchdog = watchdog  # commbench.watchdog.Watchdog or None
        self.sink_lock = threading.Lock()  # the watchdog thread may finish the sinks
        self.world = comm
        self.world_rank = comm.Get_rank()
        self.world_size = comm.Get_size()
        self.family = suites.family(cfg.family)
        self.failed: list[str] = []
        # COMMBENCH_FAULT_CORRUPT=<world rank>: that rank sends corrupted data, so
        # tests can prove check mode catches it.
        self.corrupt = os.environ.get("COMMBENCH_FAULT_CORRUPT") == str(self.world_rank)
        self.checked: dict[str, bool] = {}
        # Engine selection, once for the run (collective): ["native"], ["mpi4py"],
        # or both for --engine both; a benchmark without a native pattern runs on mpi4py.
        self.engines, note = native.resolve(getattr(cfg, "engine", "native"), comm)
        if note and self.world_rank == 0:
            print(f"commbench: {note}", file=sys.stderr, flush=True)
        self.native_kernels: dict[str, Any] = {}

    # -- output -------------------------------------------------------------
    def emit(self, rec: records.Measurement) -> None:
        if self.world_rank == 0:
            with self.sink_lock:
                for s in self.sinks:
                    s.record(rec)

    def watch(self, phase: str, layout: Layout | None = None, bench: Benchmark | None = None,
              mode: str = "", x: int | None = None) -> None:
        """Tell the watchdog where this rank is: a layout starts a new measurement clock."""
        wd = self.watchdog
        if wd is None:
            return
        if layout is None:
            wd.phase(phase)
            return
        g = layout.group
        wd.progress(benchmark=bench.name if bench else None, np=layout.np, mode=mode, bytes=x,
                    group=g, members=layout.groups[g] if g >= 0 else [], phase=phase)

    # -- process groups -------------------------------------------------------
    def np_sequence(self, bench: Benchmark) -> list[int]:
        if bench.two_process:
            return [min(2, self.world_size)]
        if bench.kind == Kind.SINGLE_ONE or bench.one_process:
            return [1]
        return policy.np_sequence(self.world_size, self.cfg.npmin)

    def layout(self, np_: int) -> Layout:
        wr, p = self.world_rank, self.world_size
        key = policy.map_key(wr, *self.cfg.map) if self.cfg.map else wr
        if self.cfg.multi is not None:
            ngroups = p // np_
            color = key // np_ if key // np_ < ngroups else MPI.UNDEFINED
        else:
            color = 0 if key < np_ else MPI.UNDEFINED
        comm = self.world.Split(color, key)
        everyone = self.world.allgather((color, key))
        ngroups = max((c for c, _ in everyone if c != MPI.UNDEFINED), default=-1) + 1
        groups = [[r for r, (c, k) in sorted(enumerate(everyone), key=lambda e: e[1][1]) if c == g]
                  for g in range(ngroups)]
        if comm == MPI.COMM_NULL:
            return Layout(np_, groups, None, -1)
        return Layout(np_, groups, comm, color)

    # -- sizes and repetitions --------------------------------------------------
    def sizes(self, bench: Benchmark) -> list[int]:
        if bench.sync:
            return [0]
        if bench.fixed_sizes:
            return list(bench.fixed_sizes)
        if self.cfg.msglen is not None:
            return policy.user_size_list(self.cfg.msglen, bench.unit, self.cfg.maxlog)[0]
        return policy.size_list(bench.unit, self.cfg.minlog, self.cfg.maxlog)

    def cap(self, bench: Benchmark, mode: str) -> int:
        if bench.nonaggr_cap or (mode and mode in bench.nonaggr_modes):
            return self.cfg.msgs_nonaggr
        return self.cfg.msgspersample

    def slot_layout(self, bench: Benchmark, send_len: int, recv_len: int, n0: int) -> tuple[int, int, int]:
        """(slots, send stride, recv stride) of spec §6.3."""
        oc = self.cfg.off_cache
        if oc and bench.off_cache and not bench.sync and self.family.profile.name != "io":
            ss = policy.off_cache_slots(send_len, n0, *oc)
            rs = policy.off_cache_slots(recv_len, n0, *oc)
            k = min(ss.count, rs.count)
            return k, ss.stride, rs.stride
        if bench.slots:
            return n0, send_len, recv_len
        return 1, send_len, recv_len

    # -- one row --------------------------------------------------------------
    def allocate(self, bench: Benchmark, x: int, np_: int, n0: int):
        send_len, recv_len = bench.buffers(x, np_)
        k, ss, rs = self.slot_layout(bench, send_len, recv_len, n0)
        s_alloc = max(send_len, k * ss) if send_len else 0
        r_alloc = max(recv_len, k * rs) if recv_len else 0
        return send_len, recv_len, k, ss, rs, s_alloc, r_alloc

    def prepare(self, bench: Benchmark, layout: Layout, mode: str, x: int, n0: int) -> Context:
        send_len, recv_len, k, ss, rs, s_alloc, r_alloc = self.allocate(bench, x, layout.np, n0)
        kind, huge = self.cfg.alloc, self.cfg.hugepages
        send = buffers.Allocation(s_alloc, kind, huge) if s_alloc else None
        recv = buffers.Allocation(r_alloc, kind, huge) if r_alloc else None
        if send is not None:
            buffers.fill(send.array, self.world_rank, send_len, k, ss, bench.dtype)
            if self.corrupt:
                send.array[:] ^= 0x5A  # fault injection for testing check mode
        if recv is not None:
            recv.array[:] = 0
        bufs = buffers.Buffers(send, recv, k, ss, rs)
        ctx = Context(self, bench, layout, mode, x, bufs, send_len, recv_len)
        if bench.setup is not None:
            bench.setup(ctx)
        return ctx

    def close(self, ctx: Context) -> None:
        if ctx.bench.teardown is not None:
            ctx.bench.teardown(ctx)
        ctx.bufs.free()

    def engines_for(self, bench: Benchmark) -> list[str]:
        """The engines that measure bench in this run, the first one driving the policy."""
        if "native" in self.engines and bench.name not in self.native_kernels:
            self.native_kernels[bench.name] = native.kernel_for(bench)
        if self.native_kernels.get(bench.name) is None:
            return ["mpi4py"]
        return list(self.engines)

    def timed(self, ctx: Context, n: int, engine: str | None = None) -> Any:
        kernel = ctx.bench.kernel
        if (engine or self.engines_for(ctx.bench)[0]) == "native":
            kernel = self.native_kernels[ctx.bench.name]
        barrier = ctx.comm.Barrier
        for _ in range(policy.N_BARR):
            barrier()
        return kernel(ctx, n)

    def repetitions(self, ctx: Context, bench: Benchmark, n0: int, n_prev: int,
                    history: list[tuple[int, int]] | None) -> int:
        cfg = self.cfg
        pol = cfg.iter_policy
        if pol == "auto":
            pol = "multiple_np" if bench.root_based else "dynamic"
        if pol == "off":
            return n0 if bench.sync else self.cap(bench, ctx.mode)
        if pol == "multiple_np":
            return policy.multiple_np_repetitions(ctx.x, ctx.size, self.cap(bench, ctx.mode), cfg.maxlog)
        comm = ctx.comm
        t1 = comm.allreduce(_first(self.timed(ctx, 1)), op=MPI.MAX)
        r = comm.allreduce(policy.preliminary_repetitions(t1, cfg.msgspersample), op=MPI.MAX)
        n1 = min(n0, r)
        if n1 > 1:
            t1 = comm.allreduce(_first(self.timed(ctx, n1)), op=MPI.MAX)
        ts = policy.dynamic_target(t1, cfg.secs, n0)
        n = policy.dynamic_repetitions(n0, ts, n_prev, ctx.x, history)
        return comm.bcast(n, root=0)

    def run_mode(self, bench: Benchmark, layout: Layout, mode: str) -> None:
        cfg = self.cfg
        member = layout.comm is not None
        sizes = self.sizes(bench)
        budget = policy.time_budget(cfg.secs, cfg.maxlog, cfg.minlog, len(cfg.msglen or ()))
        started = time.monotonic()
        cap = self.cap(bench, mode)
        n_prev = cap
        history: list[tuple[int, int]] | None = [] if cfg.msglen is not None else None
        first = True
        held: list[records.Measurement] = []
        for x in sizes:
            base = dict(benchmark=bench.name, family=bench.family, kind=bench.kind, np_=layout.np,
                        mode=mode, x=x if bench.has_size else None, groups=layout.groups,
                        world_size=self.world_size, components=list(bench.components),
                        turnover=bench.turnover(layout.np))
            self.watch("the time-budget check", layout, bench, mode, x if bench.has_size else None)
            over = member and (time.monotonic() - started) >= budget and not first
            if self.world.allreduce(over, op=MPI.LOR):
                self.emit_status(base, records.TIMEOUT, 'Time limit (secs_per_sample * msg_sizes_list_len) is over; use "-time X" to increase it',
                                 self.engines_for(bench), held)
                break
            n0 = policy.base_repetitions(x, cap, cfg.overall_vol, bench.sync)
            *_, s_alloc, r_alloc = self.allocate(bench, x, layout.np, n0)
            need = (s_alloc + r_alloc) / 2**30
            if need > cfg.max_mem:
                self.emit_status(base, records.OUT_OF_MEM, f'needed X={need:8.3f} GB; use flag "-mem X" with X > {need:.3f}',
                                 self.engines_for(bench), held)
                continue
            t: Any = None
            defect = None
            n = BIG
            ctx = None
            if member:
                if first and bench.warmup:
                    self.watch("warm-up")
                    self.warmup(bench, layout, mode, sizes)
                self.watch("buffer set-up")
                ctx = self.prepare(bench, layout, mode, x, n0)
                self.watch("repetition calibration")
                n = self.repetitions(ctx, bench, n0, n_prev, history)
            self.watch("agreeing on repetitions (MPI_Allreduce over all ranks)")
            n = self.world.allreduce(n, op=MPI.MIN)
            engines = self.engines_for(bench)
            for e, engine in enumerate(engines):
                if ctx is not None:
                    if e > 0 and ctx.bufs.recv is not None:
                        ctx.rbuf[:] = 0  # the next engine's check must see its own data
                    self.watch("the timed kernel")
                    t = self.timed(ctx, n, engine)
                    if cfg.samples > 1:  # --samples K: K timed runs, the row from the median
                        runs = [t] + [self.timed(ctx, n, engine) for _ in range(cfg.samples - 1)]
                        t = _median_run(runs)
                    if cfg.check and bench.expected is not None:
                        self.watch("check mode verification")
                        defect = bench.expected(ctx, n)
                self.watch("the gather to rank 0")
                gathered = self.world.gather((t, defect), root=0)
                extra = {"engine": engine}
                if cfg.samples > 1:
                    mine = [_first(r) for r in runs] if ctx is not None else None
                    per_rank = self.world.gather(mine, root=0)
                    if self.world_rank == 0:
                        extra["samples"] = records.sample_stats(per_rank, bench.time_factor)
                        extra["rank_samples"] = per_rank
                if self.world_rank == 0:
                    rec = self.make_record(bench, base, n, gathered, extra=extra)
                    if e == 0:
                        self.emit(rec)
                    else:  # --engine both: the second engine's rows form their own table
                        held.append(rec)
            if ctx is not None:
                self.watch("teardown")
                self.close(ctx)
            self.watch("the closing barrier")
            self.world.Barrier()
            if history is not None:
                history.append((x, n))
            n_prev = n
            first = False
        for rec in held:
            self.emit(rec)

    def make_record(self, bench: Benchmark, base: dict, n: int, gathered: list,
                    extra: dict | None = None) -> records.Measurement:
        comps = list(bench.components)
        rank_times: dict[str, list[float | None]] = {c: [] for c in comps}
        defects = [d for _, d in gathered if d is not None]
        for t, _ in gathered:
            vals = t if isinstance(t, tuple) else (t,)
            for c, v in zip(comps, vals if t is not None else (None,) * len(comps)):
                rank_times[c].append(None if v is None else v * bench.time_factor)
        defect = max(defects) if defects else None
        if self.cfg.check and bench.expected is not None:
            defect = defect or 0.0  # verified, nothing received (e.g. Bcast at NP=1)
            ok = defect is None or defect <= policy.TOL
            self.checked[bench.name] = self.checked.get(bench.name, True) and ok
        return records.build(repetitions=n, rank_times=rank_times, defects=defect, extra=extra, **base)

    def emit_status(self, base: dict, status: str, message: str, engines: list[str] | None = None,
                    held: list | None = None) -> None:
        """A row without numbers; one per engine when given (the later ones into held)."""
        if self.world_rank == 0:
            for e, engine in enumerate(engines or [None]):
                rec = records.build(repetitions=0, rank_times={c: [None] * self.world_size for c in base["components"]},
                                    extra={"engine": engine} if engine else None, **base)
                rec.status, rec.message = status, message
                if e == 0 or held is None:
                    self.emit(rec)
                else:
                    held.append(rec)

    def warmup(self, bench: Benchmark, layout: Layout, mode: str, sizes: list[int]) -> None:
        """N_WARMUP untimed executions at X = 4 before the first size of a mode (spec §7.1)."""
        x = 0 if bench.sync else (bench.fixed_sizes[0] if bench.fixed_sizes else max(4, bench.unit))
        ctx = self.prepare(bench, layout, mode, x, policy.N_WARMUP)
        for engine in self.engines_for(bench):
            self.timed(ctx, policy.N_WARMUP, engine)
        self.close(ctx)

    # -- the run --------------------------------------------------------------
    def run(self) -> int:
        """Every benchmark of the run list; returns the number of check failures.

        The family's start/finish hooks wrap it; finish learns whether the run
        completed, so after a failure it cleans up without communicating.
        """
        fam = self.family
        completed = False
        try:
            if fam.start is not None:
                fam.start(self)
            failures = self.run_benchmarks()
            completed = True
            return failures
        finally:
            if fam.finish is not None:
                fam.finish(self, completed)

    def run_benchmarks(self) -> int:
        for name in self.cfg.benchmarks:
            bench = self.family.get(name)
            assert bench is not None  # config resolved the names
            for np_ in self.np_sequence(bench):
                if (bench.two_process and np_ < 2) or np_ < bench.min_np:
                    if self.world_rank == 0:
                        base = dict(benchmark=bench.name, family=bench.family, kind=bench.kind,
                                    np_=np_, mode="", x=None, groups=[], world_size=self.world_size,
                                    components=list(bench.components), turnover=1.0)
                        rec = records.build(repetitions=0, rank_times={}, **base)
                        rec.status = records.INVALID
                        self.emit(rec)
                    continue
                if self.watchdog is not None:
                    self.watchdog.progress(benchmark=bench.name, np=np_, phase="creating the process groups")
                layout = self.layout(np_)
                member = layout.comm is not None
                try:
                    if bench.np_setup is not None and member:
                        bench.np_setup(self, bench, layout)
                    for mode in bench.modes:
                        self.run_mode(bench, layout, mode)
                    if bench.np_teardown is not None and member:
                        bench.np_teardown(self, bench, layout)
                finally:
                    layout.free()
        return sum(1 for ok in self.checked.values() if not ok)


def _median_run(runs: list) -> Any:
    """This rank's median over repeated runs, per component for tuple results."""
    if isinstance(runs[0], tuple):
        return tuple(statistics.median(c) for c in zip(*runs))
    return statistics.median(runs)


def _first(t: Any) -> float:
    return t[0] if isinstance(t, tuple) else t
