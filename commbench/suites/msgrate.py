"""Family "msgrate": Sandia's real-world message rate benchmark (seed 003).

Four patterns, each iteration starting from a cold cache: single direction,
pair-based, pre-posted and all-start. Before every iteration each rank walks
a cache-sized array with a[i] = a[i-1] + 1 (numpy cumsum over a stride-0 view
of 1: one sequential pass that reads the previous element and writes every
element, like the seed's loop, at memory speed instead of interpreter speed),
then writes its send buffers (the seed: "send buffers are generally touched
just before the MPI send"). Rates are counted as the seed counts them: every
message a process sends *and* every one it receives, divided by the average
over processes of the time spent in the timed sections:

  single direction: iters * msgs / avg_time            (a process only sends or only receives;
                                                        odd ranks send to rank-1, as the seed's
                                                        pseudo-code)
  the others:       iters * peers * msgs * 2 / avg_time

Peers follow the seed's layout: npeers/2 "lower" and npeers/2 "higher"
ranks at distances that are multiples of the processes per node (--ppn), so
with the true ppn every peer is on another node. The seed's checks apply:
P >= 3, P > peers, P / ppn > peers.

The patterns are a procedure of their own (commbench.suites.procedure: their
timing is per iteration with untimed cache walks in between, and barriers
where the seed has them: pre-posted and all-start; --barriers adds them to
the other two, as the Sandia C code does; and the rate needs every rank's
total): each is one row, one records.Measurement, which the harness
(commbench.harness.rows) measures; the text table is a view.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from mpi4py import MPI

from commbench import records
from commbench.option_types import ConfigError, Option, bytes_option, choice, integer
from commbench.session import Session
from commbench.suites.base import Experiment, Family, FamilySettings
from commbench.suites.procedure import Procedure, Row, Unit

F = "msgrate"
KIND = "msgrate"
TAG = 1
PAIRINGS = ("odd-even", "halves")


@dataclass(frozen=True)
class MsgrateSettings(FamilySettings):
    prefix: ClassVar[str] = "msgrate_"
    peers: int = 6
    iters: int = 100
    msgs: int = 128
    size: int = 8
    cache: int = 16 * 2**20
    ppn: int = 1
    machine: bool = False
    pairing: str = (
        "odd-even"  # single direction: the seed's pseudo-code; "halves": the Sandia C code's
    )
    barriers: bool = (
        False  # single direction and pair-based: a barrier before each timed iteration (C code)
    )


OPTIONS = (
    Option(
        ("--peers",),
        "msgrate_peers",
        "<num>",
        "msgrate: peers each process talks to (default 6)",
        integer("--peers", 1),
    ),
    Option(
        ("--iters",),
        "msgrate_iters",
        "<num>",
        "msgrate: iterations per pattern (default 100; the C code's 4096 is minutes in Python)",
        integer("--iters", 1),
    ),
    Option(
        ("--msgs",),
        "msgrate_msgs",
        "<num>",
        "msgrate: messages per peer per iteration (default 128)",
        integer("--msgs", 1),
    ),
    Option(
        ("--msg-size",),
        "msgrate_size",
        "<bytes>",
        "msgrate: bytes per message (default 8)",
        bytes_option("--msg-size"),
    ),
    Option(
        ("--cache-size",),
        "msgrate_cache",
        "<bytes>",
        "msgrate: cache-invalidation array (default 16m; 0 disables)",
        bytes_option("--cache-size"),
    ),
    Option(
        ("--ppn",),
        "msgrate_ppn",
        "<num>",
        "msgrate: processes per node; peers are ppn ranks apart (default 1)",
        integer("--ppn", 1),
    ),
    Option(
        ("--machine-readable",),
        "msgrate_machine",
        "",
        "msgrate: also print the seed's one-line machine-readable form",
    ),
    Option(
        ("--pairing",),
        "msgrate_pairing",
        "<odd-even|halves>",
        "msgrate: single direction's pairs: odd ranks send to rank-1 (default, the seed's "
        "pseudo-code) or the lower half to rank+P/2 (the Sandia C code)",
        choice("--pairing", PAIRINGS),
        uses=lambda b: b.name == "single_direction",
    ),
    Option(
        ("--barriers",),
        "msgrate_barriers",
        "",
        "msgrate: an untimed barrier before every iteration of single "
        "direction and pair-based too (the Sandia C code; the seed's pseudo-code has none)",
        uses=lambda b: b.name in ("single_direction", "pair_based"),
    ),
)


def validate(cfg, size: int) -> None:
    """The seed's start-up checks, as configuration errors naming the fix."""
    s = MsgrateSettings.of(cfg.params)
    peers, ppn = s.peers, s.ppn
    if size <= peers:
        raise ConfigError(
            f"msgrate: job size {size} <= number of peers {peers} "
            f"(run with -n {peers + 1} or more, or lower --peers below {size})"
        )
    if size // ppn <= peers:
        raise ConfigError(
            f"msgrate: node count {size} / --ppn {ppn} = {size // ppn} <= number of peers {peers} "
            f"(lower --peers or --ppn)"
        )


# Python's bookkeeping per message (a buffer spec of each side and its request): a
# --msgs in the millions costs far more here than its bytes.
SPEC_BYTES = 600


def memory(params: dict, size: int) -> tuple[int, str]:
    """Bytes per process: the cache-walk array, send and receive buffers, the specs."""
    s = MsgrateSettings.of(params)
    n = s.peers * s.msgs
    need = s.cache + 2 * n * s.size + n * SPEC_BYTES
    return need, (
        f"msgrate: --cache-size {s.cache} + 2 x --peers {s.peers} x --msgs {s.msgs} x "
        f"--msg-size {s.size} bytes, and {SPEC_BYTES} bytes of bookkeeping per message"
    )


def peer_lists(rank: int, size: int, peers: int, ppn: int) -> tuple[list[int], list[int]]:
    """The seed's send and receive peers: ppn-strided lower and higher neighbours."""
    half = peers // 2
    send = [
        (rank + size + ((i - half) if i < half else (i - half + 1)) * ppn) % size
        for i in range(peers)
    ]
    if peers % 2 == 0:
        recv = list(send)
    else:
        recv = [
            (rank + size + ((i - half - 1) if i < half + 1 else (i - half)) * ppn) % size
            for i in range(peers)
        ]
    return send, recv


class Cache:
    """Cold-cache walk: a[i] = a[i-1] + 1 over the whole array, then touch the send buffer."""

    def __init__(self, nbytes: int):
        self.a = np.zeros(max(nbytes // 4, 0), np.int32)
        self.one = np.broadcast_to(np.int32(1), self.a.shape)

    def invalidate(self, sbuf: np.ndarray, stamp: int) -> None:
        if self.a.size:
            np.cumsum(self.one, dtype=np.int32, out=self.a)
        sbuf.fill(stamp & 0xFF)


class Patterns:
    def __init__(self, s: MsgrateSettings, comm: MPI.Comm, beat=lambda: None):
        self.comm = comm
        self.beat = beat  # once per iteration, outside the timed part: the watchdog sees steps
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.peers, self.iters, self.msgs = s.peers, s.iters, s.msgs
        self.nbytes, self.ppn = s.size, s.ppn
        self.pairing, self.barriers = s.pairing, s.barriers
        self.partner: tuple[int, bool] | None = None
        self.cache = Cache(s.cache)
        total = self.peers * self.msgs * self.nbytes
        self.sbuf = np.zeros(max(total, 1), np.uint8)
        self.rbuf = np.zeros(max(total, 1), np.uint8)
        nb = self.nbytes
        self.sspec = [
            [self.sbuf[i * nb : (i + 1) * nb], MPI.CHAR] for i in range(self.peers * self.msgs)
        ]
        self.rspec = [
            [self.rbuf[i * nb : (i + 1) * nb], MPI.CHAR] for i in range(self.peers * self.msgs)
        ]
        self.send_peers, self.recv_peers = peer_lists(self.rank, self.size, self.peers, self.ppn)

    def _slots(self, j: int) -> range:
        return range(j * self.msgs, (j + 1) * self.msgs)

    def single_direction(self) -> tuple[float, int, bool]:
        """One process sends msgs messages per iteration, its partner receives them;
        an odd last rank sits out. Returns (seconds, messages, took part).

        Pairs, --pairing: odd-even (default) follows the seed's pseudo-code, which
        splits the roles on `if (odd)`: odd rank r sends to r-1, even rank r
        receives from r+1. (Both of its branches read "post N sends", a slip: a
        message sent must be received.) halves follows the Sandia C code: rank
        r < P/2 sends to r+P/2. With block placement, odd-even pairs neighbours
        (often on one node) and halves pairs across the job."""
        odd_out = self.size % 2 == 1 and self.rank == self.size - 1
        comm = self.comm.Split(MPI.UNDEFINED if odd_out else 1, self.rank)
        if odd_out:
            return 0.0, 0, False
        if self.pairing == "halves":
            half = comm.Get_size() // 2
            sender = self.rank < half
            other = self.rank + half if sender else self.rank - half
        else:
            sender = self.rank % 2 == 1
            other = self.rank - 1 if sender else self.rank + 1
        total = 0.0
        w, waitall = MPI.Wtime, MPI.Request.Waitall
        post = comm.Isend if sender else comm.Irecv
        specs = self.sspec if sender else self.rspec
        self.partner = (other, sender)  # reported with the record: who sent to whom
        for i in range(self.iters):
            self.beat()
            self.cache.invalidate(self.sbuf, i)
            if self.barriers:
                comm.Barrier()
            t0 = w()
            reqs = [post(specs[k], other, TAG) for k in range(self.msgs)]
            waitall(reqs)
            total += w() - t0
        comm.Free()
        return total, self.iters * self.msgs, True

    def pair_based(self) -> tuple[float, int, bool]:
        comm, w, waitall = self.comm, MPI.Wtime, MPI.Request.Waitall
        irecv, isend = comm.Irecv, comm.Isend
        total = 0.0
        p = self.peers
        for i in range(self.iters):
            self.beat()
            self.cache.invalidate(self.sbuf, i)
            if (
                self.barriers
            ):  # the seed's pair-based has none: "the test may result in unexpected messages"
                comm.Barrier()
            t0 = w()
            for j in range(p):
                src, dst = self.recv_peers[j], self.send_peers[p - j - 1]
                reqs = [irecv(self.rspec[k], src, TAG) for k in self._slots(j)]
                reqs += [isend(self.sspec[k], dst, TAG) for k in self._slots(j)]
                waitall(reqs)
            total += w() - t0
        return total, self.iters * p * self.msgs * 2, True

    def pre_post(self) -> tuple[float, int, bool]:
        """Receives for the next iteration are posted at the end of the previous
        one, before the cache walk (the seed's first and last phases timed too)."""
        comm, w, waitall = self.comm, MPI.Wtime, MPI.Request.Waitall
        irecv, isend = comm.Irecv, comm.Isend
        p = self.peers

        def post_recvs() -> list:
            return [
                irecv(self.rspec[k], self.recv_peers[j], TAG)
                for j in range(p)
                for k in self._slots(j)
            ]

        def post_sends() -> list:
            return [
                isend(self.sspec[k], self.send_peers[p - j - 1], TAG)
                for j in range(p)
                for k in self._slots(j)
            ]

        comm.Barrier()
        t0 = w()
        reqs = post_recvs()
        total = w() - t0
        for i in range(self.iters - 1):
            self.beat()
            self.cache.invalidate(self.sbuf, i)
            comm.Barrier()
            t0 = w()
            reqs += post_sends()
            waitall(reqs)
            reqs = post_recvs()
            total += w() - t0
        t0 = w()
        reqs += post_sends()
        waitall(reqs)
        total += w() - t0
        return total, self.iters * p * self.msgs * 2, True

    def all_start(self) -> tuple[float, int, bool]:
        comm, w, waitall = self.comm, MPI.Wtime, MPI.Request.Waitall
        irecv, isend = comm.Irecv, comm.Isend
        p = self.peers
        total = 0.0
        for i in range(self.iters):
            self.beat()
            self.cache.invalidate(self.sbuf, i)
            comm.Barrier()
            t0 = w()
            reqs = []
            for j in range(p):
                reqs += [irecv(self.rspec[k], self.recv_peers[j], TAG) for k in self._slots(j)]
                reqs += [
                    isend(self.sspec[k], self.send_peers[p - j - 1], TAG) for k in self._slots(j)
                ]
            waitall(reqs)
            total += w() - t0
        return total, self.iters * p * self.msgs * 2, True


NAMES = {
    "single_direction": "single direction",
    "pair_based": "pair-based",
    "pre_post": "pre-post",
    "all_start": "all-start",
}


class MsgrateProcedure(Procedure):
    """A unit of one row per pattern; the patterns' buffers and peers are the whole run's."""

    def __init__(self, session: Session):
        self.session = session
        self.s = MsgrateSettings.of(session.params)
        self.pat: Patterns | None = None

    def open(self) -> None:
        self.pat = Patterns(self.s, self.session.comm, self.session.beat)

    def units(self) -> Iterator[Unit]:
        p = self.session.size
        for name in self.session.cfg.benchmarks:
            yield PatternUnit(name, p, [Row(name, p, self.s.size)], kind=KIND, procedure=self)


class PatternUnit(Unit):
    def __init__(self, *args, procedure: MsgrateProcedure, **kw):
        super().__init__(*args, **kw)
        self.proc = procedure

    def measure(self, row: Row, engine: str) -> tuple:
        """The pattern on every rank: (messages a rank counts, every rank's (seconds, took part),
        the single-direction partners on rank 0)."""
        comm, pat = self.proc.session.comm, self.proc.pat
        comm.Barrier()
        pat.partner = None
        seconds, msgs, took_part = getattr(pat, row.benchmark)()
        every = comm.allgather((seconds, took_part))
        partners = comm.gather(pat.partner, root=0)
        comm.Barrier()
        return msgs, every, partners

    def record(self, row: Row, engine: str, data: tuple) -> records.Measurement:
        return pattern_record(row.benchmark, self.proc.s, self.proc.session.size, *data)


def procedure(session: Session) -> MsgrateProcedure:
    return MsgrateProcedure(session)


def pattern_record(
    name: str, s: MsgrateSettings, size: int, msgs: int, every: list, partners: list
) -> records.Measurement:
    """The pattern's row (world rank 0): the seed's rate from every rank's seconds."""
    part = [t for t, ok in every if ok]
    avg = sum(part) / len(part)
    # The C code divides the summed single-direction time by the whole job
    # size although an odd last rank sat out; we average over the ranks
    # that took part (identical for even P).
    rate = msgs / avg if avg > 0 else 0.0
    members = [r for r, (_, ok) in enumerate(every) if ok]
    rec = records.build(
        benchmark=name,
        family=F,
        kind=KIND,
        np_=len(members),
        mode="",
        x=s.size,
        repetitions=s.iters,
        groups=[members],
        world_size=size,
        components=["t"],
        rank_times={"t": [t / s.iters if ok else None for t, ok in every]},
        turnover=1.0,
        extra={
            "pattern": NAMES[name],
            "messages_per_second": rate,
            "messages_per_rank": msgs,
            "avg_time_s": avg,
            "rank_rates": [msgs / t if ok and t > 0 else None for t, ok in every],
            "peers": s.peers,
            "msgs": s.msgs,
            "cache_size": s.cache,
            "ppn": s.ppn,
            "pairing": s.pairing if name == "single_direction" else None,
            "barrier": s.barriers or name in ("pre_post", "all_start"),
            **_pairs(partners),
        },
    )
    return rec


def _pairs(partners: list) -> dict:
    """Single direction: each rank's partner as it used it, and the senders."""
    if not any(partners):
        return {}
    return {
        "partners": [p[0] if p else None for p in partners],
        "senders": [r for r, p in enumerate(partners) if p and p[1]],
    }


BENCHMARKS = tuple(
    Experiment(name, desc)
    for name, desc in (
        (
            "single_direction",
            "odd ranks send msgs messages each to the even rank below, one direction",
        ),
        ("pair_based", "per peer in turn: receive msgs from one, send msgs to another, waitall"),
        ("pre_post", "receives posted before the cache walk, then all sends, one waitall"),
        ("all_start", "all receives and sends to every peer started at once, one waitall"),
    )
)

FAMILY = Family(
    name=F,
    title="commbench msgrate",
    part="Sandia real-world message rate",
    benchmarks=BENCHMARKS,
    description="message rate with cold caches, many peers, sends and receives at once (seed 003)",
    min_world=3,
    options=OPTIONS,
    procedure=procedure,
    honours=frozenset(
        {"samples", "precision", "precision_budget", "shuffle", "time"}
    ),  # the harness's rows
    view="msgrate",
    validate=validate,
    memory=memory,
)
