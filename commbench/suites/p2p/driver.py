"""The p2p procedure: IMB-P2P's measurement of one benchmark at one size, and its record.
The harness (commbench.harness.rows) runs the rows: their order, samples and progress.
The family's catalog (commbench.suites.p2p) names `procedure` as base.Lazy.

Per size, on every rank: repetitions n = min(max, round(numerator / size)) (max
at size 0, at least 1) and n/10 warm-up repetitions (at least 1 when n > 1);
pause, barrier, warm-up, barrier, the timed loop, pause, barrier (IMB-P2P's own
barrier: 0-byte Sendrecv rounds at distances 1, 2, 4 …, tag 1000). Rank 0
gathers every rank's seconds and message count and computes IMB-P2P's row:

  messages   M = (sum over ranks of messages sent + received) / 2
  t[usec]    = 10^6 x (sum over ranks of seconds) / M   (PingPong: / 2M, half the round trip)
  Mbytes/sec = M x size / max seconds / 10^6            (2^20 with --mib)
  Msg/sec    = M / max seconds

In the record, values hold t (that t[usec]), bytes_per_sec, msgs_per_sec and,
from every rank's seconds per repetition, t_min / t_max / t_avg / t_median;
turnover is M per repetition, so bytes_per_sec = turnover x size / t_max.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator

from mpi4py import MPI

from commbench import records
from commbench.native import p2p as native_p2p
from commbench.session import Session
from commbench.suites.p2p.patterns import P2pCtx
from commbench.suites.p2p.settings import P2pSettings
from commbench.suites.p2p.spec import KIND, PATTERNS, F, P2pPattern
from commbench.suites.procedure import Procedure, Row, Unit, engines

BARRIER_TAG = 1000


def repetitions(size: int, cap: int, numerator: int) -> tuple[int, int]:
    """(timed, warm-up) repetitions of a size: IMB-P2P's get_iters (C round: halves up)."""
    n = cap if size == 0 else max(1, min(cap, math.floor(numerator / size + 0.5)))
    w = n // 10
    return n, (1 if w == 0 and n > 1 else w)


def barrier(comm) -> None:
    """IMB-P2P's barrier: log2(P) rounds of 0-byte Sendrecv to rank+2^k from rank-2^k."""
    rank, p = comm.Get_rank(), comm.Get_size()
    out, into = [bytearray(1), 0, MPI.BYTE], [bytearray(1), 0, MPI.BYTE]
    mask = 1
    while mask < p:
        comm.Sendrecv(out, (rank + mask) % p, BARRIER_TAG, into, (rank - mask) % p, BARRIER_TAG)
        mask <<= 1


def pause(usec: int) -> None:
    if usec >= 0:
        time.sleep(usec / 1e6)


class P2pProcedure(Procedure):
    """A unit per pattern (an invalid one where IMB-P2P prints NOT AVAILABLE), a row per size."""

    def __init__(self, session: Session):
        self.session = session
        self.s = P2pSettings.of(session.cfg.params)

    def units(self) -> Iterator[Unit]:
        session, s, p = self.session, self.s, self.session.size
        runners: dict | None = None
        for name in session.cfg.benchmarks:
            pat = PATTERNS[name]
            if not pat.runs_at(p):
                yield Unit(name, p, kind=KIND, invalid=pat.invalid_line(p))
                continue
            runners = (
                runners
                if runners is not None
                else engines(session, lambda: native_p2p.resolve(session.comm))
            )
            yield P2pUnit(
                name,
                p,
                [Row(name, p, size) for size in s.sizes],
                list(runners),
                kind=KIND,
                session=session,
                pattern=pat,
                s=s,
                runners=runners,
            )


class P2pUnit(Unit):
    """One pattern: its buffers (of the largest size) and IMB-P2P's procedure per size."""

    def __init__(
        self, *args, session: Session, pattern: P2pPattern, s: P2pSettings, runners: dict, **kw
    ):
        super().__init__(*args, **kw)
        self.session, self.pattern, self.s, self.runners = session, pattern, s, runners
        self.ctx: P2pCtx | None = None

    def open(self) -> None:
        cfg = self.session.cfg
        self.ctx = P2pCtx(
            self.session.comm,
            self.pattern,
            max(self.s.sizes),
            cfg.alloc,
            cfg.hugepages,
            self.s.msgwr,
            self.s.msgrd,
        )

    def close(self) -> None:
        if self.ctx is not None:
            self.ctx.free()
            self.ctx = None

    def measure(self, row: Row, engine: str) -> tuple:
        cfg, size = self.session.cfg, row.bytes or 0
        n, w = repetitions(size, cfg.msgspersample, cfg.overall_vol)
        seconds, msgs = measure(
            self.session, self.ctx, self.runners[engine], size, n, w, self.s.pause
        )
        return n, w, self.session.comm.gather((seconds, msgs), root=0)

    def record(self, row: Row, engine: str, data: tuple) -> records.Measurement:
        n, w, every = data
        return record(self.pattern, self.ctx, self.s, row.bytes or 0, n, w, every, engine)


def procedure(session: Session) -> P2pProcedure:
    return P2pProcedure(session)


def measure(
    session: Session, ctx: P2pCtx, runner, size: int, n: int, w: int, usec: int
) -> tuple[float, int]:
    """One size on this rank: (seconds of the timed loop, messages sent + received).

    runner None: the mpi4py loops, timed here; else p2p.c's, timed in C."""
    comm, pat = ctx.comm, ctx.pattern
    session.progress("partners and buffers")
    ctx.at(size)
    warm, timed = pat.prepare(ctx, w), pat.prepare(ctx, n)
    if runner is not None:
        calls = [ctx.native(runner, size, plan) for plan in (warm, timed)]
    pause(usec)
    barrier(comm)
    session.progress("warm-up")
    if runner is None:
        pat.loop(ctx, warm)
    else:
        runner.loop(calls[0][0], calls[0][2])
    if pat.warmup_barrier:
        barrier(comm)
    session.progress("the timed loop")
    if runner is None:
        t0 = MPI.Wtime()
        msgs = pat.loop(ctx, timed)
        seconds = MPI.Wtime() - t0
    else:
        seconds, msgs = runner.loop(calls[1][0], calls[1][2])
    session.progress("pause and barrier")
    pause(usec)
    barrier(comm)
    return seconds, msgs


def record(
    pat: P2pPattern,
    ctx: P2pCtx,
    s: P2pSettings,
    size: int,
    n: int,
    w: int,
    every: list,
    engine: str,
) -> records.Measurement:
    """IMB-P2P's row as a record (rank 0)."""
    times = [t for t, _ in every]
    counts = [m for _, m in every]
    msgs = sum(counts) // 2
    tmax, total = max(times), sum(times)
    groups, rank_times = [list(range(ctx.p))], {"t": [t / n for t in times]}
    values = records.reduce_times(KIND, ["t"], rank_times, groups[0], size, msgs / n) | {
        "t": 1e6 * total / (pat.latency_halves * msgs) if msgs else 0.0,
        "msgs_per_sec": msgs / tmax if tmax > 0 else 0.0,
    }
    return records.build(
        benchmark=pat.name,
        family=F,
        kind=KIND,
        np_=ctx.p,
        mode="",
        x=size,
        repetitions=n,
        groups=groups,
        world_size=ctx.p,
        components=["t"],
        rank_times=rank_times,
        turnover=msgs / n,
        values=values,
        extra={
            "pattern": pat.description,
            "engine": engine,
            "messages": msgs,
            "rank_messages": counts,
            "max_time_s": tmax,
            "sum_time_s": total,
            "warmup_repetitions": w,
            "latency_divisor": pat.latency_halves * msgs,
            "pause_usec": s.pause,
            "msgwr": s.msgwr,
            "msgrd": s.msgrd,
            **({"grid": list(ctx.dims)} if ctx.dims else {}),
            **({"seed": 0} if pat.name in ("Unirandom", "Birandom", "Corandom") else {}),
        },
    )
