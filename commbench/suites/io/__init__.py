"""IMB-IO: MPI-IO write and read, blocking and nonblocking, and Open_Close (spec §10).

Benchmarks are generated from the name grammar {S|P|C}_[I]{Write|Read}_{Indv|
Expl|Shared|Priv} (§10.1). One descriptor each; the kernels perform the
elementary actions of §10.2 with the timing of §10.3 on a file prepared once
per (benchmark, NP) (§6.6) and opened with its view for every size.

Files live in the directory of --iodir (default: a private temporary
directory per node). commbench never overwrites a file it did not create
(refused before the run, and every file is created with MPI_MODE_EXCL), and it
removes everything it created: after each (benchmark, NP), at the end, after
a failure and after SIGINT/SIGTERM (see commbench.cleanup).

The modules of the family:
  here      the catalog: the files' names, validate, the descriptors and FAMILY
  grammar   the names (Spec, SPECS), the file contents' base, shares of X, file sizes, disk need
  settings  the io options and their IoSettings
  files     the files' directory and contents, preamble, run-wide start/finish,
            np_setup/np_teardown per (benchmark, NP)
  kernels   the timed kernels and their per-X setup/teardown
  check     the check-mode verifiers

The catalog (this module, grammar and settings) imports neither MPI nor numpy; it names the
kernels, verifiers and hooks of files, kernels and check as base.Lazy, imported by the ranks
that run them (issue 47 item 4).
"""

from __future__ import annotations

import os
import tempfile

from commbench import policy
from commbench.option_types import ConfigError
from commbench.suites.base import ONE, Benchmark, Family, Kind, Lazy, Procs
from commbench.suites.io.grammar import SPECS, Spec, disk_need, file_bytes, human, io_sizes, share
from commbench.suites.io.settings import OPTIONS, IoSettings

# What the tests and tools reach as commbench.suites.io.<name>.
__all__ = [
    "BENCHMARKS",
    "FAMILY",
    "OPTIONS",
    "SPECS",
    "IoSettings",
    "Spec",
    "disk_need",
    "file_bytes",
    "io_sizes",
    "share",
    "validate",
]

F = "io"
FILES = "commbench.suites.io.files"
KERNELS = "commbench.suites.io.kernels"
CHECK = "commbench.suites.io.check"

FILENAME = "IMB_out"  # spec §16
OURS = ("IMB_out", ".IMB_out")  # our files and ROMIO's shared-pointer files beside them


def ours(name: str) -> bool:
    return name.startswith(OURS)


# ---------------------------------------------------------------- pre-flight


def _directory(given: str | None) -> tuple[str, str]:
    """(directory, how errors name it): --iodir checked for foreign files,
    else the temporary one."""
    if given is not None:
        d, what = given, f"--iodir {given!r}"
        if not os.path.exists(d):
            raise ConfigError(
                f"{what}: no such directory (accepted: --iodir DIR, an existing writable directory)"
            )
        if not os.path.isdir(d):
            raise ConfigError(
                f"{what}: not a directory (accepted: --iodir DIR, an existing writable directory)"
            )
        try:
            found = sorted(n for n in os.listdir(d) if ours(n))
        except OSError as e:
            raise ConfigError(f"{what}: cannot list the directory ({e.strerror})") from None
        if found:
            shown = ", ".join(found[:5]) + (" …" if len(found) > 5 else "")
            raise ConfigError(
                f"{what} already holds {shown}: commbench never overwrites files it did not "
                "create; remove them or choose another directory"
            )
        return d, what
    try:
        d = tempfile.gettempdir()
    except OSError as e:
        raise ConfigError(
            f"no usable temporary directory for the IO files ({e}); pass --iodir DIR"
        ) from None
    return d, f"temporary directory {d!r} (choose another with --iodir DIR or TMPDIR)"


def validate(cfg, size: int) -> None:
    """Before anything runs: the directory exists, is writable,
    holds no IMB_out* and has the space."""
    d, what = _directory(IoSettings.of(cfg.params).dir)
    try:  # a real probe: os.access says yes to root even on read-only mounts
        fd, probe = tempfile.mkstemp(dir=d, prefix=".commbench-probe-")
        os.close(fd)
        os.remove(probe)
    except OSError as e:
        raise ConfigError(
            f"{what}: not writable ({e.strerror}); the IO benchmarks need to create files there"
        ) from None
    need, why = disk_need(cfg, size)
    if need:
        st = os.statvfs(d)
        free = st.f_bavail * st.f_frsize
        need += 2**20  # small files, shared-pointer files, rounding
        if free < need:
            raise ConfigError(
                f"{what}: {human(free)} free, the run needs about {human(need)} ({why}); "
                "lower -msglog or the -iter counts, or choose another directory"
            )


# ---------------------------------------------------------------- descriptors


def _describe(spec: Spec) -> str:
    who = {
        "S": "one process, own file",
        "P": "every process, common file",
        "C": "every process collectively, common file",
    }[spec.cls]
    if spec.pointer == "Priv":
        who = "every process, own private file"
    how = {
        "Indv": "individual pointer" + (", tiled view" if spec.cls != "S" else ""),
        "Expl": "explicit offsets",
        "Shared": "shared pointer" + (" (ordered)" if spec.collective else ""),
        "Priv": "individual pointer",
    }[spec.pointer]
    act = "write" if spec.write else "read"
    if spec.nonblocking:
        act = (
            ("split-collective " if spec.collective else "nonblocking ")
            + act
            + " overlapped with CPU work"
        )
    return f"{act}, {who}, {how}"


BLOCKING, NONBLOCKING = Lazy(KERNELS, "blocking_kernel"), Lazy(KERNELS, "nonblocking_kernel")
NP_SETUP, NP_TEARDOWN = Lazy(FILES, "np_setup"), Lazy(FILES, "np_teardown")


def _bench(spec: Spec) -> Benchmark:
    def bufs(x: int, np_: int, _spec=spec) -> tuple[int, int]:
        most = share(_spec, x, np_, 0)[1]  # rank 0's share is the largest (§6.7)
        return (most, 0) if _spec.write else (0, most)

    if spec.nonblocking:
        kind, kernel, comps = Kind.OVERLAP, NONBLOCKING, ("t_ovrl", "t_pure", "t_cpu")
    else:
        kind = Kind.SINGLE_ONE if spec.cls == "S" else Kind.PARALLEL
        kernel, comps = BLOCKING, ("t",)
    modes = (
        ("AGGREGATE", "NON-AGGREGATE") if spec.write and not spec.nonblocking else ("AGGREGATE",)
    )
    return Benchmark(
        spec.name,
        F,
        kind,
        kernel,
        _describe(spec),
        buffers=bufs,
        unit=1,
        modes=modes,
        components=comps,
        procs=ONE if spec.cls == "S" else Procs(),
        slots=spec.nonblocking and not spec.write,
        off_cache=False,
        expected=Lazy(CHECK, "expected"),
        setup=Lazy(KERNELS, "setup"),
        teardown=Lazy(KERNELS, "teardown"),
        np_setup=NP_SETUP,
        np_teardown=NP_TEARDOWN,
        dtype="int32",
        warmup=False,
        variant=spec,
    )


BENCHMARKS = tuple(_bench(s) for s in SPECS.values()) + (
    Benchmark(
        "Open_Close",
        F,
        Kind.SYNC,
        Lazy(KERNELS, "open_close"),
        "MPI_File_open on MY_COMM, 1-byte write, MPI_File_close",
        buffers=lambda x, np_: (0, 0),
        nonaggr_cap=True,
        off_cache=False,
        warmup=False,
        dtype="int32",
        np_setup=NP_SETUP,
        np_teardown=NP_TEARDOWN,
    ),
)

FAMILY = Family(
    name=F,
    title="IMB-IO",
    part="MPI-IO part",
    benchmarks=BENCHMARKS,
    profile=policy.IO,
    description=(
        "MPI-IO: single, parallel and collective write/read, nonblocking overlap, Open_Close"
    ),
    aliases=("IMB-IO",),
    options=OPTIONS,
    validate=validate,
    preamble=Lazy(FILES, "preamble"),
    start=Lazy(FILES, "start"),
    finish=Lazy(FILES, "finish"),
)
