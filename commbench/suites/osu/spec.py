"""How an OSU benchmark is declared: the OsuBenchmark descriptor, OSU's
repetition defaults, a collective program's call (Call), and the arithmetic of
OSU's rows (averages, percentiles).

Every group module (pt2pt.py, pt2pt_variants.py, latency_mt.py, init.py,
onesided.py, collectives.py, nonblocking.py, neighbor.py) declares its benchmarks
as OsuBenchmark descriptors in a tuple BENCHMARKS, naming the hooks its ranks run
(loops, rows, verifiers: its <group>_loops.py) as base.Lazy;
commbench/suites/osu/__init__.py lists the modules. Nothing here uses MPI or numpy.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from commbench.suites import collops
from commbench.suites.base import Experiment
from commbench.suites.osu import topology
from commbench.suites.osu.settings import mem_limit

LARGE = 8192  # OSU's LARGE_MESSAGE_SIZE: above it the "large" repetition counts apply


@dataclass(frozen=True)
class Defaults:
    """OSU's repetition counts of one program, as its binary runs them (not as its
    -h says: osu_latency -h says "default 200" warm-up, the binary skips 100).
    -i sets iterations for every size, -x the warm-up for every size."""

    iterations: int = 10000
    iterations_large: int = 1000
    skip: int = 100
    skip_large: int = 10
    min_size: int = 1
    max_size: int = 1 << 22
    window: int = 64  # -W

    def counts(self, size: int, iterations: int | None, skip: int | None) -> tuple[int, int]:
        """(timed iterations, warm-up iterations) of one size."""
        large = size > LARGE
        n = (
            iterations
            if iterations is not None
            else (self.iterations_large if large else self.iterations)
        )
        w = skip if skip is not None else (self.skip_large if large else self.skip)
        return n, w


@dataclass(frozen=True)
class Call:
    """One OSU collective program's call: its name (OSU's program name without "osu_" and
    "_persistent"), the operation (commbench.suites.collops), and whether it is the persistent
    form. Its set-up, arguments and -c: collective_calls.py."""

    name: str
    op: collops.Op
    persistent: bool = False

    @property
    def blocks(self) -> tuple[str, str]:
        return self.op.blocks

    def extent(self, p: int, s=None) -> tuple[int, int]:
        """Blocks of the largest size in the send and receive buffers at p ranks."""
        return self.op.extent(p, topology.degree(s, p) if "K" in self.op.blocks else 0)

    def limit(self, s, p: int) -> int:
        """The largest size OSU measures under -M at p processes: M / P where a buffer holds a
        block per rank or per neighbour (OSU's check_mem_limit divides by P for both), else M."""
        return mem_limit(s) // p if self.op.per_rank else mem_limit(s)


def call(name: str, persistent: bool = False) -> Call:
    return Call(name, collops.op(name), persistent)


@dataclass(frozen=True)
class OsuBenchmark(Experiment):
    """One OSU program (the interface every group module follows; docs/osu.md).

    name: OSU's program name without "osu_"; group: the module that declares it
    (and the C file osu_<group>.c of its native loops); title: the words of OSU's
    title line between "# OSU " and " Test v7.4"; metric: the column kind the
    view prints (a key of commbench.views.osu_text.COLUMNS: "latency" prints
    "Avg Latency(us)", "bandwidth" "Bandwidth (MB/s)"); takes: the OSU option
    letters it accepts (an option no benchmark of a run takes is refused);
    defaults: OSU's counts and sizes; nprocs(P): None when it runs at P
    processes, else OSU's words why not; buffers: how many buffers of the
    largest size a process holds (the memory pre-flight).

    The driver calls, per type and size: prepare(ctx, size) (untimed set-up, may
    be None), a barrier, loop(ctx, skip, None) (the warm-up), loop(ctx, n, times)
    (times: a float64 array of n per-iteration seconds that the timing ranks fill),
    release(ctx, size); native: the loop's name in osu_<group>.c (cbosu_<group>_<native>),
    "" for none (then the mpi4py loop runs under every --engine). row(ctx, settings,
    times) turns the timing ranks' per-iteration seconds (rank 0's; a list of every
    rank's when gather is True) into the record's values; verify(ctx, size) counts
    this rank's wrong received bytes after a -c round (None: the benchmark is reported
    "not checked"). Every hook takes the program's Ctx first, named ctx, then the size,
    or the settings and what the hook turns into the record (row: the times; extra:
    the record's extra so far). The hooks the ranks run (loop, prepare, release, row,
    verify, refill, extra, check_rounds) are base.Lazy of the group's <group>_loops.py;
    those the launcher's checks call (nprocs, sizes, validate, limit, world, fits,
    extent) are plain functions of the group module, without MPI or numpy."""

    group: str = ""
    title: str = ""
    metric: str = "latency"
    takes: frozenset[str] = frozenset()
    defaults: Defaults = Defaults()
    nprocs: Callable[[int], str | None] = lambda p: None
    loop: Callable[..., Any] | None = None
    prepare: Callable[..., Any] | None = None
    release: Callable[..., Any] | None = None
    native: str = ""
    buffers: int = 2  # buffers of the largest size per process (the memory pre-flight)
    per_window: int = (
        0  # and buffers of -W x the largest size (one-sided bw: the window, the origin)
    )
    row: Callable[..., dict] | None = None
    verify: Callable[..., int] | None = None
    gather: bool = False  # every rank times (collectives): row() gets all ranks' times
    fit: bool = True
    directions: int = 1  # bandwidth programs: windows sent per iteration (bibw: both ways, 2)
    call: Call | None = None  # the collective groups: the program's call (Call)
    # Hooks for programs that need them (one-sided: onesided.py), None elsewhere:
    sizes: Callable[..., list[int]] | None = (
        None  # (settings, dtype) -> its own sizes (fop, cas: one element)
    )
    validate: Callable[..., None] | None = (
        None  # (settings): raise ConfigError for values OSU's program refuses
    )
    refill: Callable[..., Any] | None = (
        None  # -c: (ctx, size) after ctx.fill, before the validation round
    )
    extra: Callable[..., dict] | None = (
        None  # (ctx, settings, extra) -> more fields of the record's extra
    )
    extent: Callable[..., tuple[int, int]] | None = (
        None  # (P, settings) -> blocks of the largest size (send, recv)
    )
    limit: Callable[..., int] | None = (
        None  # (settings, P) -> the largest size OSU measures at P processes (-M)
    )
    world: Callable[..., None] | None = (
        None  # (settings, P): raise ConfigError for options that do not fit P (-p)
    )
    fits: Callable[..., str | None] | None = (
        None  # (settings, P): OSU's words when it cannot run so (-N); None: it can
    )
    # -c: the tag of a 4-byte verdict the receiver sends the sender after each round (0: none)
    verdict: int = 0
    # -c's own procedure (ctx, rounds, u, times) -> wrong bytes; rounds(out, keep) runs one phase's
    # rounds
    check_rounds: Callable[..., int] | None = None


def unfit(bench: OsuBenchmark, s, p: int) -> str | None:
    """Why OSU's program would stop at p processes with these settings (None: it runs)."""
    return bench.nprocs(p) or (bench.fits(s, p) if bench.fits is not None else None)


def exactly_two(p: int) -> str | None:
    return None if p == 2 else "This test requires exactly two processes"


def percentile(values: list[float], p: int) -> float:
    """OSU 7.4's tail value: the ascending sorted values at index floor(p/100 x n) - 1
    (at least 0), as osu_latency -z prints with known per-iteration times
    (tests/data/osu/README.md: how that was read off the binary)."""
    xs = sorted(values)
    return xs[max(0, min(len(xs) - 1, math.floor(p * len(xs) / 100) - 1))]


def latency_row(times: list[float], halves: int, percentiles: tuple[int, ...]) -> dict:
    """OSU's latency: the timed iterations' seconds summed over iterations / halves (2:
    half the round trip), in us. t_min/t_max/t_avg are over the timing ranks (here one:
    all equal t), as in every commbench record; iter_* and t_p<P> over the iterations."""
    per = [t * 1e6 / halves for t in times]
    t = sum(per) / len(per)
    vals = {
        "t": t,
        "t_min": t,
        "t_max": t,
        "t_avg": t,
        "iter_min": min(per),
        "iter_max": max(per),
        "iter_median": statistics.median(per),
    }
    vals.update({f"t_p{p}": percentile(per, p) for p in percentiles})
    return vals


def bandwidth_row(times: list[float], nbytes: int, percentiles: tuple[int, ...]) -> dict:
    """OSU's bandwidth: nbytes moved per iteration x iterations / total seconds (MB =
    10^6 bytes, kept in bytes/s); t (= t_min = t_max = t_avg): us per iteration (a
    window), so bytes_per_sec = turnover x size / t; bw_p<P>: the per-iteration
    bandwidths' tail values (ascending, as OSU)."""
    total = sum(times)
    per = [nbytes / t for t in times if t > 0]
    t = total / len(times) * 1e6
    vals = {
        "bytes_per_sec": nbytes * len(times) / total if total > 0 else 0.0,
        "t": t,
        "t_min": t,
        "t_max": t,
        "t_avg": t,
        "iter_min": min(times) * 1e6,
        "iter_max": max(times) * 1e6,
        "iter_median": statistics.median(times) * 1e6,
    }
    vals.update({f"bw_p{p}": percentile(per, p) if per else 0.0 for p in percentiles})
    return vals
