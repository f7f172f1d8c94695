"""Family "mt": IMB-MT, the multithreaded benchmarks of IMB 2021.

Ten benchmarks (PingPongMT … AllReduceMT) run by T threads in every rank at
once, each on its own MPI_Comm_dup of the world (info key thread_id), under
MPI_THREAD_MULTIPLE; #bytes is the data of all T threads of a rank (IMB-MT's
weak scaling). Options, timing, output and -check are IMB-MT 2021.11's.

A driver family, not the per-size kernel harness, which times one loop per
rank with IMB's dynamic repetitions over -msglog sizes and reduces over ranks.
IMB-MT has fixed repetitions, sizes from -count, T timed loops per rank (point
to point: one region per thread after a warm-up and a barrier; collectives:
each call timed alone, five barriers after it), statistics over all threads
and its own columns: the driver runs each (benchmark, count) on the engine's
threads and emits one records.Measurement; commbench.views.mt_text prints it.

Engines: native (default) runs the threads in C (commbench/native/mt.c, POSIX
threads, no GIL); mpi4py runs them as Python threads, which share the GIL:
mpi4py releases it inside every blocking MPI call, but the Python between the
calls runs one thread at a time, so its times include that serialisation.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np
from mpi4py import MPI

from commbench import deferred, records
from commbench.native import mt as native_mt
from commbench.options import ConfigError, Option, choice, integer
from commbench.session import Session
from commbench.suites import mpi1
from commbench.suites.base import Experiment, Family, FamilySettings

F = "mt"
KIND = "mt"
WINDOW_DEFAULT = 64  # IMB-MT's -window_size (IMB-MPI1 2021's Uniband uses 256)


@dataclass(frozen=True)
class MtBench(Experiment):
    """An IMB-MT benchmark: how it is measured and which columns IMB-MT prints."""

    native: str = "mt"  # the C engine (commbench/native/mt.c) runs it
    columns: str = "p2p"  # p2p | rate | coll | barrier
    divide: int = 1  # times divided (PingPong, BiBand: 2 messages per repetition)
    window: bool = False  # -window_size messages per repetition; times per message
    bw_factor: int = 1  # SendRecv: 2, Exchange: 4 messages of #bytes per repetition


BENCHMARKS = (
    MtBench("PingPongMT", "pairs r, r+stride: Send/Recv there and back; half the round trip", divide=2),
    MtBench("PingPingMT", "pairs r, r+stride: Isend, Recv, Wait at once"),
    MtBench("SendRecvMT", "ring at distance stride: Sendrecv to the right, from the left", bw_factor=2),
    MtBench("ExchangeMT", "ring at distance stride: Isend left and right, Recv both, Waitall", bw_factor=4),
    MtBench("UniBandMT", "pairs: -window_size Isends one way, Waitall, a 1-byte ack", columns="rate", window=True),
    MtBench("BiBandMT", "pairs: -window_size Irecvs and Isends both ways, Waitall, an ack", columns="rate",
            window=True, divide=2),
    MtBench("BarrierMT", "a thread barrier and MPI_Barrier on the thread's communicator", columns="barrier"),
    MtBench("BcastMT", "MPI_Bcast from rank 0, each call timed, barriers after it", columns="coll"),
    MtBench("ReduceMT", "MPI_Reduce (SUM) to rank 0, each call timed, barriers after it", columns="coll"),
    MtBench("AllReduceMT", "MPI_Allreduce (SUM), each call timed, barriers after it", columns="coll"),
)


@dataclass(frozen=True)
class Settings(FamilySettings):
    prefix: ClassVar[str] = "mt_"
    stride: int = 0
    warmup: int = 100
    repeat: int = 1000
    window_size: int = WINDOW_DEFAULT
    barrier: str = "on"
    count: tuple[int, ...] = (1, 2, 4, 8)
    malloc_align: int = 64
    malloc_algo: str = "serial"
    datatype: str = "int"
    noheader: bool = False
    threads: int = 1

    @property
    def unit(self) -> int:
        return 1 if self.datatype == "char" else 4


def _counts(s: str) -> tuple[int, ...]:
    try:
        vals = tuple(int(v) for v in s.split(","))
    except ValueError:
        raise ConfigError(f"-count needs comma-separated element counts, got {s!r} (accepted: -count 1,2,4,8)") from None
    if any(v < 0 or v >= 2**31 for v in vals):
        raise ConfigError(f"-count {s}: counts are C ints >= 0 (accepted: -count 1,2,4,8)")
    return vals


# IMB-MPI1 2021 has -window_size too: one option for both families (the parser maps a
# name to one option), read into mt_window_size by configure().
WINDOW = next((o for o in mpi1.FAMILY.options if "-window_size" in o.names), None) or Option(
    ("-window_size",), "mt_window_size", "<W>", "mt: UniBandMT/BiBandMT messages in flight (default 64)",
    integer("-window_size", 1))

OPTIONS = (
    Option(("-stride",), "mt_stride", "<S>", "mt: partner distance of the point-to-point benchmarks (default 0: P/2)",
           integer("-stride", 0)),
    Option(("-warmup",), "mt_warmup", "<N>", "mt: warm-up repetitions (default 100)", integer("-warmup", 0)),
    Option(("-repeat",), "mt_repeat", "<N>", "mt: timed repetitions (default 1000)", integer("-repeat", 1)),
    WINDOW,
    Option(("-barrier",), "mt_barrier", "<on|off|special>", "mt: barrier before timing and after each collective "
           "call: MPI_Barrier, none, or a dissemination of empty Sendrecvs (default on)",
           choice("-barrier", ("on", "off", "special"))),
    Option(("-count",), "mt_count", "<n[,n…]>", "mt: message sizes in -datatype elements per thread (default 1,2,4,8)",
           _counts),
    Option(("-malloc_align",), "mt_malloc_align", "<bytes>", "mt: buffer alignment (default 64)",
           integer("-malloc_align", 1)),
    Option(("-malloc_algo",), "mt_malloc_algo", "<serial|continuous|parallel>", "mt: buffers allocated by the "
           "first thread, as one block, or by each thread (default serial)",
           choice("-malloc_algo", ("serial", "continuous", "parallel"))),
    Option(("-datatype",), "mt_datatype", "<int|char>", "mt: element type of -count (default int)",
           choice("-datatype", ("int", "char"))),
    Option(("-noheader",), "mt_noheader", "", "mt: no 'MT part' banner"),
    Option(("--mt-threads",), "mt_threads", "<T>", "mt: threads per rank (default $OMP_NUM_THREADS, as IMB-MT; "
           "else the CPUs this process may use)", integer("--mt-threads", 1)),
)


def default_threads(env=os.environ) -> int:
    """IMB-MT's thread count: OMP_NUM_THREADS's first value (OpenMP's rule), else the CPU count.

    `commbench` sets OMP_NUM_THREADS=1 for its processes unless the user set it (one
    BLAS thread per rank) and says so in COMMBENCH_OMP_DEFAULTED: then the CPU count."""
    first = "" if env.get("COMMBENCH_OMP_DEFAULTED") else env.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if first.isdigit() and int(first) > 0:
        return int(first)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def configure(cfg):
    """Record the thread count, and -window_size under mt_window_size with IMB-MT's default."""
    p = dict(cfg.params)
    p.setdefault("mt_threads", default_threads())
    if WINDOW.dest != "mt_window_size":
        shared = p.pop(WINDOW.dest, None)
        p["mt_window_size"] = shared if "-window_size" in cfg.argv else WINDOW_DEFAULT
    return replace(cfg, params=p)


def validate(cfg, size: int) -> None:
    """MPI_THREAD_MULTIPLE: a -thread_level below it is refused at once; without one, the
    ranks (MPI initialised) refuse what MPI_Init_thread provided (single: IMB's default)."""
    s = Settings.of(cfg.params)
    need = (f"the mt family (IMB-MT) calls MPI from {s.threads} thread{'s' * (s.threads != 1)} per rank at "
            "once and needs MPI_THREAD_MULTIPLE")
    if cfg.thread_level not in (None, "multiple"):
        raise ConfigError(f"{need}, but -thread_level {cfg.thread_level} was given (accepted: -thread_level multiple)")
    if deferred.loaded("mpi4py.MPI") and MPI.Is_initialized() and MPI.Query_thread() < MPI.THREAD_MULTIPLE:
        got = "MPI_THREAD_" + ("SINGLE", "FUNNELED", "SERIALIZED")[MPI.Query_thread()]
        if cfg.thread_level is None:
            raise ConfigError(f"{need}; without -thread_level MPI was initialised with {got} (accepted: -thread_level multiple)")
        raise ConfigError(f"{need}, but this MPI provides only {got} (accepted: an MPI library built with thread "
                          "support, e.g. the mpich wheel, and -thread_level multiple)")
    if cfg.check and s.datatype != "int":
        raise ConfigError("-check verifies int data only, as IMB-MT (accepted: -check with -datatype int)")


def memory(params: dict, size: int) -> tuple[int, str]:
    s, big = Settings.of(params), max(Settings.of(params).count, default=0)
    return s.threads * (3 * big * s.unit + 2 * s.malloc_align), f"mt: --mt-threads {s.threads} x 3 x the largest -count {big} x {s.unit} bytes"


def gil_note() -> list[str]:
    if hasattr(sys, "_is_gil_enabled") and not sys._is_gil_enabled():
        return ["# mpi4py engine: Python threads on a free-threaded Python (no GIL)"]
    return ["# mpi4py engine: the Python threads of a rank share one GIL. mpi4py releases it inside",
            "#   each blocking MPI call, so threads overlap in MPI, but the Python between calls runs",
            "#   one thread at a time and a thread back from MPI waits for the GIL: the times include",
            "#   that serialisation (docs/mt.md); --engine native runs C threads without it"]


def preamble(cfg) -> list[str]:
    s = Settings.of(cfg.params)
    lines = [f"# Threads per rank      : {s.threads} (each on its own MPI_Comm_dup of the world)",
             f"# Engine                : {cfg.engine}" + (" (C POSIX threads, commbench/native/mt.c)"
                                                          if cfg.engine != "mpi4py" else " (Python threads)")]
    return lines + (gil_note() if cfg.engine != "native" else [])


# ---------------------------------------------------------------- the mpi4py engine

class PyThread:
    """One Python thread's share of a measurement: IMB-MT's patterns in mpi4py calls."""

    def __init__(self, run: PyRun, tid: int):
        self.r, self.tid, self.comm = run, tid, run.comms[tid]
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        s, n = run.s, run.count
        self.dtype = np.int32 if s.datatype == "int" else np.uint8
        self.mpitype = MPI.INT if s.datatype == "int" else MPI.CHAR
        self.inb = self._alloc(run.alloc_count)
        self.outb = self._alloc(run.alloc_count * (2 if run.bench.name == "ExchangeMT" else 1))
        self.ins, self.out, self.out2 = [self.inb, n, self.mpitype], [self.outb, n, self.mpitype], \
            [self.outb[n:], n, self.mpitype]
        self.failures = 0

    def _alloc(self, n: int) -> np.ndarray:
        align = self.r.s.malloc_align
        raw = np.zeros(n * self.r.s.unit + align, np.uint8)
        off = (-raw.ctypes.data) % align
        return raw[off:off + n * self.r.s.unit].view(self.dtype)

    def fill(self, buf, factor: int | None = None) -> None:
        """-check: buf[i] = factor * i, or -1 everywhere (factor None)."""
        if self.r.check:
            buf[:self.r.count] = -1 if factor is None else factor * np.arange(self.r.count)

    def verify(self, buf, factor: int) -> None:
        if self.r.check:
            self.failures += int(np.count_nonzero(buf[:self.r.count] != factor * np.arange(self.r.count)))

    def spoil(self) -> None:
        if self.r.corrupt and self.r.count:
            self.inb[self.r.count - 1] ^= 0x5A5A if self.dtype is np.int32 else 0x5A

    def sync(self) -> None:
        r = self.r
        if r.s.barrier == "off":
            return
        r.bar.wait()
        if self.tid == 0:
            if r.s.barrier == "on":
                r.world.Barrier()
            else:
                rank, size, e = r.world.Get_rank(), r.world.Get_size(), [np.zeros(0, np.uint8), MPI.BYTE]
                d = 1
                while d < size:
                    r.world.Sendrecv(e, (rank + d) % size, 1010, e, (rank - d) % size, 1010)
                    d *= 2
        r.bar.wait()

    def pair(self) -> tuple[int, bool]:
        stride = self.r.s.stride or self.size // 2
        if stride <= 0 or stride > self.size // 2:
            return -1, False
        group = self.rank // stride
        if group // 2 == self.size // (2 * stride) and self.size % (2 * stride):
            return -1, False
        return (self.rank + stride, True) if group % 2 == 0 else (self.rank - stride, False)

    def p2p(self, reps: int) -> int:
        name, c = self.r.bench.name, self.comm
        ring = name in ("SendRecvMT", "ExchangeMT")
        peer, first = (-1, False) if ring else self.pair()
        if peer < 0 and not ring:
            return 0
        st = self.r.s.stride or self.size // 2
        right, left = (self.rank + st) % self.size, (self.rank - st) % self.size
        self.fill(self.inb, self.rank + 1)
        self.fill(self.outb)
        self.fill(self.outb[self.r.count:])
        self.spoil()
        LOOPS[name](self, c, reps, peer, first, right, left)
        if reps > 0:
            self.verify(self.inb, self.rank + 1)
            if name != "UniBandMT" or not first:
                self.verify(self.outb, (left if ring else peer) + 1)
            if name == "ExchangeMT":
                self.verify(self.outb[self.r.count:], right + 1)
        return 1

    def collective(self) -> float:
        r, c, name = self.r, self.comm, self.r.bench.name
        root = self.rank == 0
        n, total, wt = self.size, 0.0, MPI.Wtime
        self.fill(self.inb, (1 if root else None) if name == "BcastMT" else self.rank + 1)
        self.fill(self.outb)
        if name != "BcastMT" or root:
            self.spoil()
        call = {"BarrierMT": lambda: (r.bar.wait(), c.Barrier()),
                "BcastMT": lambda: c.Bcast(self.ins if root else self.out, 0),
                "ReduceMT": lambda: c.Reduce(self.ins, self.out, MPI.SUM, 0),
                "AllReduceMT": lambda: c.Allreduce(self.ins, self.out, MPI.SUM)}[name]
        for i in range(r.s.repeat + r.s.warmup):
            t0 = wt()
            call()
            dt = wt() - t0
            if i >= r.s.warmup:
                total += dt
            if name != "BarrierMT":
                for _ in range(5):
                    self.sync()
        if (name == "BcastMT" and not root) or name == "AllReduceMT" or (name == "ReduceMT" and root):
            self.verify(self.outb, 1 if name == "BcastMT" else n * (n + 1) // 2)
        return total

    def measure(self) -> tuple[float, int]:
        if self.r.bench.columns in ("coll", "barrier"):
            return self.collective(), 1
        self.p2p(self.r.s.warmup)
        self.sync()
        t0 = MPI.Wtime()
        took = self.p2p(self.r.s.repeat)
        return (MPI.Wtime() - t0 if took else 0.0), took


def _pingpong(t, c, reps, peer, first, right, left):
    (one, a), (two, b) = ((c.Send, t.ins), (c.Recv, t.out))[::1 if first else -1]
    for _ in range(reps):
        one(a, peer, 0)
        two(b, peer, 0)


def _pingping(t, c, reps, peer, first, right, left):
    for _ in range(reps):
        req = c.Isend(t.ins, peer, 0)
        c.Recv(t.out, peer, 0)
        req.Wait()


def _sendrecv(t, c, reps, peer, first, right, left):
    for _ in range(reps):
        c.Sendrecv(t.ins, right, 0, t.out, left, 0)


def _exchange(t, c, reps, peer, first, right, left):
    for _ in range(reps):
        reqs = [c.Isend(t.ins, left, 0), c.Isend(t.ins, right, 0)]
        c.Recv(t.out, left, 0)
        c.Recv(t.out2, right, 0)
        MPI.Request.Waitall(reqs)


def _window(t, c, reps, peer, first, right, left):
    w, ack, both = t.r.s.window_size, np.zeros(1, np.uint8), t.r.bench.name == "BiBandMT"
    for _ in range(reps):
        if both:
            reqs = [c.Irecv(t.out, peer, 0) for _ in range(w)] + [c.Isend(t.ins, peer, 0) for _ in range(w)]
        else:
            reqs = [c.Isend(t.ins, peer, 0) if first else c.Irecv(t.out, peer, 0) for _ in range(w)]
        MPI.Request.Waitall(reqs)
        if first:
            c.Recv([ack, MPI.CHAR], peer, 0)
        else:
            c.Send([ack, MPI.CHAR], peer, 0)


LOOPS = {"PingPongMT": _pingpong, "PingPingMT": _pingping, "SendRecvMT": _sendrecv, "ExchangeMT": _exchange,
         "UniBandMT": _window, "BiBandMT": _window}


class PyRun:
    """One (benchmark, count) on T Python threads: (seconds, took part, failures) per thread."""

    def __init__(self, s: Settings, comms: list, world, bench: MtBench, count: int, alloc_count: int,
                 check: bool, corrupt: bool):
        self.s, self.comms, self.world, self.bench = s, comms, world, bench
        self.count, self.alloc_count, self.check, self.corrupt = count, alloc_count, check, corrupt
        self.bar = threading.Barrier(len(comms))

    def run(self) -> tuple[list[float], list[int], list[int]]:
        n = len(self.comms)
        out: list = [None] * n

        def one(tid: int) -> None:
            try:
                th = PyThread(self, tid)
                t, took = th.measure()
                out[tid] = (t, took, th.failures)
            except BaseException as e:  # noqa: BLE001 - re-raised by the first thread
                out[tid] = e
                self.bar.abort()

        threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(1, n)]
        for t in threads:
            t.start()
        one(0)
        for t in threads:
            t.join()
        err = next((o for o in out if isinstance(o, BaseException)), None)
        if err is not None:
            raise err
        return tuple(list(v) for v in zip(*out))


# ---------------------------------------------------------------- the driver

def _engines(session: Session):
    """[(engine name, runner or None for Python threads)], agreed by every rank."""
    requested = session.cfg.engine
    if requested == "mpi4py":
        return [("mpi4py", None)]
    runner, note = native_mt.resolve(session.comm)
    if runner is None:
        if session.rank == 0:
            print(f"commbench: {note}", file=sys.stderr, flush=True)
        return [("mpi4py", None)]
    return [("native", runner)] + ([("mpi4py", None)] if requested == "both" else [])


def _thread_comms(comm, n: int) -> list:
    """One duplicate of comm per thread, tagged with IMB-MT's info key thread_id."""
    infos = [MPI.Info.Create({"thread_id": str(i)}) for i in range(n)]
    out = [comm.Dup(info) for info in infos]
    for info in infos:
        info.Free()
    return out


def run(session: Session) -> int:
    cfg, comm = session.cfg, session.comm
    s = Settings.of(session.params)
    engines = _engines(session)
    comms = _thread_comms(comm, s.threads)
    failures = 0
    try:
        for name in cfg.benchmarks:
            bench = FAMILY.get(name)
            counts = [0] if bench.columns == "barrier" else list(s.count)
            for engine, runner in engines:
                for count in counts:
                    session.progress(f"{name} at count {count} ({engine})", benchmark=name, np=session.size)
                    got = _measure(session, s, comms, bench, count, max(counts), runner)
                    every = comm.gather(got, root=0)
                    if session.rank == 0:
                        rec = row(bench, s, engine, count, every, session.size, cfg.check)
                        failures += bool(rec.defects)
                        session.emit(rec)
        failures = comm.bcast(failures, root=0)
    finally:
        for c in comms:
            c.Free()
    return failures


def _measure(session: Session, s: Settings, comms: list, bench: MtBench, count: int, alloc: int, runner):
    check, corrupt = session.cfg.check, session.corrupt
    if runner is None:
        return PyRun(s, comms, session.comm, bench, count, alloc, check, corrupt).run()
    return runner.run(comms, session.comm, bench=native_mt.BENCH_CODES[bench.name], count=count,
                      alloc_count=alloc, type_char=int(s.datatype == "char"), repeat=s.repeat, warmup=s.warmup,
                      stride=s.stride, window=s.window_size, barrier=native_mt.BARRIER_CODES[s.barrier],
                      check=int(check), align=s.malloc_align, algo=native_mt.ALLOC_CODES[s.malloc_algo],
                      corrupt=int(corrupt))


def row(bench: MtBench, s: Settings, engine: str, count: int, every: list, size: int, check: bool):
    """IMB-MT's numbers from every rank's (seconds, took part, failures) per thread (world rank 0)."""
    divider = bench.divide * (s.window_size if bench.window else 1)
    per_rep = 1.0 / (s.repeat * divider)
    nres = sum(sum(took) for _, took, _ in every)
    timed = [t * per_rep for times, took, _ in every for t, ok in zip(times, took) if ok]
    members = [r for r, (_, took, _) in enumerate(every) if any(took)]
    threads = [[t * per_rep if ok else None for t, ok in zip(times, took)] for times, took, _ in every]
    total = count * s.unit * s.threads  # IMB-MT's #bytes: the data of all threads of a rank
    fails = [list(f) for _, _, f in every]
    extra = {"engine": engine, "threads": s.threads, "count": count, "datatype": s.datatype,
             "message_bytes": count * s.unit, "processes": nres // s.threads, "thread_times": threads,
             "repeat": s.repeat, "warmup": s.warmup, "barrier": s.barrier, "stride": s.stride,
             "columns": bench.columns, "check_failures": fails if check else None}
    if bench.window:
        extra["window_size"] = s.window_size
    rec = records.build(benchmark=bench.name, family=F, kind=KIND, np_=nres // s.threads, mode="",
                        x=None if bench.columns == "barrier" else total, repetitions=s.repeat,
                        groups=[members], world_size=size, components=["t"],
                        rank_times={"t": [max((t for t in th if t is not None), default=None) for th in threads]},
                        turnover=1.0, defects=float(sum(map(sum, fails))) if check else None, extra=extra)
    if not timed:
        rec.status, rec.message, rec.values = records.INVALID, "NO SUCCESSFUL EXECUTIONS", {}
        return rec
    t_avg = sum(timed) / nres
    t_max = max(timed)
    v = {"t_min": min(timed) * 1e6, "t_max": t_max * 1e6, "t_avg": t_avg * 1e6, "t": t_max * 1e6}
    if bench.columns == "p2p":
        v["bytes_per_sec"] = total * bench.bw_factor / t_max if t_max > 0 else 0.0
    elif bench.columns == "rate":
        v["bytes_per_sec"] = total / s.threads * (nres // 2) / t_max if t_max > 0 else 0.0
        v["msgs_per_sec"] = float(int((nres // 2) / t_avg)) if t_avg > 0 else 0.0
    rec.values = v
    return rec


FAMILY = Family(
    name=F,
    title="IMB-MT",
    part="MT part",
    benchmarks=BENCHMARKS,
    description="IMB-MT: the MPI-1 patterns from T threads per rank, one communicator each (-thread_level multiple)",
    aliases=("IMB-MT",),
    options=OPTIONS,
    configure=configure,
    validate=validate,
    preamble=preamble,
    driver=run,
    view="mt",
    honours=frozenset({"check", "engine"}),
    memory=memory,
)
