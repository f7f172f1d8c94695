"""Which MPI a comparison script measures on, and what belongs to it (issue 33).

    --python PATH    the Python whose mpi4py (and so whose MPI library) commbench runs on;
                     default: the Python running the script
    --mpiexec PATH   default: that library's mpiexec, beside it (a wheel's: in that Python's
                     bin/), else in that Python's bin/, else on PATH (commbench.mpilib)
    --mpicc PATH     the same for the C floors' compiler wrapper
    --peers DIR      the IMB / OMB binaries (imb_side_by_side, osu_side_by_side); default
                     ../shared/peers/imb and ../shared/peers/osu (MPICH ABI: the mpich and
                     Intel MPI wheels), for Open MPI ../shared/peers/openmpi/imb and .../osu

The library is learnt as commbench's launcher learns it: a child of that Python imports
mpi4py without initialising MPI (commbench.mpilib.of_python). commbench then runs as
`<python> -m commbench run -n N --mpiexec <mpiexec> ...`; the peers and the C floors run
under the same mpiexec with LD_LIBRARY_PATH at the library's folder (they carry no search
path of their own) and with the settings commbench's launcher gives its own runs on that
library (commbench.mpilib): Open MPI as root (OMPI_ALLOW_RUN_AS_ROOT*), --oversubscribe past
the cores, OMPI_MCA_osc=^ucx on a host without RDMA devices, MPICH's progress throttling
when oversubscribed. Both sides get that one environment, so they compare alike; `header`
prints the library, the Python, the mpiexec, the peers and what was set.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from commbench import mpilib  # noqa: E402 - this checkout's commbench first

CORES = os.cpu_count() or 1
PEERS = REPO.parent / "shared" / "peers"
# Variables of the environment that change how an MPI runs: quoted in the header when set
# (an allocator preloaded or glibc's malloc tuned moves Open MPI's small cells, engines.md).
MPI_TUNING = ("OMPI_MCA_", "PRTE_MCA_", "I_MPI_", "MPIR_CVAR_", "FI_", "UCX_")
TUNING_PREFIXES = (*MPI_TUNING, "LD_PRELOAD", "MALLOC_", "GLIBC_TUNABLES")


def _joined(first: str, rest: str | None) -> str:
    return os.pathsep.join(p for p in (first, rest) if p)


@dataclass(frozen=True)
class MPI:
    python: str  # as given (a venv's python is a link: not resolved)
    library: mpilib.Library
    mpiexec: str
    mpicc: str | None
    versions: str  # "Python 3.11.7, mpi4py 4.1.2"
    peers_dir: str | None = None  # --peers

    @property
    def first_line(self) -> str:
        """The first line of MPI_Get_library_version."""
        return self.library.version.splitlines()[0].strip()

    @property
    def name(self) -> str:
        return self.library.name

    @property
    def libdir(self) -> str | None:
        return os.path.dirname(self.library.path) if self.library.path else None

    def settings(self, np_: int) -> list[mpilib.Setting]:
        """What a run of np_ processes gets on this library (as commbench's launcher does)."""
        over, _note = mpilib.oversubscribed(self.library, np_, CORES, os.environ)
        return over + mpilib.open_mpi_settings(self.library, os.environ)

    def env(self, np_: int) -> dict:
        """The environment of a run of np_ processes, peers, C floors and commbench alike."""
        env = dict(os.environ)
        env["PYTHONPATH"] = _joined(str(REPO), env.get("PYTHONPATH"))  # this checkout's
        if self.libdir:
            env["LD_LIBRARY_PATH"] = _joined(self.libdir, env.get("LD_LIBRARY_PATH"))
        env.update({s.name: s.value for s in self.settings(np_) if not s.name.startswith("-")})
        return env

    def launch(self, np_: int) -> list[str]:
        """`mpiexec -n np_` with the options this library needs for it (--oversubscribe)."""
        opts = [s.name for s in self.settings(np_) if s.name.startswith("-")]
        return [self.mpiexec, "-n", str(np_), *opts]

    def commbench(self, np_: int, args: list[str]) -> list[str]:
        """`<python> -m commbench run -n np_ --mpiexec <mpiexec> ARGS`."""
        run = [self.python, "-m", "commbench", "run", "-n", str(np_), "--mpiexec", self.mpiexec]
        return run + list(args)

    def compiler_env(self) -> dict:
        """The environment for its mpicc, with what commbench's own build gives that wrapper
        (commbench.native.extension.wrapper_env: Intel MPI's wheel needs I_MPI_ROOT)."""
        from commbench.native.extension import wrapper_env

        env = dict(os.environ)
        if self.mpicc:
            env.update(wrapper_env(self.mpicc, self.library))
        return env

    def c_floor(self) -> str:
        """How the C floors are built: the mpicc and what its environment gained."""
        extra = {k: v for k, v in self.compiler_env().items() if os.environ.get(k) != v}
        told = " ".join(f"{k}={v}" for k, v in extra.items())
        return f"built with {self.mpicc} -O2" + (f" ({told})" if told else "")

    def peers(self, kind: str) -> Path:
        """The folder of the peer binaries: --peers, else kind's folder for this library."""
        if self.peers_dir:
            return Path(self.peers_dir).absolute()
        if self.library.flavour == "openmpi":
            return PEERS / "openmpi" / kind
        return PEERS / kind

    def linked(self, binary: Path) -> str:
        """Which libmpi `binary` loads in these runs' environment (ldd), in words."""
        try:
            p = subprocess.run(
                ["ldd", str(binary)], capture_output=True, text=True, env=self.env(2), timeout=20
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"ldd failed: {e}"
        m = re.search(r"^\s*(libmpi\.so\S*) => (.+?)(?: \(0x[0-9a-f]+\))?$", p.stdout, re.M)
        return f"{binary.name} loads {m.group(1)} => {m.group(2)}" if m else "no libmpi in ldd"

    def header(self, nps: list[int], tools: str = "") -> list[str]:
        """'# ' lines naming the MPI, the Python, the mpiexec, `tools` (the peers or the C
        floor's mpicc) and what the runs of each of nps processes get."""
        lines = [
            f"# MPI library: {self.first_line} ({self.library.path})",
            f"# Python: {self.python} ({self.versions})",
            f"# mpiexec: {self.mpiexec} ({launcher_version(self.mpiexec)})",
        ]
        if tools:
            lines.append(f"# {tools}")
        lines.append(f"# LD_LIBRARY_PATH starts with {self.libdir}")
        for np_ in sorted(set(nps)):
            got = [f"{s.name}={s.value}" if s.value else s.name for s in self.settings(np_)]
            lines.append(f"# set for NP {np_}, both sides alike: {' '.join(got) or 'nothing'}")
        preset = [
            f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith(TUNING_PREFIXES)
        ]
        if preset:
            lines.append(f"# from the environment: {' '.join(preset)}")
        return lines


def shown(path: Path) -> str:
    """A path as the docs quote it: relative to the repository where it is near it."""
    rel = os.path.relpath(path, REPO)
    return rel if not rel.startswith("../..") else str(path)


def launcher_version(mpiexec: str) -> str:
    """`mpiexec --version` in a line: its first, with Hydra's 'Version:' line."""
    try:
        p = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"--version failed: {e}"
    lines = [ln.strip() for ln in (p.stdout + p.stderr).splitlines() if ln.strip()] or ["?"]
    version = next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("Version:")), "")
    return f"{lines[0]} Version {version}" if version else lines[0]


def _versions(python: str) -> str:
    code = "import sys, mpi4py; print(sys.version.split()[0], mpi4py.__version__)"
    p = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)
    py, _, m4 = p.stdout.strip().partition(" ")
    return f"Python {py or '?'}, mpi4py {m4 or '?'}"


def _mpiexec(given: str | None, lib: mpilib.Library, bindir: str) -> str:
    if given:
        found = shutil.which(given)
        if not found:
            sys.exit(f"--mpiexec {given}: not found")
        family, line = mpilib.launcher_family(found)
        if family not in ("other", mpilib.family_of(lib)):
            print(f"warning: {found} is {line!r}'s, the library {lib.name}", file=sys.stderr)
        return os.path.abspath(found)
    found, mismatch = mpilib.matching_mpiexec(lib, [bindir])
    if found is None or mismatch:
        sys.exit(mismatch or f"no mpiexec of {lib.name} beside it, in {bindir} or on PATH")
    return found


def of(
    python: str, mpiexec: str | None = None, mpicc: str | None = None, peers: str | None = None
) -> MPI:
    """The MPI that `python`'s mpi4py loads, with its tools (given ones win)."""
    exe = shutil.which(python)
    if exe is None:
        sys.exit(f"--python {python}: not found")
    exe = os.path.abspath(exe)
    lib = mpilib.of_python(exe)
    if lib is None:
        sys.exit(
            f"{exe}: no MPI library found through its mpi4py (try: {exe} -c "
            "'import mpi4py; mpi4py.rc.initialize=False; from mpi4py import MPI; "
            "print(MPI.Get_library_version())')"
        )
    bindir = os.path.dirname(exe)
    if mpicc:
        mpicc = shutil.which(mpicc) or sys.exit(f"--mpicc {mpicc}: not found")
    else:
        mpicc = next(mpilib.tool_candidates(lib, ("mpicc",), [bindir]), None)
    return MPI(exe, lib, _mpiexec(mpiexec, lib, bindir), mpicc, _versions(exe), peers)


def add_arguments(ap: argparse.ArgumentParser, peers: str = "") -> None:
    """--python, --mpiexec, --mpicc and (peers: what the folder holds) --peers."""
    g = ap.add_argument_group("MPI (benchmarks/mpis.py)")
    g.add_argument(
        "--python",
        default=sys.executable,
        help="the Python whose mpi4py (and MPI library) commbench runs on (default: this one)",
    )
    g.add_argument("--mpiexec", help="default: the library's, in that Python's bin/")
    g.add_argument("--mpicc", help="for the C floors; default: the library's, as --mpiexec")
    if peers:
        g.add_argument(
            "--peers",
            help=f"the folder of {peers}; default ../shared/peers/{{imb,osu}}, for Open MPI "
            "../shared/peers/openmpi/{imb,osu}",
        )


_SELECTED: dict[str, MPI] = {}


def select(a: argparse.Namespace) -> MPI:
    """The MPI of the parsed options, made the one current() returns."""
    _SELECTED["mpi"] = of(a.python, a.mpiexec, a.mpicc, getattr(a, "peers", None))
    return _SELECTED["mpi"]


def current() -> MPI:
    """The selected MPI; the one this Python's mpi4py loads when none was selected."""
    if "mpi" not in _SELECTED:
        _SELECTED["mpi"] = of(sys.executable)
    return _SELECTED["mpi"]
