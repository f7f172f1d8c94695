"""msgrate's four patterns and their procedure (the family, its settings and descriptors:
the catalog, commbench.suites.msgrate)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from mpi4py import MPI

from commbench import records
from commbench.session import Session
from commbench.suites.msgrate import KIND, TAG, F, MsgrateSettings
from commbench.suites.procedure import Procedure, Row, Unit


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
