"""The harness: how to measure, once for every family of per-size kernels.

It owns process groups (-npmin, -multi, -map), the sweep over sizes with the
repetition policy and time budget (planned in commbench.harness.plan), buffer
allocation and contents, warm-up, barriers, the reduction of per-rank times
and check mode, and hands one Measurement per row to the session's views on
world rank 0 (built by commbench.harness.publish). Benchmarks only say what one
repetition does (commbench.suites).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any

from mpi4py import MPI

from commbench import buffers, imb_methodology, mpi_defects, native, policy, records
from commbench.harness import iteration_times, rounds
from commbench.harness.context import Context, Layout
from commbench.harness.kernel_rounds import Again, later_rounds
from commbench.harness.live import first
from commbench.harness.plan import Plan
from commbench.harness.precision import least, repeat, sample_until
from commbench.harness.publish import Publisher
from commbench.harness.quiet import quiet_gc
from commbench.session import Session
from commbench.suites.base import Benchmark, Kind

BIG = 2**62


@dataclass
class Sweep:
    """One mode of one (benchmark, NP): the state carried from size to size."""

    bench: Benchmark
    layout: Layout
    mode: str
    cap: int
    started: float = field(default_factory=time.monotonic)
    n_prev: int = 0
    history: list[tuple[int, int]] | None = None  # -msglen: (X, n) of the sizes done
    first: bool = True

    @property
    def member(self) -> bool:
        return self.layout.comm is not None


class Harness:
    def __init__(self, session: Session):
        self.session = session
        self.cfg = cfg = session.cfg
        self.world = session.comm
        self.world_rank = session.rank
        self.world_size = session.size
        self.plan = Plan(cfg, self.world_size, large_counts=MPI.Get_version() >= (4, 0))
        self.family = self.plan.family
        # Engine selection, once for the run (collective): ["native"], ["mpi4py"],
        # or both for --engine both; a benchmark without a native pattern runs on mpi4py.
        self.engines, note = native.resolve(cfg.engine, self.world)
        if note and self.world_rank == 0:
            print(f"commbench: {note}", file=sys.stderr, flush=True)
        self.native_kernels: dict[str, Any] = {}
        self.publisher = Publisher(session, self.plan)
        # --samples K in rounds over the run (commbench.harness.rounds), or consecutive
        self.rounds = rounds.for_run(cfg, self.plan.seed)
        if self.rounds is not None:  # the first round's records wait for the last round
            session.live = self.rounds
            self.publisher.emit = self.rounds.emit
        if self.publisher.sampling and session.watchdog is not None:  # a signal keeps samples
            session.watchdog.partial = self._my_samples

    def _my_samples(self) -> list | None:
        """The watchdog thread, at a signal: this rank's completed samples of the current row."""
        live = self.session.live
        return live.mine() if live is not None else None

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
                fam.start(self.session)
            for bench in self.plan.benchmarks():
                for np_ in self.plan.np_sequence(bench):
                    self.run_np(bench, np_)
            if self.rounds is not None:
                later_rounds(self)
            completed = True
            return self.publisher.failures()
        finally:
            if fam.finish is not None:
                fam.finish(self.session, completed)

    def run_np(self, bench: Benchmark, np_: int) -> None:
        if not bench.procs.allows(np_):
            if self.world_rank == 0:
                self.publisher.emit(
                    records.build(
                        repetitions=0,
                        rank_times={},
                        status=records.INVALID,
                        **self.publisher.row(bench, np_, [], "", None, 1.0),
                    )
                )
            return
        self.session.progress("creating the process groups", benchmark=bench.name, np=np_)
        layout = self.layout(np_)
        member = layout.comm is not None
        try:
            if bench.np_setup is not None and member:
                bench.np_setup(self.session, bench, layout)
            for mode in imb_methodology.modes(self.cfg.method, bench.modes):  # -aggregate_mode
                self.run_mode(bench, layout, mode)
            if bench.np_teardown is not None and member:
                bench.np_teardown(self.session, bench, layout)
        finally:
            layout.free()

    def run_mode(self, bench: Benchmark, layout: Layout, mode: str) -> None:
        """Every size of one mode: guard, measure, publish."""
        cap = self.plan.cap(bench, mode)
        shuffled = self.plan.seed is not None  # sizes in any order: -msglen's rule of repetitions
        sweep = Sweep(
            bench,
            layout,
            mode,
            cap,
            n_prev=cap,
            history=[] if self.cfg.msglen is not None or shuffled else None,
        )
        sizes = self.plan.order(bench, layout.np, mode)
        pub = self.publisher
        for x in sizes:
            pub.position = next(pub.positions) if shuffled else None
            row = pub.row(
                bench,
                layout.np,
                layout.groups,
                mode,
                x if bench.has_size else None,
                self.plan.turnover(bench, layout.np),
            )
            n0 = self.plan.base_repetitions(bench, mode, x)
            verdict = self.guard(sweep, row, x, n0)
            if verdict == "stop":
                break
            if verdict == "skip":
                continue
            self.measure(sweep, row, x, n0, sizes)
            sweep.first = False
        pub.position = None
        # --engine both: the later engines' tables
        (self.rounds or self.session).release()

    # -- guard: the time budget and -mem, agreed by every rank --------------------------
    def guard(self, sweep: Sweep, row: dict, x: int, n0: int) -> str | None:
        """'stop' when the time budget is spent, 'skip' when the buffers exceed -mem."""
        bench, emit = sweep.bench, self.publisher.emit_status
        self.watch("the time-budget check", sweep, row["x"])
        over = (
            sweep.member
            and (time.monotonic() - sweep.started) >= self.plan.time_budget()
            and not sweep.first
        )
        if self.world.allreduce(over, op=MPI.LOR):
            emit(
                row,
                records.TIMEOUT,
                'Time limit (secs_per_sample * msg_sizes_list_len) is over; use "-time X" to '
                "increase it",
                self.engines_for(bench),
            )
            return "stop"
        defect = mpi_defects.known_hang(
            self.family.name, bench.name, MPI.Get_library_version(), sweep.layout.np
        )
        if defect and not self.cfg.force:
            emit(row, records.LIBRARY_DEFECT, defect, self.engines_for(bench))
            return "skip"
        overflow = self.plan.int_overflow(bench, x, sweep.layout.np)
        if overflow:
            emit(row, records.INT_OVERFLOW, overflow, self.engines_for(bench))
            return "skip"
        need = self.plan.buffers(bench, x, sweep.layout.np, n0).gib
        if need > self.cfg.max_mem:
            emit(
                row,
                records.OUT_OF_MEM,
                f'needed X={need:8.3f} GB; use flag "-mem X" with X > {need:.3f}',
                self.engines_for(bench),
            )
            return "skip"
        return None

    # -- measure and publish one size ----------------------------------------------------
    def measure(self, sweep: Sweep, row: dict, x: int, n0: int, sizes: list[int]) -> None:
        bench, layout, mode = sweep.bench, sweep.layout, sweep.mode
        n = BIG
        ctx = None
        method, pub = self.cfg.method, self.publisher
        if sweep.member:
            if sweep.first and bench.warmup and method.warmup and not method.warmup_each_size:
                self.session.progress("warm-up")
                self.warmup(bench, layout, mode, x)
            self.session.progress("buffer set-up")
            ctx = self.prepare(bench, layout, mode, x, n0)
            self.session.progress("repetition calibration")
            n = self.repetitions(ctx, bench, n0, sweep.n_prev, sweep.history)
        self.session.progress("agreeing on repetitions (MPI_Allreduce over all ranks)")
        n = self.world.allreduce(n, op=MPI.MIN)
        for e, engine in enumerate(self.engines_for(bench, x, layout.np)):
            live = pub.live_row(bench, row, n, engine) if pub.sampling else None
            if self.rounds is None:  # what a stop keeps of the row (commbench.harness.live)
                self.session.live = live
            if ctx is not None and e > 0 and ctx.bufs.recv is not None:
                ctx.rbuf[:] = 0  # the next engine's check sees its own data, its warm-up's too
            self.warm_each_size(ctx, n, engine)
            runs = live.runs if live is not None else []
            if self.rounds is not None:  # one sample now, one in each later round
                how = Again(bench, mode, x, n0, n, engine, row, e > 0, pub.position)
                visit = self.rounds.visit((bench.name, layout.np), live, how)
                how.defect = self.rounds.sample(visit, self.timed_runs, ctx, n, engine, runs)[1]
                continue
            runs, defect = self.timed_runs(ctx, n, engine, runs)
            rec = pub.publish(bench, row, n, runs, defect, engine)
            rec = pub.per_iteration(ctx, rec, bench)
            if rec is not None:  # --engine both: the second engine's rows form their own table
                self.session.emit(rec, hold=e > 0)
            self.session.live = None
        if ctx is not None:
            self.session.progress("teardown")
            self.close(ctx)
        self.session.progress("the closing barrier")
        self.world.Barrier()
        if sweep.history is not None:
            sweep.history.append((x, n))
        sweep.n_prev = n

    def warm_each_size(self, ctx: Context | None, n: int, engine: str) -> None:
        """IMB 2021's warm-up before each size (n/10 repetitions)."""
        bench, method = ctx.bench if ctx is not None else None, self.cfg.method
        if ctx is not None and bench.warmup and method.warmup and method.warmup_each_size:
            w = policy.warmup_each_size(n)
            if w:
                self.session.progress("warm-up")
                self.timed(ctx, w, engine)

    def timed_runs(self, ctx: Context | None, n: int, engine: str, runs: list) -> tuple[list, Any]:
        """This rank's --samples K timed runs of n repetitions (none when idle), appended to
        runs (a LiveRow's: what a signal keeps), and its check defect."""
        if ctx is None:
            return runs, None
        self.session.progress("the timed kernel")
        if self.publisher.measuring_each:
            iteration_times.arm(ctx, self.cfg.measuring, engine)
        runs = self.samples(ctx, n, engine, runs)
        iteration_times.finish(ctx)
        defect = None
        if self.cfg.check and ctx.bench.expected is not None:
            self.session.progress("check mode verification")
            defect = ctx.bench.expected(ctx, n)
        return runs, defect

    def samples(self, ctx: Context, n: int, engine: str, runs: list) -> list:
        """--samples K timed runs appended to runs, cut short (agreed in the group) once they
        have taken -time seconds: the time budget bounds a row however large K is.
        --precision: until the row's target or budget (precise). In rounds: one."""
        if self.cfg.measuring.precision is not None:
            return self.precise(ctx, n, engine, runs)
        return repeat(
            ctx.comm,
            lambda: self.timed(ctx, n, engine),
            runs,
            1 if self.rounds is not None else self.cfg.samples,
            self.cfg.secs,
            self.session.beat,
        )

    def precise(self, ctx: Context, n: int, engine: str, runs: list) -> list:
        """--precision: samples until the row's median is known within the target or its
        budget is spent (commbench.harness.precision); the decision is the group's."""
        m = self.cfg.measuring
        out = sample_until(
            ctx.comm,
            lambda: self.timed(ctx, n, engine),
            runs,
            m.precision,
            self.plan.row_budget(),
            least(self.cfg.samples),
            self.session.beat,
        )
        self.publisher.outcome = (ctx.group, out.as_dict())
        return runs

    def watch(self, phase: str, sweep: Sweep, x: int | None) -> None:
        """A new measurement clock for the watchdog, naming the row."""
        layout, g = sweep.layout, sweep.layout.group
        self.session.progress(
            phase,
            benchmark=sweep.bench.name,
            np=layout.np,
            mode=sweep.mode,
            bytes=x,
            group=g,
            members=layout.groups[g] if g >= 0 else [],
        )

    # -- process groups -------------------------------------------------------
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
        groups = [
            [r for r, (c, k) in sorted(enumerate(everyone), key=lambda e: e[1][1]) if c == g]
            for g in range(ngroups)
        ]
        if comm == MPI.COMM_NULL:
            return Layout(np_, groups, None, -1)
        return Layout(np_, groups, comm, color)

    # -- buffers and kernels ------------------------------------------------------
    def prepare(self, bench: Benchmark, layout: Layout, mode: str, x: int, n0: int) -> Context:
        bp = self.plan.buffers(bench, x, layout.np, n0)
        kind, huge = self.cfg.alloc, self.cfg.hugepages
        send = buffers.Allocation(bp.send_alloc, kind, huge) if bp.send_alloc else None
        recv = buffers.Allocation(bp.recv_alloc, kind, huge) if bp.recv_alloc else None
        if send is not None:
            buffers.fill(
                send.array, self.world_rank, bp.send_len, bp.slots, bp.send_stride, bench.dtype
            )
            if self.session.corrupt:
                send.array[:] ^= 0x5A  # fault injection for testing check mode
        if recv is not None:
            recv.array[:] = 0
        bufs = buffers.Buffers(send, recv, bp.slots, bp.send_stride, bp.recv_stride)
        ctx = Context(self.session, bench, layout, mode, x, bufs, bp.send_len, bp.recv_len)
        ctx.sync = self.plan.sync(bench)
        if bench.typed:  # IMB 2021's -data_type / -red_data_type
            ctx.set_types(
                self.cfg.params.get("mpi1_data_type", "byte"),
                self.cfg.params.get("mpi1_red_data_type", "float"),
            )
        if bench.setup is not None:
            bench.setup(ctx)
        return ctx

    def close(self, ctx: Context) -> None:
        if ctx.bench.teardown is not None:
            ctx.bench.teardown(ctx)
        ctx.bufs.free()

    def engines_for(
        self, bench: Benchmark, x: int | None = None, np_: int | None = None
    ) -> list[str]:
        """The engines that measure bench (at size x on np_ processes) in this run, the
        first one driving the policy. The C loops pass C int counts: a size whose counts
        or displacements pass 2^31-1 runs on mpi4py, which uses MPI-4 large counts."""
        if "native" in self.engines and bench.name not in self.native_kernels:
            self.native_kernels[bench.name] = native.kernel_for(bench)
        if self.native_kernels.get(bench.name) is None:
            return ["mpi4py"]
        if x is not None and np_ is not None and self.plan.past_int(bench, x, np_):
            return ["mpi4py"]
        return list(self.engines)

    def timed(self, ctx: Context, n: int, engine: str | None = None) -> Any:
        kernel = ctx.bench.kernel
        if (engine or self.engines_for(ctx.bench, ctx.x, ctx.size)[0]) == "native":
            kernel = self.native_kernels[ctx.bench.name]
        barrier = ctx.barrier
        with quiet_gc():  # no collection between the barriers and the end of the timed loop
            for _ in range(policy.N_BARR):
                barrier()
            each = iteration_times.timer(ctx)
            # --per-iteration, --sync-start window (commbench.harness.iteration_times)
            if each is not None:
                return each.timed(ctx, kernel, n)
            if ctx.sync and kernel is ctx.bench.kernel and ctx.bench.kind == Kind.COLLECTIVE:
                return self.one_call_at_a_time(ctx, n)
            return kernel(ctx, n)

    @staticmethod
    def one_call_at_a_time(ctx: Context, n: int) -> float:
        """-sync on (IMB 2021) on the mpi4py engine: the kernel's n calls timed one by
        one, each followed by ctx.sync barriers outside its time; call i keeps its
        slot and root (Context.first). The native loops do the same in C."""
        kernel, barrier, total = ctx.bench.kernel, ctx.barrier, 0.0
        try:
            for i in range(n):
                ctx.first = i
                total += kernel(ctx, 1)
                for _ in range(ctx.sync):
                    barrier()
        finally:
            ctx.first = 0
        return total / n

    def repetitions(
        self,
        ctx: Context,
        bench: Benchmark,
        n0: int,
        n_prev: int,
        history: list[tuple[int, int]] | None,
    ) -> int:
        fixed = self.plan.fixed_repetitions(bench, ctx.mode, ctx.x, ctx.size, n0)
        if fixed is not None:
            # IMB (4.0 and 2021.11, IMB_init_buffers_iter) runs the kernel once untimed with
            # the fixed n where the dynamic policy runs its calibration (spec §5.2: MAY).
            # Without it a first epoch of more outstanding RMA operations than the process
            # ever had pays MPICH's one-time growth (docs/one-sided.md).
            self.timed(ctx, fixed)
            return fixed
        cfg, comm = self.cfg, ctx.comm
        t1 = comm.allreduce(first(self.timed(ctx, 1)), op=MPI.MAX)
        # the same t1 and settings on every rank: the same repetitions, no agreement needed
        n1 = min(n0, policy.preliminary_repetitions(t1, cfg.msgspersample))
        if n1 > 1:
            t1 = comm.allreduce(first(self.timed(ctx, n1)), op=MPI.MAX)
        ts = policy.dynamic_target(t1, cfg.secs, n0)
        n = policy.dynamic_repetitions(n0, ts, n_prev, ctx.x, history)
        return comm.bcast(n, root=0)

    def warmup(self, bench: Benchmark, layout: Layout, mode: str, first: int) -> None:
        """N_WARMUP untimed executions before the first size of a mode (spec §7.1); at
        that first size when the warm-up size's buffers would exceed -mem."""
        wx = self.plan.warmup_size(bench)
        if self.plan.buffers(bench, wx, layout.np, policy.N_WARMUP).gib > self.cfg.max_mem:
            wx = first
        ctx = self.prepare(bench, layout, mode, wx, policy.N_WARMUP)
        for engine in self.engines_for(bench, wx, layout.np):
            self.timed(ctx, policy.N_WARMUP, engine)
        self.close(ctx)
