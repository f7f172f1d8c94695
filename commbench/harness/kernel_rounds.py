"""The kernel harness's later rounds of --samples K (commbench.harness.rounds): each round sets
up every row again, in the round's order, takes one sample of it with the repetitions the
first round calibrated, and tears it down; after the last, every row's record from all its
samples, in the first round's order. h is the commbench.harness.core.Harness that calls it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from commbench import records
from commbench.harness.rounds import Visit

if TYPE_CHECKING:
    from commbench.harness.context import Layout
    from commbench.suites.base import Benchmark


@dataclass
class Again:
    """What a row's later samples need: the first round's set-up of it."""

    bench: Benchmark
    mode: str
    x: int
    n0: int  # the size's base repetitions (buffers for them)
    n: int  # the repetitions of a sample, agreed in the first round
    engine: str
    row: dict  # Publisher.row
    hold: bool  # --engine both: a later engine's table
    position: int | None  # --shuffle: the row's place in the first round
    defect: Any = None  # the row's worst check defect over its samples


def later_rounds(h: Any) -> None:
    """Rounds 2..K over every row still sampling, then the records (every rank)."""
    rounds = h.rounds
    for rnd in rounds.later(h.world, h.cfg.secs):
        for (_, np_), visits in rounds.order(rnd):
            one_unit(h, np_, visits, rnd)
    h.session.progress("the gather to rank 0")
    rounds.deliver(h.session, lambda v: build(h, v))


def one_unit(h: Any, np_: int, visits: list[Visit], rnd: int) -> None:
    """One round's samples of the rows of one benchmark at np_ processes."""
    bench = visits[0].how.bench
    layout = h.layout(np_)
    try:
        member = layout.comm is not None
        if bench.np_setup is not None and member:
            bench.np_setup(h.session, bench, layout)
        warm: set[str] = set()
        for v in visits:
            again(h, layout, v, warm, rnd)
        if bench.np_teardown is not None and member:
            bench.np_teardown(h.session, bench, layout)
    finally:
        layout.free()


def again(h: Any, layout: Layout, v: Visit, warm: set[str], rnd: int) -> None:
    """One more sample of v: its buffers and set-up anew, a mode's warm-up before its first row
    of the round, the timed runs (their barriers start it together), its check."""
    a: Again = v.how
    bench, method = a.bench, h.cfg.method
    h.session.progress(
        f"round {rnd} of {h.rounds.k}",
        benchmark=bench.name,
        np=layout.np,
        mode=a.mode,
        bytes=a.row["x"],
        group=layout.group,
        members=layout.groups[layout.group] if layout.group >= 0 else [],
        round=rnd,
    )
    if layout.comm is not None:
        if a.mode not in warm and bench.warmup and method.warmup and not method.warmup_each_size:
            h.warmup(bench, layout, a.mode, a.x)
        warm.add(a.mode)
        ctx = h.prepare(bench, layout, a.mode, a.x, a.n0)
        try:
            h.warm_each_size(ctx, a.n, a.engine)
            # the timed runs count against -time, as in round 1 and as consecutive samples do
            _, defect = h.rounds.sample(v, h.timed_runs, ctx, a.n, a.engine, v.live.runs)
            if defect is not None:
                a.defect = defect if a.defect is None else max(a.defect, defect)
        finally:
            h.close(ctx)


def build(h: Any, v: Visit) -> records.Measurement | None:
    """The row's record from every sample (collective: the gather to world rank 0)."""
    a: Again = v.how
    h.publisher.position = a.position
    try:
        return h.publisher.publish(a.bench, a.row, a.n, v.live.runs, a.defect, a.engine)
    finally:
        h.publisher.position = None
