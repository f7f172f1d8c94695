"""Where the IO files live and their life cycle: run-wide hooks and the file of each (benchmark,
NP).

preamble(cfg) prints the MPI_Info keys and CPU_Exploit lines (world rank 0);
start(session) sets the run-wide state RUN on every rank (the node's
directory, its cleanup guardian, MPI_Info hints, t_CPU); np_setup creates and
prepares the file(s) of one (benchmark, NP) exclusively (spec §6.6), filled
for reading with file_pattern, and np_teardown removes them; finish removes
what is left. Every file and directory is registered in commbench.cleanup.CLEANUP
as soon as it exists. The catalog (commbench.suites.io) names these hooks as base.Lazy.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field

import numpy as np
from mpi4py import MPI

from commbench import cpu, watchdog
from commbench.cleanup import CLEANUP, guardian, new_registry
from commbench.option_types import RunError
from commbench.suites.base import Benchmark
from commbench.suites.io import FILENAME
from commbench.suites.io.grammar import PATTERN_BASE, Spec, file_bytes, human, nonblocking
from commbench.suites.io.settings import IoSettings, target_cpu_secs


@dataclass
class Shared:
    """The file of one (benchmark, NP), kept in Layout.own by np_setup for every size."""

    spec: Spec | None  # the benchmark's name read (None: Open_Close)
    fcomm: MPI.Comm  # the processes that share the file
    path: str
    file_bytes: int  # its size when read benchmarks start


@dataclass
class IoRow:
    """One rank's view of the file for one size X, kept in Context.own (kernels.setup)."""

    pos1: int  # the file offset of this rank's first transfer
    len: int  # bytes per transfer
    span: int  # file bytes between consecutive transfers
    ftype: MPI.Datatype  # the view's filetype
    own_type: MPI.Datatype | None  # the one made for it (freed by teardown)
    bufs: list = field(default_factory=list)  # the transfers' buffers, one per slot
    fh: MPI.File | None = None  # the file, open with the view
    dev: float | None = None  # -check: the worst deviation of a read so far


def amode() -> int:
    """The access mode every benchmark file is opened with."""
    return MPI.MODE_CREATE | MPI.MODE_RDWR


FILL_CHUNK = 2**20


class IOFileError(RunError):
    """A benchmark file could not be prepared (it exists, or the file system refused)."""


class _Run:
    """Per-process facts of the run, set by start()."""

    node_dir: str = ""
    guardian = None  # the node's cleanup guardian process (node rank 0 only)
    t_cpu: float = 0.0
    target: float = 0.0
    info = None  # MPI.INFO_NULL until start() (set there: no MPI object at import)


RUN = _Run()


def file_pattern(start: int, nbytes: int) -> np.ndarray:
    """Bytes [start, start+nbytes) of a Read benchmark's file:
    int32 BUF_VALUE(0, i) at element i (spec §6.2)."""
    if nbytes <= 0:
        return np.empty(0, np.uint8)
    e0, e1 = start // 4, (start + nbytes + 3) // 4
    vals = (PATTERN_BASE + np.arange(e0, e1, dtype=np.int64) % PATTERN_BASE).astype(np.int32)
    off = start - 4 * e0
    return vals.view(np.uint8)[off : off + nbytes]


# ---------------------------------------------------------------- the whole run


def preamble(cfg) -> list[str]:
    """MPI_Info keys and the CPU_Exploit lines of spec §14.1 (world rank 0, before the run)."""
    settings = IoSettings.of(cfg.params)
    lines = [f'# {k} = "{v}"' for k, v in settings.info]
    if not nonblocking(cfg.benchmarks):
        return lines
    k = cpu.shared()  # calibrated here on rank 0 (undisturbed), on the others in start()
    lines += [
        "",
        "# For nonblocking benchmarks:",
        "",
        "# Function CPU_Exploit obtains an undisturbed",
        f"# performance of {k.mflops:7.2f} MFlops",
    ]
    t = target_cpu_secs(cfg)
    if t != cfg.profile.target_cpu_secs:
        why = "--io-cpu-secs" if settings.cpu_secs is not None else "check mode"
        default = cfg.profile.target_cpu_secs
        lines += [
            "#",
            f"# !! Attention: TARGET_CPU_SECS = {t:g} s (default {default:g} s), set by {why}",
        ]
    return lines


def start(session) -> None:
    """Every rank: cleanup handlers, the files' directory, CPU kernel calibration (spec §2)."""
    cfg, world = session.cfg, session.comm
    settings = IoSettings.of(cfg.params)
    CLEANUP.install(session.rank, watchdog.at_exit if watchdog.signals_blocked() else None)
    RUN.target = target_cpu_secs(cfg)
    hints = settings.info
    RUN.info = MPI.INFO_NULL
    if hints:
        RUN.info = MPI.Info.Create()
        for key, value in hints:
            RUN.info.Set(key, value)
    if nonblocking(cfg.benchmarks):
        k = cpu.shared()
        k.exploit(RUN.target, init=True)
        # one t_CPU for the whole run, identical in every row: world rank 0's
        RUN.t_cpu = world.bcast(k.t_cpu if RUN.target > 0 else 0.0, root=0)
    given = settings.dir
    # One directory per node unless given (node-local /tmp); common files go to
    # the directory of their file communicator's rank 0 (checked in np_setup).
    node = world.Split_type(MPI.COMM_TYPE_SHARED, key=session.rank)
    made = err = registry = None
    if node.Get_rank() == 0:
        try:
            if given is None:
                made = tempfile.mkdtemp(prefix="commbench-io-")
            else:  # a user's directory: the guardian removes only what the run lists
                registry = new_registry()
        except OSError as e:
            err = (
                "cannot create a temporary directory or file "
                f"for the IO files ({e}); pass --iodir DIR"
            )
        if err is None:
            RUN.guardian = guardian(given or made, given is None, registry or "")
    made, err, registry = node.bcast((made, err, registry), root=0)
    node.Free()
    CLEANUP.registry = registry
    if made:
        with CLEANUP.lock:
            CLEANUP.dirs.append(made)
    RUN.node_dir = given or made or ""
    errs = [e for e in world.allgather(err) if e]
    if errs:
        raise IOFileError(errs[0])


def finish(session, completed: bool) -> None:
    """Remove what is left; after a failure without communicating (a peer may be dead)."""
    try:
        if completed:
            session.comm.Barrier()  # nobody uses the directory any more
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


def _create(path: str, nbytes: int, fill: bool, corrupt: bool = False) -> str | None:
    """Create path exclusively, pre-size it and fill it for reading; an error message or None.

    corrupt: the fault injection (COMMBENCH_FAULT_CORRUPT) of the creating rank,
    whose data is then the file's: the read benchmarks' check mode must catch it."""
    try:
        fh = MPI.File.Open(MPI.COMM_SELF, path, amode() | MPI.MODE_EXCL, RUN.info)
    except MPI.Exception as e:
        if e.Get_error_class() == MPI.ERR_FILE_EXISTS:
            return (
                f"{path} exists and was not created by this commbench run; it is left untouched "
                "(remove it or choose another --iodir)"
            )
        return f"cannot create {path}: {e.Get_error_string().splitlines()[-1]}"
    CLEANUP.add_file(path)
    try:
        fh.Set_size(nbytes)
        if fill:
            for start in range(0, nbytes, FILL_CHUNK):
                chunk = file_pattern(start, min(FILL_CHUNK, nbytes - start))
                fh.Write_at(start, [chunk ^ 0x5A if corrupt else chunk, MPI.BYTE])
    except MPI.Exception as e:
        return f"cannot prepare {path} ({human(nbytes)}): {e.Get_error_string().splitlines()[-1]}"
    finally:
        fh.Close()
    return None


def _agree(comm: MPI.Comm, err: str | None) -> None:
    errs = [e for e in comm.allgather(err) if e]
    if errs:
        raise IOFileError(errs[0])


def np_setup(session, bench: Benchmark, layout) -> None:
    """Once per (benchmark, NP) on the members: name, create and prepare the file(s) (spec §6.6)."""
    spec: Spec | None = bench.variant
    wr = session.rank
    per_process = spec is not None and spec.per_process
    fcomm = MPI.COMM_SELF if per_process else layout.comm
    tag = f"_g{layout.group}" if session.cfg.multi is not None else ""
    name = FILENAME + tag + (f"_{wr}" if per_process else "")
    d = RUN.node_dir if per_process else fcomm.bcast(RUN.node_dir, root=0)
    err = None
    if not os.path.isdir(d):
        err = (
            f"rank {wr} cannot see the IO directory {d} of its file's first process (node-local?); "
            "pass --iodir DIR on a file system every process shares"
        )
    _agree(layout.comm, err)
    path = os.path.join(d, name)
    nbytes = file_bytes(session.cfg, spec, layout.np) if spec is not None else 0
    if fcomm.Get_rank() == 0:
        err = _create(path, nbytes, spec is not None and not spec.write, session.corrupt)
    if not per_process:
        err = fcomm.bcast(err, root=0)
        if err is None:
            CLEANUP.add_file(path)
    _agree(layout.comm, err)
    layout.own = Shared(spec=spec, fcomm=fcomm, path=path, file_bytes=nbytes)
    if os.environ.get("COMMBENCH_FAULT_IO_FAIL") == str(wr):  # tests: a failure mid-run
        raise IOFileError(f"injected failure on rank {wr} (COMMBENCH_FAULT_IO_FAIL)")


def np_teardown(session, bench: Benchmark, layout) -> None:
    st: Shared = layout.own
    layout.comm.Barrier()  # every handle is closed
    if st.fcomm.Get_rank() == 0:
        CLEANUP.remove_file(st.path)
    else:
        with CLEANUP.lock:
            CLEANUP.files.discard(st.path)
    layout.comm.Barrier()
