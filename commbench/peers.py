"""The watchdog's channel between the ranks and world rank 0: plain TCP, no MPI.

Rank 0 listens (Hub); every other rank connects once, when the run's
configuration is known, and keeps the connection open (Link), starting with
a hello that says which rank it is, on which host, with which pid. What the
connection carries:

- the end of a rank. A process that ends in any way (killed, crashed, the
  node's daemons and tasks killed) has its sockets closed by the kernel, so
  rank 0 reads end-of-file within a watchdog tick, without the "bye" a rank
  sends when it finishes: that rank is lost, and rank 0 knows its host from
  the hello. (A node that vanishes without closing anything, a power loss or
  a cut cable, is not seen here: the --timeout watchdog names its ranks as
  the ones that did not answer.)
- the watchdog's reports (where a stuck rank was, its completed samples);
- rank 0's word that the job ends ("end", with the exit status) or finished
  ("done"), so the other ranks leave with it even under a process manager
  that leaves them running when one process ends (srun without
  --kill-on-bad-exit), and see rank 0 itself vanish.

Messages are JSON lines. The ranks' connections to rank 0 are file
descriptors of rank 0: where its limit cannot hold them all, only reports
travel (a connection each, as before) and lost ranks are not seen.
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import struct
import time
from dataclasses import dataclass, field


def local_addresses() -> list[str]:
    """IPv4 addresses of this host's interfaces, non-loopback first (Linux ioctl)."""
    out: list[str] = []
    try:
        import fcntl

        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            for _, name in socket.if_nameindex():
                try:
                    # SIOCGIFADDR
                    raw = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name[:15].encode()))
                    out.append(socket.inet_ntoa(raw[20:24]))
                except OSError:
                    pass
        finally:
            s.close()
    except (ImportError, OSError):
        pass
    try:
        out.append(socket.gethostbyname(socket.gethostname()))
    except OSError:
        pass
    uniq = list(dict.fromkeys(out))
    return sorted(uniq, key=lambda a: a.startswith("127.")) or ["127.0.0.1"]


def _room_for(n: int) -> bool:
    """Can this process hold n more file descriptors (raising its soft limit if need be)?"""
    try:
        import resource
    except ImportError:
        return True
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = n + 256  # what MPI and Python hold besides
    if soft == resource.RLIM_INFINITY or need <= soft:
        return True
    if hard != resource.RLIM_INFINITY and need > hard:
        return False
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    except (OSError, ValueError):
        return False
    return True


@dataclass
class Peer:
    """Rank 0's view of one accepted connection."""

    buf: bytes = b""
    rank: int | None = None  # from the hello; None: a one-shot report connection
    host: str = "?"
    pid: int | None = None
    bye: bool = False


@dataclass
class Hub:
    """Rank 0's end: the listener and every rank's connection."""

    size: int
    listener: socket.socket | None = None
    sel: selectors.BaseSelector = field(default_factory=selectors.DefaultSelector)
    peers: dict = field(default_factory=dict)  # socket -> Peer
    known: dict = field(default_factory=dict)  # rank -> Peer (hello'd)
    inbox: dict = field(default_factory=dict)  # rank -> its last report
    lost: dict = field(default_factory=dict)  # rank -> Peer, ended without "bye"
    lost_at: float | None = None  # when the first was seen (time.monotonic)

    def open(self) -> tuple[list[str], int, bool] | None:
        """(addresses, port, keep): what the other ranks need; keep: hold the connection."""
        try:
            ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            ls.bind(("0.0.0.0", 0))
            ls.listen(min(max(self.size, 8), 4096))
            ls.setblocking(False)
        except OSError:
            return None
        self.listener = ls
        self.sel.register(ls, selectors.EVENT_READ)
        return local_addresses(), ls.getsockname()[1], _room_for(self.size)

    def poll(self, timeout: float = 0) -> None:
        """Accept and read everything that has arrived, a new connection's hello and end
        included (waiting up to timeout s for something)."""
        for _ in range(64):  # bounded: a rank that streams cannot keep rank 0 here
            if self.listener is None:
                return
            events = self.sel.select(timeout)
            if not events:
                return
            timeout = 0
            for key, _ in events:
                if key.fileobj is self.listener:
                    self._accept()
                elif key.fileobj in self.peers:
                    self._read(key.fileobj)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:  # nothing more pending (BlockingIOError), or closed
                return
            conn.setblocking(False)
            self.peers[conn] = Peer()
            self.sel.register(conn, selectors.EVENT_READ)

    def _read(self, conn: socket.socket) -> None:
        peer = self.peers[conn]
        try:
            chunk = conn.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        peer.buf += chunk
        *lines, peer.buf = peer.buf.split(b"\n")
        for line in lines:
            self._message(peer, line)
        if not chunk:  # end of file: the process closed it, or ended
            self.sel.unregister(conn)
            conn.close()
            del self.peers[conn]
            if peer.rank is not None and not peer.bye:
                self.lost[peer.rank] = peer
                self.lost_at = self.lost_at or time.monotonic()

    def _message(self, peer: Peer, line: bytes) -> None:
        try:
            msg = json.loads(line.decode())
            rank = int(msg["rank"])
        except (ValueError, KeyError, TypeError):
            return
        if msg.get("hello"):
            peer.rank, peer.host, peer.pid = rank, str(msg.get("host", "?")), msg.get("pid")
            self.known[rank] = peer
        elif msg.get("bye"):
            peer.bye = True
        else:
            self.inbox[rank] = msg

    def collect(self, grace: float) -> dict[int, dict]:
        """The reports of the other ranks that arrive within grace seconds (rank -> message);
        no waiting for the lost ones."""
        end = time.monotonic() + grace
        while len(set(self.inbox) | set(self.lost)) < self.size - 1 and time.monotonic() < end:
            self.poll(min(0.1, max(0.0, end - time.monotonic())))
        return dict(self.inbox)

    def host(self, rank: int) -> str | None:
        peer = self.known.get(rank)
        return peer.host if peer is not None else None

    def close(self, word: dict | None = None) -> None:
        """Tell every rank still connected (word: "done" or "end"), then close everything."""
        data = (json.dumps(word) + "\n").encode() if word else b""
        for conn in list(self.peers):
            try:
                if data:
                    conn.setblocking(True)
                    conn.settimeout(0.5)
                    conn.sendall(data)
            except OSError:
                pass
            conn.close()
        self.peers.clear()
        if self.listener is not None:
            self.listener.close()
            self.listener = None
        self.sel.close()


class Link:
    """Another rank's end: one connection to rank 0, held for the run when rank 0 says so."""

    def __init__(self, rank: int, host: str, rank0: tuple | None):
        self.rank, self.host = rank, host
        self.rank0 = rank0
        self.conn: socket.socket | None = None
        self.buf = b""
        self.word: dict | None = None  # rank 0's "done" or "end"
        if rank0 is not None and len(rank0) > 2 and rank0[2]:
            self.conn = self._connect()
            if self.conn is not None and not self._put(
                self.conn, {"hello": 1, "host": host, "pid": os.getpid()}
            ):
                self.conn = None

    def _connect(self) -> socket.socket | None:
        addrs, port = self.rank0[0], self.rank0[1]
        for a in addrs:
            try:
                return socket.create_connection((a, port), timeout=1.0)
            except OSError:
                continue
        return None

    def _put(self, conn: socket.socket, msg: dict) -> bool:
        try:
            conn.sendall((json.dumps({"rank": self.rank, **msg}) + "\n").encode())
            return True
        except OSError:
            return False

    def send(self, msg: dict) -> None:
        """A report to rank 0: on the held connection, else on one of its own."""
        if self.conn is not None and self._put(self.conn, msg):
            return
        if self.rank0 is not None:
            conn = self._connect()
            if conn is not None:
                with conn:
                    self._put(conn, msg)

    def poll(self, timeout: float = 0) -> str | None:
        """None while rank 0 is there and silent; "done", "end" (self.word says more) or
        "gone" (its connection ended without a word: rank 0 ended)."""
        if self.word is not None:
            return self.word.get("word")
        if self.conn is None:
            return None
        with selectors.DefaultSelector() as sel:
            sel.register(self.conn, selectors.EVENT_READ)
            if not sel.select(timeout):
                return None
        try:
            chunk = self.conn.recv(65536)
        except OSError:
            chunk = b""
        self.buf += chunk
        for line in self.buf.split(b"\n")[:-1]:
            try:
                self.word = json.loads(line.decode())
            except ValueError:
                continue
        self.buf = self.buf.rsplit(b"\n", 1)[-1]
        if self.word is not None:
            return self.word.get("word")
        if not chunk:
            self.conn.close()
            self.conn = None
            self.word = {"word": "gone"}
            return "gone"
        return None

    def wait(self, seconds: float) -> str | None:
        """poll() until rank 0 says something or goes, at most seconds."""
        end = time.monotonic() + seconds
        while True:
            got = self.poll(max(0.0, min(0.5, end - time.monotonic())))
            if got is not None or time.monotonic() >= end:
                return got
            if self.conn is None:  # nothing to wait on
                time.sleep(max(0.0, end - time.monotonic()))
                return None

    def close(self, bye: bool = True) -> None:
        if self.conn is not None:
            if bye:
                self._put(self.conn, {"bye": 1})
            self.conn.close()
            self.conn = None
