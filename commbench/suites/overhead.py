"""Family "overhead": seed 002's F/S/R/A/U/E decomposition, its §5.2 interference
experiment, and LogGP measured the way Netgauge does — one run, same ranks.

The experiments are sequences of timed phases across up to k+1 ranks (echo
chains, messages arriving during a timed compute loop, streams through a
computing rank), which the harness's per-size kernel shape does not express,
so this family brings its own driver. The data flow is kept: every
measurement becomes a records.Measurement (raw per-experiment means with
min/max/std in `extra`), emitted to the sinks; the tables are a view
(commbench.views.overhead_text) that rebuilds them from the records with the
pure models in commbench.models.overhead. A final "analysis" record carries
the same solved values and fits for machine readers.

MPI mapping (docs/overhead.md): the seed's write/read system calls are
MPI_Send/MPI_Recv; its operating-system forwarding through intermediate
nodes is done here by forwarding ranks that MPI_Probe (message arrived), then
Recv and Send; each forwarder times that Recv+Send and the time is taken out
of the echo, so the chain's differences leave E alone, as the seed's OS
forwarding did (it has no F, A or U on intermediate nodes).
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from commbench import records
from commbench.compute import KINDS, Calibration, ComputeLoop, calibrate
from commbench.config import ConfigError, Option, _int, _positive_float
from commbench.suites.base import Benchmark, Family, Kind
from commbench.views import Collector

F = "overhead"
KIND = "overhead"
SEED_SIZES = (16, 500, 1000, 1500, 2000)  # seed 002, Tables 1-3
BIGSIZE = 2000  # seed 002 §5.2 stream message size
WINDOW = 3  # messages each stream keeps in flight (seed Appendix A, test 8)
PARTS = ("decomposition", "interference", "loggp")
T_RAUFS, T_RS, T_FEU, T_ECHO, T_LOGGP = 21, 22, 23, 24, 25
T_DATA, T_STOP, T_DONE, T_DUMMY = 31, 32, 33, 34


def _sizes(s: str) -> tuple[int, ...]:
    form = "accepted: --sizes <n1>,<n2>,... with at least two distinct non-negative byte counts"
    try:
        v = tuple(int(x) for x in s.split(","))
    except ValueError:
        raise ConfigError(f"--sizes {s!r}: {form}") from None
    if len(set(v)) < 2 or min(v) < 0:
        raise ConfigError(f"--sizes {s!r}: {form} (a line needs two sizes)")
    return tuple(sorted(set(v)))


def _q(s: str) -> tuple[str, ...]:
    low = s.lower()
    if low == "both":
        return KINDS
    if low in KINDS:
        return (low,)
    raise ConfigError(f"--q {s!r}: accepted int, float or both")


def _statistic(s: str) -> str:
    if s.lower() not in ("mean", "median", "min"):
        raise ConfigError(f"--statistic {s!r}: accepted mean, median or min")
    return s.lower()


def _baseline(s: str) -> str:
    if s.lower() not in ("calibrated", "paired"):
        raise ConfigError(f"--baseline {s!r}: accepted calibrated or paired")
    return s.lower()


OPTIONS = (
    Option(("--sizes",), "overhead_sizes", "<n1,n2,...>", "overhead: message sizes in bytes (default the seed's 16,500,1000,1500,2000)", _sizes),
    Option(("--trials",), "overhead_trials", "<N>", "overhead: independent trials, for mean ± std per size (default 5, as the seed)", _int("--trials", 1)),
    Option(("--reps",), "overhead_reps", "<N>", "overhead: repetitions averaged per experiment and size, plus one dropped warm-up (default 100)", _int("--reps", 2)),
    Option(("--q",), "overhead_q", "<int|float|both>", "overhead: compute loop Q variants (default both)", _q),
    Option(("--q-time",), "overhead_q_us", "<usec>", "overhead: duration of Q(COMPTIME) in microseconds (default 2000)", _positive_float("--q-time")),
    Option(("--max-distance",), "overhead_distance", "<k>", "overhead: echo distances 1..k through a chain of ranks (default P-1)", _int("--max-distance", 2)),
    Option(("--loggp-n",), "overhead_loggp_n", "<n>", "overhead: messages per PRTT(n,d,s) round (default 10, Netgauge's)", _int("--loggp-n", 2)),
    Option(("--statistic",), "overhead_statistic", "<mean|median|min>", "overhead: per-experiment statistic solved (default mean, as the seed; median or min resist a loaded machine)", _statistic),
    Option(("--baseline",), "overhead_baseline", "<calibrated|paired>", "overhead: Q time subtracted from R, F+S, R+S: the start calibration (default, the seed's) or Q timed in the same round without traffic", _baseline),
    Option(("--stream-time",), "overhead_stream_s", "<secs>", "overhead: computation timed in the interference experiment (default 0.5)", _positive_float("--stream-time")),
)


@dataclass(frozen=True)
class Settings:
    sizes: tuple[int, ...]
    trials: int
    reps: int
    q: tuple[str, ...]
    q_s: float
    distance: int
    loggp_n: int
    stream_s: float
    parts: tuple[str, ...]

    @classmethod
    def from_params(cls, p: dict, world: int, parts: tuple[str, ...] = PARTS) -> Settings:
        return cls(sizes=p.get("overhead_sizes", SEED_SIZES), trials=p.get("overhead_trials", 5),
                   reps=p.get("overhead_reps", 100), q=p.get("overhead_q", KINDS),
                   q_s=p.get("overhead_q_us", 2000.0) * 1e-6,
                   distance=min(p.get("overhead_distance", world - 1), world - 1),
                   loggp_n=p.get("overhead_loggp_n", 10), stream_s=p.get("overhead_stream_s", 0.5),
                   parts=parts)


def check(cfg, size: int) -> None:
    if "interference" in cfg.benchmarks and "decomposition" not in cfg.benchmarks:
        raise ConfigError("interference predicts its slowdown from R and S: run it with decomposition "
                          "(commbench overhead decomposition interference)")
    d = cfg.params.get("overhead_distance")
    if d is not None and d > size - 1:
        raise ConfigError(f"--max-distance {d}: a chain of {d} hops needs {d + 1} processes, got {size} (use -n {d + 1})")


def _stats(samples: list[float]) -> dict:
    us = [v * 1e6 for v in samples]
    return {"mean_us": statistics.fmean(us), "min_us": min(us), "max_us": max(us),
            "median_us": statistics.median(us), "std_us": statistics.stdev(us) if len(us) > 1 else 0.0,
            "samples": len(us)}


class Driver:
    def __init__(self, cfg, sinks, comm: MPI.Comm, collected: list | None = None):
        self.cfg = cfg
        self.sinks = sinks
        self.collected = collected if collected is not None else []  # this run's records (rank 0)
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.st = Settings.from_params(cfg.params, self.size, tuple(b.lower() for b in cfg.benchmarks))
        self.w = MPI.Wtime

    # -- plumbing -------------------------------------------------------------
    def emit(self, benchmark: str, x: int | None, samples: list[float] | None, extra: dict, np_: int = 2,
             calib: tuple[dict, str] | None = None) -> None:
        """One record. calib = (a rank's calibration, "comptime" | "sendtime"): the
        calibrated Q time the samples had subtracted (its mean, as the seed); for
        the median and min analyses median_us and min_us are shifted to subtract
        the calibration's median and minimum instead."""
        if self.rank != 0:
            return
        t = [None] * self.size
        ex = dict(extra)
        if samples:
            t[0] = statistics.fmean(samples)
            ex.update(_stats(samples))
            if calib is not None:
                c, key = calib
                for stat in ("median", "min"):
                    ex[f"{stat}_us"] += (c[key] - c[f"{key}_{stat}"]) * 1e6
                ex["subtracted_us"] = {"mean": c[key] * 1e6, "median": c[f"{key}_median"] * 1e6,
                                       "min": c[f"{key}_min"] * 1e6}
        rec = records.build(benchmark=benchmark, family=F, kind=KIND, np_=np_, mode="", x=x,
                            repetitions=len(samples or ()), groups=[list(range(np_))],
                            world_size=self.size, components=["t"], rank_times={"t": t},
                            turnover=1.0, extra=ex)
        for s in self.sinks:
            s.record(rec)

    def settle(self) -> None:
        """Barrier without busy polling, so idle ranks leave the cores to the timed ones."""
        req = self.comm.Ibarrier()
        while not req.Test():
            time.sleep(1e-4)

    def calibrate(self, kind: str) -> tuple[ComputeLoop, Calibration, list[dict]]:
        q = ComputeLoop(kind)
        mine = None
        for r in range(self.size):  # one rank at a time: the cores are not shared while timing
            if r == self.rank:
                mine = calibrate(q, self.st.q_s)
            self.settle()
        assert mine is not None
        every = self.comm.allgather(mine.to_dict())
        return q, mine, every

    # -- the run --------------------------------------------------------------
    def run(self) -> int:
        st = self.st
        if "decomposition" in st.parts:
            for kind in st.q:
                q, cal, every = self.calibrate(kind)
                load = os.getloadavg() if hasattr(os, "getloadavg") else None
                self.emit("calibration", None, None, {"q": kind, "ranks": every, "loadavg": load,
                                                     "cpus": os.cpu_count()}, np_=self.size)
                for trial in range(st.trials):
                    for n in st.sizes:
                        self.decomposition(q, cal, every, kind, trial, n)
                if "interference" in st.parts and kind == st.q[0]:
                    self.interference(q, cal, kind)
        if "loggp" in st.parts:
            for trial in range(st.trials):
                for n in st.sizes:
                    self.loggp(trial, n)
        self.finish_analysis()
        return 0

    def finish_analysis(self) -> None:
        if self.rank != 0:
            return
        from commbench.models.overhead import analyse, to_plain

        p = self.cfg.params
        result = analyse(self.collected, p.get("overhead_statistic", "mean"), p.get("overhead_baseline", "calibrated"))
        self.emit("analysis", None, None, to_plain(result), np_=self.size)

    # -- seed §3: one size of one trial ------------------------------------------
    def decomposition(self, q: ComputeLoop, cal: Calibration, every: list[dict], kind: str, trial: int, n: int) -> None:
        base = {"q": kind, "trial": trial}
        buf = np.zeros(max(n, 1), np.uint8)
        spec = [buf[:n], MPI.BYTE]
        raufs = self.exp_raufs(q, cal, spec)
        self.settle()
        rs = self.exp_rs(q, cal, spec, n)
        self.settle()
        feu = self.exp_feu(q, cal, every, spec)
        self.settle()
        echoes = []
        for d in range(1, self.st.distance + 1):
            echoes.append(self.exp_echo(q, cal, every, spec, d))
            self.settle()
        if self.rank == 0:
            r, au, fs, bc, bs = raufs
            mine = every[0]
            self.emit("Q(COMPTIME)", n, bc, base)
            self.emit("Q(SENDTIME)", n, bs, base)
            self.emit("R", n, r, base, calib=(mine, "comptime"))
            self.emit("A+U", n, au, base)
            self.emit("F+S", n, fs, base, calib=(mine, "sendtime"))
            self.emit("R+S", n, rs, base, np_=3, calib=(mine, "comptime"))
            self.emit("2(F+E+U)", n, feu, base, calib=(every[1], "comptime"))
            for d, (t, fwd) in enumerate(echoes, 1):
                self.emit("echo", n, t, dict(base, distance=d, forwarding_us=fwd[0] * 1e6,
                                             forwarding_median_us=fwd[1] * 1e6,
                                             forwarding_min_us=fwd[2] * 1e6), np_=d + 1,
                          calib=(every[d], "sendtime"))

    def exp_raufs(self, q, cal, spec):
        """Seed tests 2-4 in one loop: R, A+U and F+S on rank 0, rank 1 echoes."""
        comm, w, reps = self.comm, self.w, self.st.reps
        su, cu, run = cal.send_units, cal.comp_units, q.run
        send, recv = comm.Send, comm.Recv
        R, AU, FS, BC, BS = [], [], [], [], []
        if self.rank == 0:
            for a in range(reps + 1):
                send(spec, 1, T_RAUFS)
                run(su)  # let the output clear
                t0 = w()
                run(cu)  # the echo arrives during this
                t1 = w()
                recv(spec, 1, T_RAUFS)  # already arrived: A + U
                t2 = w()
                send(spec, 1, T_RAUFS)
                run(su)
                t3 = w()
                recv(spec, 1, T_RAUFS)
                # Paired baseline (nothing in flight now; rank 1 waits for the next
                # round): the same Q(COMPTIME) and Q(SENDTIME), for --baseline paired.
                t4 = w()
                run(cu)
                t5 = w()
                run(su)  # also the seed's closing Q(SENDTIME)
                t6 = w()
                if a:
                    R.append(t1 - t0 - cal.comptime - cal.timer)
                    AU.append(t2 - t1 - cal.timer)
                    FS.append(t3 - t2 - cal.sendtime - cal.timer)
                    BC.append(t5 - t4 - cal.timer)
                    BS.append(t6 - t5 - cal.timer)
        elif self.rank == 1:
            for _ in range(reps + 1):
                recv(spec, 0, T_RAUFS)
                run(su)
                run(su)  # make sure the return lands in rank 0's timed Q
                send(spec, 0, T_RAUFS)
                run(su)
                recv(spec, 0, T_RAUFS)
                run(su)
                run(su)  # make sure rank 0's F+S timing is over
                send(spec, 0, T_RAUFS)
        return R, AU, FS, BC, BS

    def exp_rs(self, q, cal, spec, n):
        """Seed test 5: a message comes in (from rank 1) and one goes out (to rank 2)
        through rank 0 while it computes; the excess of Q is R + S. MPI forwards
        only through the application, so the outgoing Isend is started just
        before the timed Q (its F untimed) and its transfer, like the incoming
        one, falls into Q."""
        comm, w, reps = self.comm, self.w, self.st.reps
        su, cu, run = cal.send_units, cal.comp_units, q.run
        out = np.zeros(max(n, 1), np.uint8)
        ospec = [out[:n], MPI.BYTE]
        RS = []
        if self.rank == 0:
            for a in range(reps + 1):
                comm.Send(spec, 1, T_RS)
                run(su)
                req = comm.Isend(ospec, 2, T_RS)
                t0 = w()
                run(cu)
                t1 = w()
                comm.Recv(spec, 1, T_RS)
                req.Wait()
                if a:
                    RS.append(t1 - t0 - cal.comptime - cal.timer)
                run(su)
        elif self.rank == 1:
            for _ in range(reps + 1):
                comm.Recv(spec, 0, T_RS)
                run(su)
                run(su)
                comm.Send(spec, 0, T_RS)
        elif self.rank == 2:
            for _ in range(reps + 1):
                req = comm.Irecv(ospec, 0, T_RS)
                while not req.Test():
                    time.sleep(5e-5)
        return RS

    def _round_trips(self, q, cal, spec, tag, x):
        """Rank 0's side of tests 1 and 6: send to rank 1, compute Q(SENDTIME),
        receive the echo; each round trip minus the partner's known compute x
        and the timer cost (the first, warm-up round is dropped)."""
        comm, w, su, run = self.comm, self.w, cal.send_units, q.run
        out = []
        for a in range(self.st.reps + 1):
            t0 = w()
            comm.Send(spec, 1, tag)
            run(su)
            comm.Recv(spec, 1, tag)
            t1 = w()
            if a:
                out.append(t1 - t0 - x - cal.timer)
            run(su)
        return out

    def exp_feu(self, q, cal, every, spec):
        """Seed test 6: rank 0 writes, computes, reads before the echo arrives;
        rank 1 (read posted in advance) computes X = its Q(COMPTIME), echoes."""
        comm, reps = self.comm, self.st.reps
        su, cu, run = cal.send_units, cal.comp_units, q.run
        out = []
        if self.rank == 0:
            out = self._round_trips(q, cal, spec, T_FEU, every[1]["comptime"])
        elif self.rank == 1:
            for _ in range(reps + 1):
                comm.Recv(spec, 0, T_FEU)
                run(cu)
                comm.Send(spec, 0, T_FEU)
                run(su)
        return out

    def exp_echo(self, q, cal, every, spec, d):
        """Seed test 1 at distance d: rank 0 -> 1 -> ... -> d and back. Ranks
        1..d-1 forward: Probe (the message has arrived), then Recv + Send, timed;
        the forwarding time is removed from T_d (the seed's OS forwarding had no
        F, A or U on intermediate nodes). Returns (T_d samples, (mean, median)
        forwarding seconds summed over the forwarders)."""
        comm, w, reps = self.comm, self.w, self.st.reps
        su, run = cal.send_units, q.run
        r = self.rank
        T: list[float] = []
        fwd = (0.0, 0.0, 0.0)
        if r == 0:
            T = self._round_trips(q, cal, spec, T_ECHO, every[d]["sendtime"])
        elif r < d:
            probe, recv, send = comm.Probe, comm.Recv, comm.Send
            work = []
            for a in range(reps + 1):
                probe(r - 1, T_ECHO)
                ta = w()
                recv(spec, r - 1, T_ECHO)
                send(spec, r + 1, T_ECHO)
                tb = w()
                probe(r + 1, T_ECHO)
                tc = w()
                recv(spec, r + 1, T_ECHO)
                send(spec, r - 1, T_ECHO)
                td = w()
                if a:
                    work.append(tb - ta + td - tc - 2 * cal.timer)
            fwd = (statistics.fmean(work), statistics.median(work), min(work))
        elif r == d:
            for _ in range(reps + 1):
                comm.Recv(spec, d - 1, T_ECHO)
                run(su)
                comm.Send(spec, d - 1, T_ECHO)
                run(su)
        self.settle()
        fwds = comm.gather(fwd, root=0)
        if r != 0:
            return T, (0.0, 0.0, 0.0)
        return T, tuple(sum(f[i] for f in fwds) for i in range(3))

    # -- seed §5.2 --------------------------------------------------------------
    def interference(self, q: ComputeLoop, cal: Calibration, kind: str) -> None:
        """Rank 0 computes a fixed Q while 0..3 neighbours stream messages through
        it (it forwards each back between compute units, polling with Testsome)."""
        units = max(10, round(self.st.stream_s / cal.unit_s))
        streams = min(3, self.size - 1)
        for k in range(1, streams + 1):
            base = self._stream_round(q, 0, units)
            self.settle()
            loaded = self._stream_round(q, k, units)
            self.settle()
            got = self.comm.gather(loaded if 1 <= self.rank <= k else None, root=0)
            if self.rank == 0:
                periods = [g[0] for g in got[1 : k + 1]]
                msgs = [g[1] for g in got[1 : k + 1]]
                self.emit("interference", BIGSIZE, [loaded[0]], {
                    "q": kind, "streams": k, "units": units, "t_base_s": base[0], "t_loaded_s": loaded[0],
                    "slowdown": loaded[0] / base[0], "period_us": [p * 1e6 for p in periods],
                    "messages": msgs, "forwarded": loaded[1]}, np_=k + 1)

    def _stream_round(self, q, k: int, units: int):
        comm, w = self.comm, self.w
        r = self.rank
        if r == 0:
            bufs = [np.zeros(BIGSIZE, np.uint8) for _ in range(max(k, 1))]
            stats = [MPI.Status() for _ in range(max(k, 1))]
            if k == 0:  # the same polling on a receive that never completes
                reqs = [comm.Irecv([bufs[0], MPI.BYTE], 0, T_DUMMY)]
            else:
                reqs = [comm.Irecv([bufs[i], MPI.BYTE], i + 1, MPI.ANY_TAG) for i in range(k)]
            testsome, send, irecv, run = MPI.Request.Testsome, comm.Send, comm.Irecv, q.run
            forwarded = 0
            t0 = w()
            for _ in range(units):
                run(1)
                idx = testsome(reqs, stats)
                if idx:
                    for i in idx:
                        send([bufs[i], MPI.BYTE], i + 1, T_DATA)
                        reqs[i] = irecv([bufs[i], MPI.BYTE], i + 1, MPI.ANY_TAG)
                        forwarded += 1
            t1 = w()
            if k == 0:
                reqs[0].Cancel()
                reqs[0].Wait()
                return t1 - t0, 0
            for i in range(k):
                send([bufs[i][:1], MPI.BYTE], i + 1, T_STOP)
            done = 0
            st = MPI.Status()
            while done < k:
                i = MPI.Request.Waitany(reqs, st)
                if st.Get_tag() == T_DATA:
                    send([bufs[i], MPI.BYTE], i + 1, T_DATA)
                    reqs[i] = irecv([bufs[i], MPI.BYTE], i + 1, MPI.ANY_TAG)
                else:  # T_DONE: this stream is drained up to here
                    done += 1
            return t1 - t0, forwarded
        if r <= k:
            sb = np.ones(BIGSIZE, np.uint8)
            rb = np.zeros(BIGSIZE, np.uint8)
            st = MPI.Status()
            sent = back = counted = 0
            stopped = False
            t_start = w()
            t_stop = t_start
            for _ in range(WINDOW):
                comm.Send([sb, MPI.BYTE], 0, T_DATA)
                sent += 1
            while True:
                comm.Recv([rb, MPI.BYTE], 0, MPI.ANY_TAG, st)
                if st.Get_tag() == T_DATA:
                    back += 1
                    if not stopped:
                        comm.Send([sb, MPI.BYTE], 0, T_DATA)
                        sent += 1
                else:
                    t_stop, counted, stopped = w(), back, True
                    comm.Send([sb[:1], MPI.BYTE], 0, T_DONE)
                if stopped and back == sent:
                    break
            return (t_stop - t_start) / max(counted, 1), counted
        return None

    # -- LogGP, Netgauge's parametrised round trips ------------------------------------
    def loggp(self, trial: int, n: int) -> None:
        comm, w, reps, m = self.comm, self.w, self.st.reps, self.st.loggp_n
        r = self.rank
        buf = np.zeros(max(n, 1), np.uint8)
        spec = [buf[:n], MPI.BYTE]

        def spin(sec: float) -> None:
            end = w() + sec
            while w() < end:
                pass

        def client(count: int, d: float) -> list[float]:
            out = []
            for a in range(reps + 1):
                t0 = w()
                comm.Send(spec, 1, T_LOGGP)
                for _ in range(count - 1):
                    if d:
                        spin(d)
                    comm.Send(spec, 1, T_LOGGP)
                comm.Recv(spec, 1, T_LOGGP)
                t1 = w()
                if a:
                    out.append(t1 - t0)
            return out

        def server(count: int) -> None:
            for _a in range(reps + 1):
                for _ in range(count):
                    comm.Recv(spec, 0, T_LOGGP)
                comm.Send(spec, 0, T_LOGGP)

        res = {}
        if r == 0:
            res["prtt_1_0"] = client(1, 0.0)
            res["prtt_n_0"] = client(m, 0.0)
            d = statistics.median(res["prtt_1_0"])
            comm.send(d, 1, T_LOGGP)
            res["prtt_n_d"] = client(m, d)
            # o_r: the client sends back to back, the server waits d before each
            # receive so the message is surely there, and times the receives.
            for _ in range(reps + 1):
                for _ in range(m):
                    comm.Send(spec, 1, T_LOGGP)
                comm.Recv(spec, 1, T_LOGGP)
            o_r = comm.recv(source=1, tag=T_LOGGP)
            base = {"trial": trial, "n": m, "d_us": d * 1e6}
            for key in ("prtt_1_0", "prtt_n_0", "prtt_n_d"):
                self.emit(key, n, res[key], base)
            self.emit("o_r", n, o_r, base)
        elif r == 1:
            server(1)
            server(m)
            d = comm.recv(source=0, tag=T_LOGGP)
            server(m)
            o_r = []
            tm = MPI.Wtime
            for a in range(reps + 1):
                comm.Recv(spec, 0, T_LOGGP)
                spin(d)
                total = 0.0
                for _ in range(m - 1):
                    spin(d)
                    t0 = tm()
                    comm.Recv(spec, 0, T_LOGGP)
                    total += tm() - t0
                comm.Send(spec, 0, T_LOGGP)
                if a:
                    o_r.append(total / (m - 1))
            comm.send(o_r, 0, T_LOGGP)
        self.settle()




def run(cfg, sinks, comm: MPI.Comm) -> int:
    collector = Collector()
    return Driver(cfg, [collector, *sinks], comm, collector.records).run()


def _view(stream):
    from commbench.views.overhead_text import OverheadText

    return OverheadText(stream)


def _not_a_kernel(ctx, n):
    raise RuntimeError("overhead experiments run through their driver, not the harness")


BENCHMARKS = (
    Benchmark("decomposition", F, Kind.SINGLE, _not_a_kernel,
              "E, R, S, F, U, A per size for each Q variant, fitted lines a + b*n (seed 002 sections 3-4)"),
    Benchmark("interference", F, Kind.SINGLE, _not_a_kernel,
              "rank 0 computes while 1..3 neighbours stream 2000-byte messages through it (seed 002 section 5.2)"),
    Benchmark("loggp", F, Kind.SINGLE, _not_a_kernel,
              "L, o_s, o_r, g, G from Netgauge's parametrised round trips PRTT(n,d,s)"),
)

FAMILY = Family(
    name=F,
    title="commbench overhead",
    part="Krumme-Greenfield overhead decomposition and LogGP",
    benchmarks=BENCHMARKS,
    description="F/S/R/A/U/E per message size with fitted lines (seed 002), interference, LogGP (Netgauge PRTT)",
    min_world=3,
    options=OPTIONS,
    driver=run,
    view=_view,
    validate=check,
)
