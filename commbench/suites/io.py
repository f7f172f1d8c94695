"""IMB-IO: MPI-IO write and read, blocking and nonblocking, and Open_Close (spec §10).

Benchmarks are generated from the name grammar {S|P|C}_[I]{Write|Read}_{Indv|
Expl|Shared|Priv} (§10.1). One descriptor each; the kernels below perform the
elementary actions of §10.2 with the timing of §10.3 on a file prepared once
per (benchmark, NP) (§6.6) and opened with its view for every size.

Files live in the directory of --iodir (default: a private temporary
directory per node). commbench never overwrites a file it did not create
(refused before the run, and every file is created with MPI_MODE_EXCL), and it
removes everything it created: after each (benchmark, NP), at the end, after
a failure and after SIGINT/SIGTERM (see `_Cleanup`).
"""

from __future__ import annotations

import atexit
import glob
import math
import os
import shutil
import signal
import sys
import tempfile
import threading
from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from commbench import buffers, cpu, policy
from commbench.config import ConfigError, Option
from commbench.suites.base import Benchmark, Family, Kind
from commbench.suites.verify import worst

F = "io"
FILENAME = "IMB_out"  # spec §16
Wtime = MPI.Wtime
AMODE = MPI.MODE_CREATE | MPI.MODE_RDWR
FILL_CHUNK = 2**20
PATTERN_BASE = 10_000_000  # BUF_VALUE of the IO assignment type (spec §6.2)


class IOFileError(RuntimeError):
    """A benchmark file could not be prepared (it exists, or the file system refused)."""


# ---------------------------------------------------------------- the name grammar

@dataclass(frozen=True)
class Spec:
    cls: str  # "S" single (NP = 1), "P" parallel, "C" collective
    write: bool
    pointer: str  # "Indv", "Expl", "Shared", "Priv"
    nonblocking: bool

    @property
    def name(self) -> str:
        return f"{self.cls}_{'I' if self.nonblocking else ''}{'Write' if self.write else 'Read'}_{self.pointer}"

    @property
    def per_process(self) -> bool:
        """Own file on MPI_COMM_SELF (S_ and *_Priv, spec §6.6)."""
        return self.cls == "S" or self.pointer == "Priv"

    @property
    def collective(self) -> bool:
        return self.cls == "C"


# Default order of spec §10.1: for Write then Read, these pairs, blocking then I.
_PAIRS = (("S", "Indv"), ("S", "Expl"), ("P", "Indv"), ("P", "Shared"), ("P", "Priv"),
          ("P", "Expl"), ("C", "Indv"), ("C", "Shared"), ("C", "Expl"))
SPECS: dict[str, Spec] = {}
for _write in (True, False):
    for _cls, _ptr in _PAIRS:
        for _nb in (False, True):
            _s = Spec(_cls, _write, _ptr, _nb)
            SPECS[_s.name] = _s


# ---------------------------------------------------------------- pure arithmetic

def file_pattern(start: int, nbytes: int) -> np.ndarray:
    """Bytes [start, start+nbytes) of a Read benchmark's file: int32 BUF_VALUE(0, i) at element i."""
    if nbytes <= 0:
        return np.empty(0, np.uint8)
    e0, e1 = start // 4, (start + nbytes + 3) // 4
    vals = (PATTERN_BASE + np.arange(e0, e1, dtype=np.int64) % PATTERN_BASE).astype(np.int32)
    off = start - 4 * e0
    return vals.view(np.uint8)[off : off + nbytes]


def share(spec: Spec | None, x: int, np_: int, k: int) -> tuple[int, int]:
    """(pos1, len) of file rank k's part of X (spec §6.7); Priv: rank 0's share for everyone."""
    if spec is None:
        return 0, 0
    if spec.cls == "S":
        return 0, x
    return policy.block_split(x, np_, 0 if spec.pointer == "Priv" else k)


def io_sizes(cfg) -> list[int]:
    if cfg.msglen is not None:
        return policy.user_size_list(cfg.msglen, 1, cfg.maxlog)[0]
    return policy.size_list(1, cfg.minlog, cfg.maxlog)


def upper_repetitions(cfg, x: int, np_: int) -> int:
    """The most transfers one kernel call can make at X (so files never outgrow their estimate)."""
    cap = max(cfg.msgspersample, cfg.msgs_nonaggr)
    if cfg.iter_policy == "off":
        return cap
    if cfg.iter_policy == "multiple_np":
        return policy.multiple_np_repetitions(x, np_, cap, cfg.maxlog)
    return policy.base_repetitions(x, cap, cfg.overall_vol)


def file_bytes(cfg, spec: Spec, np_: int) -> int:
    """Pre-sized length of one file (spec §6.6), at least what the largest sample touches."""
    sizes = io_sizes(cfg)
    size = max(sizes) or 2**cfg.maxlog
    total = max(size, cfg.overall_vol)
    if cfg.overall_vol // size > cfg.msgspersample:
        total = size * cfg.msgspersample
    if spec.pointer == "Priv":  # the reference's split of the common total (with slack)
        total = -(-total // np_) + (4 * cfg.msgspersample if size % np_ else 0)
    need = max(upper_repetitions(cfg, x, np_) * (share(spec, x, np_, 0)[1] if spec.per_process else x)
               for x in sizes)
    return max(total, need)


def disk_need(cfg, world_size: int) -> tuple[int, str]:
    """Bytes the run needs at most at one time (one benchmark's files exist at a time), and why."""
    need, why = 0, ""
    for name in cfg.benchmarks:
        spec = SPECS.get(name)
        if spec is None:
            continue
        nps = [1] if spec.cls == "S" else policy.np_sequence(world_size, cfg.npmin)
        for np_ in nps:
            groups = world_size // np_ if cfg.multi is not None else 1
            files = groups * (np_ if spec.pointer == "Priv" else 1)
            b = files * file_bytes(cfg, spec, np_)
            if b > need:
                need, why = b, f"{files} file(s) of {_human(b // files)} for {name} at NP={np_}"
    return need, why


def _human(b: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if b < 1024 or unit == "TiB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.1f} {unit}"
        b /= 1024
    return f"{b} B"


# ---------------------------------------------------------------- options and pre-flight

def _iodir(s: str) -> str:
    if not s:
        raise ConfigError("--iodir needs a directory (accepted: --iodir DIR, an existing writable directory)")
    return os.path.abspath(s)


def _cpu_secs(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        raise ConfigError(f"--io-cpu-secs needs a number of seconds, got {s!r}") from None
    if not math.isfinite(v) or v < 0:
        raise ConfigError(f"--io-cpu-secs must be >= 0 seconds, got {s!r}")
    return v


def _info(s: str) -> tuple[tuple[str, str], ...]:
    form = "accepted: --io-info key=value[,key=value…], e.g. --io-info romio_cb_write=enable,striping_factor=4"
    pairs = []
    for item in s.split(","):
        key, eq, value = item.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise ConfigError(f"--io-info {s!r}: {item!r} is not key=value; {form}")
        pairs.append((key.strip(), value.strip()))
    return tuple(pairs)


OPTIONS = (
    Option(("--iodir",), "iodir", "<dir>",
           "IO: directory for the files (default: a private temporary directory); never overwrites, always cleaned",
           _iodir),
    Option(("--io-cpu-secs",), "io_cpu_secs", "<secs>",
           "IO: CPU work per nonblocking transfer, TARGET_CPU_SECS (default 0.1; 0.001 with -check)", _cpu_secs),
    Option(("--io-info",), "io_info", "<k=v[,k=v]>",
           "IO: MPI_Info hints for every file open (user_set_info), e.g. romio_cb_write=enable", _info),
)

OURS = ("IMB_out", ".IMB_out")  # our files and ROMIO's shared-pointer files beside them


def _ours(name: str) -> bool:
    return name.startswith(OURS)


def check(cfg, world_size: int) -> None:
    """Before anything runs: the directory exists, is writable, holds no IMB_out* and has the space."""
    given = cfg.params.get("iodir")
    if given is not None:
        d, what = given, f"--iodir {given!r}"
        if not os.path.exists(d):
            raise ConfigError(f"{what}: no such directory (accepted: --iodir DIR, an existing writable directory)")
        if not os.path.isdir(d):
            raise ConfigError(f"{what}: not a directory (accepted: --iodir DIR, an existing writable directory)")
        try:
            found = sorted(n for n in os.listdir(d) if _ours(n))
        except OSError as e:
            raise ConfigError(f"{what}: cannot list the directory ({e.strerror})") from None
        if found:
            shown = ", ".join(found[:5]) + (" …" if len(found) > 5 else "")
            raise ConfigError(f"{what} already holds {shown}: commbench never overwrites files it did not "
                              "create; remove them or choose another directory")
    else:
        try:
            d = tempfile.gettempdir()
        except OSError as e:
            raise ConfigError(f"no usable temporary directory for the IO files ({e}); pass --iodir DIR") from None
        what = f"temporary directory {d!r} (choose another with --iodir DIR or TMPDIR)"
    try:  # a real probe: os.access says yes to root even on read-only mounts
        fd, probe = tempfile.mkstemp(dir=d, prefix=".commbench-probe-")
        os.close(fd)
        os.remove(probe)
    except OSError as e:
        raise ConfigError(f"{what}: not writable ({e.strerror}); the IO benchmarks need to create files there") from None
    need, why = disk_need(cfg, world_size)
    if need:
        st = os.statvfs(d)
        free = st.f_bavail * st.f_frsize
        need += 2**20  # small files, shared-pointer files, rounding
        if free < need:
            raise ConfigError(f"{what}: {_human(free)} free, the run needs about {_human(need)} ({why}); "
                              "lower -msglog or the -iter counts, or choose another directory")


def _nonblocking(names) -> bool:
    return any(SPECS[n].nonblocking for n in names if n in SPECS)


def target_cpu_secs(cfg) -> float:
    v = cfg.params.get("io_cpu_secs")
    if v is not None:
        return v
    return 0.001 if cfg.check else cfg.profile.target_cpu_secs  # spec §15: CHECK shrinks it


def preamble(cfg) -> list[str]:
    """MPI_Info keys and the CPU_Exploit lines of spec §14.1 (world rank 0, before the run)."""
    lines = [f'# {k} = "{v}"' for k, v in cfg.params.get("io_info", ())]
    if not _nonblocking(cfg.benchmarks):
        return lines
    k = cpu.shared()  # calibrated here on rank 0 (undisturbed), on the others in start()
    lines += ["", "# For nonblocking benchmarks:", "", "# Function CPU_Exploit obtains an undisturbed",
              f"# performance of {k.mflops:7.2f} MFlops"]
    t = target_cpu_secs(cfg)
    if t != cfg.profile.target_cpu_secs:
        why = "--io-cpu-secs" if cfg.params.get("io_cpu_secs") is not None else "check mode"
        default = cfg.profile.target_cpu_secs
        lines += ["#", f"# !! Attention: TARGET_CPU_SECS = {t:g} s (default {default:g} s), set by {why}"]
    return lines


# ---------------------------------------------------------------- cleanup, always

class _Cleanup:
    """What this process must remove, whatever happens.

    Registered: directories commbench created (removed whole) and files it
    created in a user's directory. Removal is idempotent and needs no MPI, so
    it runs at the end, from the `finally` of a failed run, at exit, and from a
    thread woken by SIGINT/SIGTERM: Python's C-level handler writes the signal
    number to a wakeup pipe from whichever thread the signal hits, so even a
    rank blocked inside an MPI call is cleaned up before it exits.
    """

    def __init__(self) -> None:
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

    def remove_file(self, path: str) -> None:
        for p in [path, *glob.glob(os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".shfp.*"))]:
            try:
                os.remove(p)
            except FileNotFoundError:
                pass
            except OSError as e:
                print(f"commbench: rank {self.rank}: cannot remove {p}: {e.strerror}", file=sys.stderr)
        with self.lock:
            self.files.discard(path)

    def now(self) -> None:
        with self.lock:
            files, dirs = list(self.files), list(self.dirs)
        for f in files:
            self.remove_file(f)
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
        with self.lock:
            self.dirs = [d for d in self.dirs if os.path.exists(d)]

    def install(self, rank: int) -> None:
        self.rank = rank
        if not self.atexit_done:
            atexit.register(self.now)
            self.atexit_done = True
        if self.installed or threading.current_thread() is not threading.main_thread():
            return
        r, w = os.pipe()
        os.set_blocking(w, False)
        self.pipe = (r, w)
        self.prev_fd = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        for s in (signal.SIGINT, signal.SIGTERM):
            # The real work happens in the watcher thread; the main thread may be
            # stuck in MPI and run this only much later, if ever.
            self.prev[s] = signal.signal(s, lambda *_: None)
        threading.Thread(target=self._watch, args=(r,), name="commbench-io-cleanup", daemon=True).start()
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
                self.now()
                name = signal.Signals(b[0]).name
                try:
                    os.write(2, f"commbench: rank {self.rank}: {name}: IO files removed, exiting\n".encode())
                finally:
                    os._exit(128 + b[0])

    def uninstall(self) -> None:
        if not self.installed:
            return
        signal.set_wakeup_fd(self.prev_fd)
        for s, h in self.prev.items():
            signal.signal(s, h)
        _, w = self.pipe  # type: ignore[misc]
        os.set_blocking(w, True)
        os.write(w, b"\0")
        os.close(w)
        self.installed = False


CLEANUP = _Cleanup()


class _Run:
    """Per-process facts of the run, set by start()."""

    node_dir: str = ""
    guardian = None  # the node's cleanup guardian process (node rank 0 only)
    t_cpu: float = 0.0
    target: float = 0.0
    info = MPI.INFO_NULL


RUN = _Run()


# The guardian: a tiny process per node, outside MPI and in its own session,
# that outlives a rank killed with SIGKILL (mpiexec killed, a dead pipe, a
# scheduler's hard limit). It waits for the end of its stdin: "done" after a
# clean run, else it removes the tool's directory, or in a user's directory the
# files named like ours (none existed before the run: check() refused that).
NAMES = r"\.?IMB_out(_g[0-9]+)?(_[0-9]+)?(\.shfp\..*)?"
_GUARD = """
import os, re, shutil, sys, time
d, tool, names = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
data = sys.stdin.buffer.read()
if data.endswith(b"done"):
    sys.exit(0)
for sweep in range(3):  # again a little later: peers may still be closing files
    if tool:
        shutil.rmtree(d, ignore_errors=True)
    elif os.path.isdir(d):
        for n in os.listdir(d):
            if re.fullmatch(names, n):
                try:
                    os.remove(os.path.join(d, n))
                except OSError:
                    pass
    time.sleep(1.0)
"""


def _guardian(d: str, tool: bool):
    import subprocess

    try:
        return subprocess.Popen([sys.executable, "-c", _GUARD, d, "1" if tool else "0", NAMES],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True, close_fds=True)
    except OSError as e:  # cleanup then rests on the in-process handlers alone
        print(f"commbench: cannot start the IO cleanup guardian ({e})", file=sys.stderr)
        return None


def start(h) -> None:
    """Every rank: cleanup handlers, the files' directory, CPU kernel calibration (spec §2)."""
    cfg, world = h.cfg, h.world
    CLEANUP.install(h.world_rank)
    RUN.target = target_cpu_secs(cfg)
    hints = cfg.params.get("io_info", ())
    if hints:
        RUN.info = MPI.Info.Create()
        for key, value in hints:
            RUN.info.Set(key, value)
    if _nonblocking(cfg.benchmarks):
        k = cpu.shared()
        k.exploit(RUN.target, init=True)
        # one t_CPU for the whole run, identical in every row: world rank 0's
        RUN.t_cpu = world.bcast(k.t_cpu if RUN.target > 0 else 0.0, root=0)
    given = cfg.params.get("iodir")
    # One directory per node unless given (node-local /tmp); common files go to
    # the directory of their file communicator's rank 0 (checked in np_setup).
    node = world.Split_type(MPI.COMM_TYPE_SHARED, key=h.world_rank)
    made = err = None
    if node.Get_rank() == 0:
        if given is None:
            try:
                made = tempfile.mkdtemp(prefix="commbench-io-")
            except OSError as e:
                err = f"cannot create a temporary directory for the IO files ({e}); pass --iodir DIR"
        if err is None:
            RUN.guardian = _guardian(given or made, given is None)
    made, err = node.bcast((made, err), root=0)
    node.Free()
    if made:
        with CLEANUP.lock:
            CLEANUP.dirs.append(made)
    RUN.node_dir = given or made or ""
    errs = [e for e in world.allgather(err) if e]
    if errs:
        raise IOFileError(errs[0])


def finish(h, completed: bool) -> None:
    """Remove what is left; after a failure without communicating (a peer may be dead)."""
    try:
        if completed:
            h.world.Barrier()  # nobody uses the directory any more
        CLEANUP.now()
    finally:
        CLEANUP.uninstall()
        if RUN.info != MPI.INFO_NULL:
            RUN.info.Free()
            RUN.info = MPI.INFO_NULL
        g, RUN.guardian = RUN.guardian, None
        if g is not None:
            # After a failure the guardian sweeps once this process is gone
            # (a peer may still be writing); after a clean run it just ends.
            if completed:
                g.stdin.write(b"done")
                g.stdin.close()
                g.wait()
            else:
                CLEANUP.keep_alive = g


# ---------------------------------------------------------------- per (benchmark, NP): the file

def _create(path: str, nbytes: int, fill: bool) -> str | None:
    """Create path exclusively, pre-size it and fill it for reading; an error message or None."""
    try:
        fh = MPI.File.Open(MPI.COMM_SELF, path, AMODE | MPI.MODE_EXCL, RUN.info)
    except MPI.Exception as e:
        if e.Get_error_class() == MPI.ERR_FILE_EXISTS:
            return (f"{path} exists and was not created by this commbench run; it is left untouched "
                    "(remove it or choose another --iodir)")
        return f"cannot create {path}: {e.Get_error_string().splitlines()[-1]}"
    with CLEANUP.lock:
        CLEANUP.files.add(path)
    try:
        fh.Set_size(nbytes)
        if fill:
            for start in range(0, nbytes, FILL_CHUNK):
                fh.Write_at(start, [file_pattern(start, min(FILL_CHUNK, nbytes - start)), MPI.BYTE])
    except MPI.Exception as e:
        return f"cannot prepare {path} ({_human(nbytes)}): {e.Get_error_string().splitlines()[-1]}"
    finally:
        fh.Close()
    return None


def _agree(comm: MPI.Comm, err: str | None) -> None:
    errs = [e for e in comm.allgather(err) if e]
    if errs:
        raise IOFileError(errs[0])


def np_setup(h, bench: Benchmark, layout) -> None:
    """Once per (benchmark, NP) on the members: name, create and prepare the file(s) (spec §6.6)."""
    spec: Spec | None = bench.extra.get("spec")
    wr = h.world_rank
    per_process = spec is not None and spec.per_process
    fcomm = MPI.COMM_SELF if per_process else layout.comm
    tag = f"_g{layout.group}" if h.cfg.multi is not None else ""
    name = FILENAME + tag + (f"_{wr}" if per_process else "")
    d = RUN.node_dir if per_process else fcomm.bcast(RUN.node_dir, root=0)
    err = None
    if not os.path.isdir(d):
        err = (f"rank {wr} cannot see the IO directory {d} of its file's first process (node-local?); "
               "pass --iodir DIR on a file system every process shares")
    _agree(layout.comm, err)
    path = os.path.join(d, name)
    nbytes = file_bytes(h.cfg, spec, layout.np) if spec is not None else 0
    if fcomm.Get_rank() == 0:
        err = _create(path, nbytes, spec is not None and not spec.write)
    if not per_process:
        err = fcomm.bcast(err, root=0)
        if err is None:
            with CLEANUP.lock:
                CLEANUP.files.add(path)
    _agree(layout.comm, err)
    layout.state.update(spec=spec, fcomm=fcomm, path=path, file_bytes=nbytes)
    if os.environ.get("COMMBENCH_FAULT_IO_FAIL") == str(wr):  # tests: a failure mid-run
        raise IOFileError(f"injected failure on rank {wr} (COMMBENCH_FAULT_IO_FAIL)")


def np_teardown(h, bench: Benchmark, layout) -> None:
    st = layout.state
    layout.comm.Barrier()  # every handle is closed
    if st["fcomm"].Get_rank() == 0:
        CLEANUP.remove_file(st["path"])
    else:
        with CLEANUP.lock:
            CLEANUP.files.discard(st["path"])
    layout.comm.Barrier()


# ---------------------------------------------------------------- per X: open with the view

def _open(ctx) -> None:
    st, s = ctx.np_state, ctx.state
    fh = MPI.File.Open(st["fcomm"], st["path"], AMODE, RUN.info)
    fh.Set_view(0, MPI.BYTE, s["ftype"], "native", RUN.info)
    s["fh"] = fh


def setup(ctx) -> None:
    st, s = ctx.np_state, ctx.state
    spec: Spec = st["spec"]
    fcomm = st["fcomm"]
    frank, fsize = fcomm.Get_rank(), fcomm.Get_size()
    x = ctx.x
    pos1, ln = share(spec, x, ctx.size if spec.pointer == "Priv" else fsize, frank)
    span = ln if spec.pointer == "Priv" else x  # file bytes between consecutive transfers
    ftype, own_type = MPI.BYTE, None
    if spec.pointer == "Indv" and spec.cls != "S" and ln > 0:
        # tiled view: extent X, my len bytes at pos1 -> transfer k lands at k·X + pos1
        base = MPI.Datatype.Create_struct([ln], [pos1], [MPI.BYTE])
        own_type = base.Create_resized(0, x).Commit()
        base.Free()
        ftype = own_type
    s.update(pos1=pos1, len=ln, span=span, ftype=ftype, own_type=own_type, dev=None)
    if spec.write:
        s["bufs"] = [[ctx.sbuf[:ln], MPI.BYTE]]
    else:
        stride = ctx.bufs.recv_stride
        s["bufs"] = [[ctx.rbuf[k * stride : k * stride + ln], MPI.BYTE] for k in range(ctx.slots)]
    _open(ctx)


def teardown(ctx) -> None:
    s = ctx.state
    fh = s.pop("fh", None)
    if fh is not None:
        fh.Close()
    if s.get("own_type") is not None:
        s["own_type"].Free()


# ---------------------------------------------------------------- kernels

def _calls(spec: Spec, fh: MPI.File) -> tuple:
    """(call, takes an offset) of the blocking elementary action (spec §10.2)."""
    c, w = spec.collective, spec.write
    if spec.pointer == "Expl":
        return ((fh.Write_at_all if c else fh.Write_at) if w else (fh.Read_at_all if c else fh.Read_at)), True
    if spec.pointer == "Shared":
        return ((fh.Write_ordered if c else fh.Write_shared) if w else (fh.Read_ordered if c else fh.Read_shared)), False
    return ((fh.Write_all if c else fh.Write) if w else (fh.Read_all if c else fh.Read)), False


def _reset_pointers(spec: Spec, fh: MPI.File) -> None:
    """Every kernel call starts at file offset 0 (spec §5.3: after preliminary runs)."""
    if spec.pointer == "Shared":
        fh.Seek_shared(0, MPI.SEEK_SET)  # collective over the file communicator
    elif spec.pointer != "Expl":
        fh.Seek(0, MPI.SEEK_SET)


def _blocking(ctx, n: int, aggregate: bool) -> float:
    """n blocking transfers; writes end with the sync-barrier-sync triplet (spec §10.3)."""
    spec: Spec = ctx.np_state["spec"]
    s = ctx.state
    fh: MPI.File = s["fh"]
    _reset_pointers(spec, fh)
    call, at = _calls(spec, fh)
    bufs = s["bufs"]
    items = [bufs[k % len(bufs)] for k in range(n)]
    offs = [s["pos1"] + k * s["span"] for k in range(n)]
    check = ctx.cfg.check and not spec.write
    sync, barrier = fh.Sync, ctx.np_state["fcomm"].Barrier
    if check:
        t0 = Wtime()
        for k in range(n):
            (call(offs[k], items[k]) if at else call(items[k]))
            _verify_read(ctx, k, items[k][0])
        return (Wtime() - t0) / n
    if not spec.write or aggregate:
        t0 = Wtime()
        if at:
            for off, b in zip(offs, items):
                call(off, b)
        else:
            for b in items:
                call(b)
        if spec.write:
            sync()
            barrier()
            sync()
        return (Wtime() - t0) / n
    t0 = Wtime()  # non-aggregate write: every transfer completed singly
    for k in range(n):
        (call(offs[k], items[k]) if at else call(items[k]))
        sync()
        barrier()
        sync()
    return (Wtime() - t0) / n


def blocking_kernel(ctx, n: int) -> float:
    return _blocking(ctx, n, ctx.mode != "NON-AGGREGATE")


def _istarts(spec: Spec, fh: MPI.File) -> tuple:
    """(start, end, takes an offset) of the nonblocking action: i-call or split collective."""
    w = spec.write
    if spec.collective:
        if spec.pointer == "Expl":
            return (fh.Write_at_all_begin, fh.Write_at_all_end, True) if w else (fh.Read_at_all_begin, fh.Read_at_all_end, True)
        if spec.pointer == "Shared":
            return (fh.Write_ordered_begin, fh.Write_ordered_end, False) if w else (fh.Read_ordered_begin, fh.Read_ordered_end, False)
        return (fh.Write_all_begin, fh.Write_all_end, False) if w else (fh.Read_all_begin, fh.Read_all_end, False)
    if spec.pointer == "Expl":
        return (fh.Iwrite_at if w else fh.Iread_at), None, True
    if spec.pointer == "Shared":
        return (fh.Iwrite_shared if w else fh.Iread_shared), None, False
    return (fh.Iwrite if w else fh.Iread), None, False


def nonblocking_kernel(ctx, n: int) -> tuple[float, float, float]:
    """t_pure from the blocking pattern, then the overlapped run on a reopened file (spec §10.3)."""
    spec: Spec = ctx.np_state["spec"]
    s = ctx.state
    t_pure = _blocking(ctx, n, aggregate=True)
    s["fh"].Close()
    _open(ctx)  # reopening resets every file pointer
    fh: MPI.File = s["fh"]
    begin, end, at = _istarts(spec, fh)
    bufs = s["bufs"]
    items = [bufs[k % len(bufs)] for k in range(n)]  # I-reads: one slot per request
    offs = [s["pos1"] + k * s["span"] for k in range(n)]
    exploit, target = cpu.shared().exploit, RUN.target
    barrier = ctx.comm.Barrier
    fbarrier, sync = ctx.np_state["fcomm"].Barrier, fh.Sync
    reqs: list = [None] * n
    for _ in range(policy.N_BARR):
        barrier()
    t0 = Wtime()
    if end is not None:  # split collective: n × {begin; compute; end}
        for k in range(n):
            (begin(offs[k], items[k]) if at else begin(items[k]))
            exploit(target, False)
            end(items[k])
    else:  # n requests in flight, n × compute, wait for all
        for k in range(n):
            reqs[k] = begin(offs[k], items[k]) if at else begin(items[k])
        for _ in range(n):
            exploit(target, False)
        MPI.Request.Waitall(reqs)
    if spec.write:
        sync()
        fbarrier()
        sync()
    t_ovrl = (Wtime() - t0) / n
    if ctx.cfg.check and not spec.write and n <= len(bufs):
        # (more requests than slots happens only with -iter_policy off beyond
        # OVERALL_VOL: requests then share a slot and its final data is a race)
        for k in range(n):
            _verify_read(ctx, k, bufs[k][0])
    return t_ovrl, t_pure, RUN.t_cpu


def open_close(ctx, n: int) -> float:
    """n × {open on MY_COMM; write 1 byte; close} (spec §10.3, A20)."""
    open_, comm, path, info = MPI.File.Open, ctx.comm, ctx.np_state["path"], RUN.info
    one = [np.zeros(1, np.uint8), MPI.BYTE]
    t0 = Wtime()
    for _ in range(n):
        fh = open_(comm, path, AMODE, info)
        fh.Write(one)
        fh.Close()
    return (Wtime() - t0) / n


# ---------------------------------------------------------------- check mode (spec §15)

def _find_in_file(got: np.ndarray, limit: int) -> bool:
    """Is got a run of the read file's bytes starting somewhere in [0, limit)? (shared pointer)"""
    ln = got.nbytes
    if ln >= 8:
        for a in range(4):  # the int at got[a:a+4] is file element (p + a) / 4
            e = int(got[a : a + 4].view(np.int32)[0]) - PATTERN_BASE
            if not 0 <= e < PATTERN_BASE:
                continue
            for wrap in range(limit // (4 * PATTERN_BASE) + 1):
                p = 4 * (e + wrap * PATTERN_BASE) - a
                if 0 <= p < limit and np.array_equal(file_pattern(p, ln), got):
                    return True
        return False
    whole = file_pattern(0, limit + ln)
    windows = np.lib.stride_tricks.sliding_window_view(whole, ln)[:limit]
    return bool(np.any(np.all(windows == got, axis=1)))


def _verify_read(ctx, k: int, got: np.ndarray) -> None:
    """Transfer k's data against the known file pattern; the worst deviation goes to ctx.state."""
    spec: Spec = ctx.np_state["spec"]
    s = ctx.state
    ln = s["len"]
    if ln == 0:
        return
    if spec.pointer == "Shared" and not spec.collective:
        dev = 0.0 if _find_in_file(got, ctx.np_state["file_bytes"] - ln + 1) else 1.0
    else:
        dev = buffers.deviation(got, file_pattern(s["pos1"] + k * s["span"], ln), "int32")
    s["dev"] = dev if s["dev"] is None else max(s["dev"], dev)


def _match_any_order(got: bytes, chunks: list[bytes], n: int) -> bool:
    """Shared-pointer writes: got is n chunks of every rank in some order (depth-first search)."""
    chunks = [c for c in chunks if c]
    failed: set = set()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 100 + n * len(chunks)))

    def dfs(p: int, counts: tuple[int, ...]) -> bool:
        if not any(counts):
            return p == len(got)
        if (p, counts) in failed:
            return False
        for i, c in enumerate(chunks):
            if counts[i] and got.startswith(c, p) and dfs(p + len(c), counts[:i] + (counts[i] - 1,) + counts[i + 1 :]):
                return True
        failed.add((p, counts))
        return False

    return dfs(0, (n,) * len(chunks))


def _verify_written(ctx, n: int) -> float | None:
    """File rank 0 reads the file back and compares every rank's chunks (spec §15)."""
    spec: Spec = ctx.np_state["spec"]
    st, s = ctx.np_state, ctx.state
    fcomm = st["fcomm"]
    if fcomm.Get_rank() != 0:
        return None
    region = n * s["span"]
    if region == 0:
        return 0.0
    got = np.empty(region, np.uint8)
    fh = MPI.File.Open(MPI.COMM_SELF, st["path"], MPI.MODE_RDONLY, RUN.info)
    try:
        fh.Read_at(0, [got, MPI.BYTE])
    finally:
        fh.Close()
    dt = ctx.bench.dtype
    if spec.per_process:
        chunks = [buffers.pattern(ctx.world_rank, s["len"], dt)]
    else:
        fsize = fcomm.Get_size()
        chunks = [buffers.pattern(w, policy.block_split(ctx.x, fsize, r)[1], dt) for r, w in enumerate(ctx.members)]
    if spec.pointer == "Shared" and not spec.collective and not spec.per_process:
        return 0.0 if _match_any_order(got.tobytes(), [c.tobytes() for c in chunks], n) else 1.0
    if np.array_equal(got, np.tile(np.concatenate(chunks), n)):
        return 0.0
    devs, p = [], 0
    for _ in range(n):
        for c in chunks:
            devs.append(buffers.deviation(got[p : p + c.nbytes], c, dt))
            p += c.nbytes
    return worst(devs)


def expected(ctx, n: int) -> float | None:
    spec: Spec = ctx.np_state["spec"]
    if spec.write:
        return _verify_written(ctx, n)
    return ctx.state["dev"] if ctx.state["dev"] is not None else 0.0


# ---------------------------------------------------------------- descriptors

def _describe(spec: Spec) -> str:
    who = {"S": "one process, own file", "P": "every process, common file",
           "C": "every process collectively, common file"}[spec.cls]
    if spec.pointer == "Priv":
        who = "every process, own private file"
    how = {"Indv": "individual pointer" + (", tiled view" if spec.cls != "S" else ""),
           "Expl": "explicit offsets", "Shared": "shared pointer" + (" (ordered)" if spec.collective else ""),
           "Priv": "individual pointer"}[spec.pointer]
    act = "write" if spec.write else "read"
    if spec.nonblocking:
        act = ("split-collective " if spec.collective else "nonblocking ") + act + " overlapped with CPU work"
    return f"{act}, {who}, {how}"


def _bench(spec: Spec) -> Benchmark:
    def bufs(x: int, np_: int, _spec=spec) -> tuple[int, int]:
        most = share(_spec, x, np_, 0)[1]  # rank 0's share is the largest (§6.7)
        return (most, 0) if _spec.write else (0, most)

    if spec.nonblocking:
        kind, kernel, comps = Kind.OVERLAP, nonblocking_kernel, ("t_ovrl", "t_pure", "t_cpu")
    else:
        kind = Kind.SINGLE_ONE if spec.cls == "S" else Kind.PARALLEL
        kernel, comps = blocking_kernel, ("t",)
    modes = ("AGGREGATE", "NON-AGGREGATE") if spec.write and not spec.nonblocking else ("AGGREGATE",)
    return Benchmark(
        spec.name, F, kind, kernel, _describe(spec), buffers=bufs, unit=1, modes=modes, components=comps,
        one_process=spec.cls == "S", slots=spec.nonblocking and not spec.write, off_cache=False,
        expected=expected, setup=setup, teardown=teardown, np_setup=np_setup, np_teardown=np_teardown,
        dtype="int32", warmup=False, extra={"spec": spec},
    )


BENCHMARKS = tuple(_bench(s) for s in SPECS.values()) + (
    Benchmark("Open_Close", F, Kind.SYNC, open_close,
              "MPI_File_open on MY_COMM, 1-byte write, MPI_File_close", buffers=lambda x, np_: (0, 0),
              nonaggr_cap=True, off_cache=False, warmup=False, dtype="int32",
              np_setup=np_setup, np_teardown=np_teardown, extra={"spec": None}),
)
assert len(BENCHMARKS) == 37

FAMILY = Family(
    name=F,
    title="IMB-IO",
    part="MPI-IO part",
    benchmarks=BENCHMARKS,
    profile=policy.IO,
    description="MPI-IO: single, parallel and collective write/read, nonblocking overlap, Open_Close",
    aliases=("IMB-IO",),
    options=OPTIONS,
    validate=check,
    preamble=preamble,
    start=start,
    finish=finish,
)
