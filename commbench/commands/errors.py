"""How a command fails: `commbench: error: …` and exit status 2; the message when no MPI
library can be loaded, and why (a libmpi other than the one mpi4py was built for)."""

from __future__ import annotations

import os
import sys


def err(msg: str, who: str = "commbench") -> int:
    """`WHO: error: MSG` said; the exit status 2."""
    print(f"{who}: error: {msg}", file=sys.stderr)
    return 2


NO_MPI = (
    "no MPI library could be loaded ({why}). Two ways to get one: pip install 'commbench[mpich]' "
    "(the MPICH wheel, for a laptop or a single node), or, on a cluster, the site's MPI: "
    "module load <mpi>; pip install --no-binary mpi4py --force-reinstall mpi4py "
    "(mpi4py built against it; MPI4PY_LIBMPI may also point at its libmpi.so)"
)


def _resolved_libmpi(ext: str) -> tuple[str, str] | None:
    """(soname, path) of the libmpi the dynamic loader gives mpi4py's extension `ext` (ldd)."""
    import subprocess

    try:
        out = subprocess.run(["ldd", ext], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        name, _, rest = line.strip().partition(" => ")
        if name.startswith(("libmpi.", "libmpich.", "libmpi_")) and rest.startswith("/"):
            return name, rest.split(" (")[0]
    return None


def wrong_libmpi(why: str) -> str | None:
    """mpi4py compiled with one MPI's mpi.h but loading another MPI's libmpi (an undefined
    symbol): where the loader found that library, and, when it is a file in this Python's own
    prefix (the mpich wheel's, which the build's -L and RUNPATH put before the site's), which
    file to remove or which interpreter to build from; None for any other import failure."""
    import glob
    import re

    m = re.search(r"(/\S+\.so): undefined symbol: (\w+)", why)
    found = _resolved_libmpi(m.group(1)) if m else None
    if found is None:
        return None
    soname, path = found
    head = (
        f"mpi4py's MPI extension ({m.group(1)}) was compiled for another MPI than the library it "
        f"loads: undefined symbol {m.group(2)}; the loader gives it {soname} => {path}"
    )
    rebuild = (
        "MPICC=<the site's mpicc> pip install --no-binary mpi4py --no-cache-dir "
        "--force-reinstall mpi4py"
    )
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.base_exec_prefix)}
    lib_dir = os.path.dirname(os.path.realpath(path))
    prefix = next((p for p in sorted(prefixes) if os.path.join(p, "lib") == lib_dir), None)
    if prefix is None:
        return f"{head}. Rebuild mpi4py with the mpicc of the MPI you run: {rebuild}"
    wheel = glob.glob(os.path.join(prefix, "lib", "python3*", "site-packages", "mpich-*.dist-info"))
    owner = f" (the {os.path.basename(wheel[0])[: -len('.dist-info')]} wheel's)" if wheel else ""
    remove = f"{prefix}/bin/python3 -m pip uninstall mpich" if wheel else f"rm {lib_dir}/libmpi.so*"
    use = "a Python whose prefix holds no libmpi"
    if os.path.exists("/usr/bin/python3") and prefix != "/usr":
        use += " (/usr/bin/python3 -m venv ENV)"
    return (
        f"{head}. That file{owner} lies in this Python's prefix, {lib_dir}, which the build "
        f"of mpi4py puts first on the linker's path (-L{lib_dir}) and in its RUNPATH, before "
        f"the site's libmpi. Build from {use}, or remove {lib_dir}/libmpi.so and its "
        f"libmpi.so.* ({remove}); then {rebuild} (docs/cluster.md)"
    )
