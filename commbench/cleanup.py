"""Files a process created and must remove whatever happens: the cleanup primitive.

A primitive like commbench.watchdog (and beside it in the lowest layer): it
imports nothing from commbench. The IO family registers what it creates in
CLEANUP and starts one `guardian` per node; this module holds the machinery:

- CLEANUP (a Cleanup): directories commbench created (removed whole) and
  files it created in a user's directory. Removal is idempotent and needs no
  MPI, so it runs at the end, from the `finally` of a failed run, at exit, and
  on SIGINT/SIGTERM, even while the main thread is blocked inside MPI.
- guardian(): a tiny process per node, outside MPI and in its own session,
  that outlives a rank killed with SIGKILL and sweeps the files then.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable

# What the messages at a signal or an exit call the things removed.
LABEL = "IO files"


class Cleanup:
    """What this process must remove, whatever happens.

    Registered: directories commbench created (removed whole) and files it
    created in a user's directory (with ROMIO's hidden shared-pointer files
    beside them, `.<name>.shfp.*`). Removal is idempotent and needs no MPI, so
    it runs at the end, from the `finally` of a failed run, at exit, and from a
    thread woken by SIGINT/SIGTERM: Python's C-level handler writes the signal
    number to a wakeup pipe from whichever thread the signal hits, so even a
    rank blocked inside an MPI call is cleaned up before it exits.
    """

    def __init__(self, label: str = LABEL) -> None:
        self.label = label
        self.dirs: list[str] = []  # created by commbench (mkdtemp)
        self.files: set[str] = set()
        self.lock = threading.Lock()
        self.installed = False
        self.prev: dict = {}
        self.prev_fd = -1
        self.pipe: tuple[int, int] | None = None
        self.rank = 0
        self.atexit_done = False
        self.keep_alive = None  # a guardian whose pipe must stay open until exit
        self.registry: str | None = None  # the node guardian's list of files this run created

    def add_file(self, path: str) -> None:
        """A file this process created in a user's directory: removed whatever happens,
        and listed for the node's guardian (which removes only listed files)."""
        with self.lock:
            self.files.add(path)
        self._note("+", path)

    def _note(self, sign: str, path: str) -> None:
        if self.registry is None:
            return
        try:  # one short O_APPEND write per line: the ranks of a node never interleave
            fd = os.open(self.registry, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, f"{sign}{path}\n".encode())
            finally:
                os.close(fd)
        except OSError:
            pass

    def remove_file(self, path: str) -> None:
        for p in [
            path,
            *glob.glob(
                os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".shfp.*")
            ),
        ]:
            try:
                os.remove(p)
            except FileNotFoundError:
                pass
            except OSError as e:
                print(
                    f"commbench: rank {self.rank}: cannot remove {p}: {e.strerror}", file=sys.stderr
                )
        with self.lock:
            self.files.discard(path)
        self._note("-", path)

    def now(self) -> None:
        with self.lock:
            files, dirs = list(self.files), list(self.dirs)
        for f in files:
            self.remove_file(f)
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
        with self.lock:
            self.dirs = [d for d in self.dirs if os.path.exists(d)]

    def install(
        self, rank: int, at_exit: Callable[[Callable[[str], None]], None] | None = None
    ) -> None:
        """Remove everything at exit and on SIGINT/SIGTERM (main thread only, once).

        at_exit: when the ending signals are blocked and reach a watchdog
        thread instead of Python handlers, the function that registers a
        callback the watchdog runs before it ends the process
        (commbench.watchdog.at_exit); the cleanup then runs from there.
        """
        self.rank = rank
        if not self.atexit_done:
            atexit.register(self.now)
            self.atexit_done = True
        if self.installed or threading.current_thread() is not threading.main_thread():
            return
        if at_exit is not None:
            # The run's watchdog thread receives SIGINT/SIGTERM; it runs this
            # cleanup before it ends the process.
            at_exit(self._on_exit)
            self.installed = True
            return
        r, w = os.pipe()
        os.set_blocking(w, False)
        self.pipe = (r, w)
        self.prev_fd = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        for s in (signal.SIGINT, signal.SIGTERM):
            # The real work happens in the watcher thread; the main thread may be
            # stuck in MPI and run this only much later, if ever.
            self.prev[s] = signal.signal(s, lambda *_: None)
        threading.Thread(
            target=self._watch, args=(r,), name="commbench-io-cleanup", daemon=True
        ).start()
        self.installed = True

    def _watch(self, r: int) -> None:
        while True:
            try:
                b = os.read(r, 1)
            except OSError:
                return
            if not b or b[0] == 0:  # uninstalled
                return
            if b[0] in (signal.SIGINT, signal.SIGTERM):
                try:
                    self._on_exit(signal.Signals(b[0]).name)
                finally:
                    os._exit(128 + b[0])

    def _on_exit(self, why: str) -> None:
        self.now()
        os.write(2, f"commbench: rank {self.rank}: {why}: {self.label} removed, exiting\n".encode())

    def uninstall(self) -> None:
        if not self.installed:
            return
        if self.pipe is None:  # the watchdog's exit hook is in place of handlers
            self.installed = False
            return
        signal.set_wakeup_fd(self.prev_fd)
        for s, h in self.prev.items():
            signal.signal(s, h)
        _, w = self.pipe  # type: ignore[misc]
        os.set_blocking(w, True)
        os.write(w, b"\0")
        os.close(w)
        self.installed = False


CLEANUP = Cleanup()


# The guardian: a tiny process per node, outside MPI and in its own session,
# that outlives a rank killed with SIGKILL (mpiexec killed, a dead pipe, a
# scheduler's hard limit). It waits for the end of its stdin: "done" after a
# clean run, else it removes the tool's directory, or in a user's directory the
# files the run's processes listed in the registry as created and not yet
# removed (with ROMIO's shared-pointer files beside them): never a file the run
# did not create, whatever its name.
GUARD = """
import glob, os, shutil, sys, time
d, tool, registry = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
data = sys.stdin.buffer.read()
if not data.endswith(b"done"):
    for sweep in range(3):  # again a little later: peers may still be closing files
        if tool:
            shutil.rmtree(d, ignore_errors=True)
        else:
            ours = {}
            try:
                with open(registry, encoding="utf-8", errors="replace") as f:
                    for line in f.read().splitlines():
                        ours[line[1:]] = line[:1] == "+"
            except OSError:
                pass
            for path, present in ours.items():
                if present:
                    base = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".shfp.")
                    for p in [path, *glob.glob(glob.escape(base) + "*")]:
                        try:
                            os.remove(p)
                        except OSError:
                            pass
        time.sleep(1.0)
if registry:
    try:
        os.remove(registry)
    except OSError:
        pass
"""  # noqa: E501


def new_registry() -> str:
    """An empty registry file (node-local temporary directory) for a guardian."""
    import tempfile

    fd, path = tempfile.mkstemp(prefix="commbench-guard-", suffix=".list")
    os.close(fd)
    return path


def guardian(d: str, tool: bool, registry: str = "", what: str = "IO cleanup guardian"):
    """Start the guardian of directory d (tool: commbench made it, remove it whole; else
    the files listed in `registry` by Cleanup.add_file); None if it cannot start.

    Write b"done" to its stdin and close it after a clean run; otherwise it
    sweeps once its stdin closes (this process is gone). It removes the
    registry when it ends.
    """
    try:
        return _detached([sys.executable, "-c", GUARD, d, "1" if tool else "0", registry])
    except OSError as e:  # cleanup then rests on the in-process handlers alone
        print(f"commbench: cannot start the {what} ({e})", file=sys.stderr)
        return None


# ---------------------------------------------------------------- the MPI library's shared memory
#
# MPICH (and Open MPI) keep the node's shared-memory segments as files in
# /dev/shm until MPI_Finalize; a job that ends any other way leaves them
# there, 2-4 MiB each. The run's own segments are exactly the /dev/shm files
# mapped into its processes, so every exit path that can removes those:
# signals and the watchdog (watchdog exit hooks), a failure before MPI_Abort
# (commbench.mpi_job), and, for a rank killed with SIGKILL, a shell on each node
# that removes the segments mapped at start-up once its stdin closes.

SHM_DIR = "/dev/shm/"
SHM_PREFIXES = ("mpich_shm_", "vader_segment", "sm_segment")


def job_segments(root: int) -> list[str]:
    """The MPI segments mapped by any descendant of process root (mpiexec: Hydra puts
    each rank in a session of its own, so the process tree is what ties them), read
    before the launcher ends the job (Linux)."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                    parent[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    tree, grew = {root}, True
    while grew:
        new = {p for p, pp in parent.items() if pp in tree and p not in tree}
        tree |= new
        grew = bool(new)
    out: list[str] = []
    for pid in sorted(tree - {root}):
        out += [p for p in mpi_segments(f"/proc/{pid}/maps") if p not in out]
    return out


def mpi_segments(maps: str = "/proc/self/maps") -> list[str]:
    """The MPI library's shared-memory files this process (or maps' process) has mapped (Linux)."""
    out: list[str] = []
    try:
        with open(maps, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split(None, 5)
                path = parts[5].strip() if len(parts) == 6 else ""
                name = path[len(SHM_DIR) :]
                if (
                    path.startswith(SHM_DIR)
                    and name.startswith(SHM_PREFIXES)
                    and not path.endswith("(deleted)")
                    and path not in out
                ):
                    out.append(path)
    except OSError:
        pass
    return out


def remove_segments(why: str = "") -> None:
    """Unlink every MPI segment this process maps: the memory stays valid for the
    processes that map it, the files are gone when the last one exits."""
    unlink_all(mpi_segments())


def unlink_all(paths: list[str]) -> None:
    """Unlink each path; one already gone (or not ours to remove) is skipped."""
    for p in paths:
        try:
            os.unlink(p)
        except OSError:
            pass


def segment_guardian(paths: list[str]):
    """A shell that removes paths unless it reads 'done' (write it after a clean end);
    None where it cannot start."""
    if not paths:
        return None
    try:
        return _detached(
            ["/bin/sh", "-c", 'read -r x; [ "$x" = done ] || rm -f -- "$@"', "guard", *paths]
        )
    except OSError:
        return None


def _detached(cmd: list[str]):
    """A guardian process: in its own session, its stdin a pipe from this process, its
    output discarded; OSError when it cannot start."""
    import subprocess

    return subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
