"""Run metadata: what a reader needs to trust and reproduce a number."""

from __future__ import annotations

import os
import platform
import sys
import time
from collections import Counter

import numpy as np

import commbench
from commbench import buffers, mpilib, process_origin
from commbench.redact import redact

MPI_ENV_PREFIXES = (
    "MPIR_CVAR_",
    "MPICH_",
    "UCX_",
    "FI_",
    "OMPI_",
    "PRTE_",
    "PMIX_MCA_",
    "HYDRA_",
    "I_MPI_",
)
THREAD_NAMES = {
    0: "MPI_THREAD_SINGLE",
    1: "MPI_THREAD_FUNNELED",
    2: "MPI_THREAD_SERIALIZED",
    3: "MPI_THREAD_MULTIPLE",
}


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def mpi_env() -> dict[str, str]:
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith(MPI_ENV_PREFIXES)}


def collect(comm, cfg) -> dict | None:
    """Collective over comm; world rank 0 gets the metadata dict, the others None."""
    import mpi4py
    from mpi4py import MPI

    from commbench import native

    engines, engine_note = native.resolve(getattr(cfg, "engine", "native"), comm)  # collective
    where = comm.gather((MPI.Get_processor_name(), process_origin.slurm_node()), root=0)
    if comm.Get_rank() != 0:
        return None
    hosts = [h for h, _ in where]
    job = process_origin.describe()  # launcher, slurm (job, step, nodes, tasks), pmi
    if "slurm" in job and any(n for _, n in where):  # srun: the Slurm node of every rank
        job["slurm"]["rank_nodes"] = [n for _, n in where]
    major, minor = MPI.Get_version()
    lib = mpilib.here()
    u = platform.uname()
    now = time.time()
    per_host = Counter(hosts)
    thread = MPI.Query_thread()
    return {
        "commbench_version": commbench.__version__,
        "mpi4py_version": mpi4py.__version__,
        "numpy_version": np.__version__,
        "python_version": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "mpi_version": f"{major}.{minor}",
        "mpi_library_version": lib.version,  # without Open MPI 5's terminating NUL
        "mpi_library": {"name": lib.name, "flavour": lib.flavour, "path": lib.path},
        "launch_settings": process_origin.launch_settings(),
        "thread_level": THREAD_NAMES.get(thread, str(thread)),
        "world_size": comm.Get_size(),
        "hosts": sorted(per_host),
        "ranks_per_host": dict(sorted(per_host.items())),
        "rank_hosts": hosts,
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "uname": {
            "system": u.system,
            "node": u.node,
            "release": u.release,
            "version": u.version,
            "machine": u.machine,
        },
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(now)),
        "date_asctime": time.asctime(time.localtime(now)),
        "buffer_allocation": {
            "kind": cfg.alloc,
            "hugepages": cfg.hugepages,
            "thp_system": buffers.thp_mode(),
        },
        "engine": "both" if len(engines) > 1 else engines[0],
        "engine_detail": native.describe(getattr(cfg, "engine", "native"), engines, engine_note),
        "calling_sequence": ["commbench", "run", *map(redact, cfg.argv)],
        "command_line": [redact(a) for a in sys.argv],
        "timer": {"name": "MPI_Wtime", "resolution_s": MPI.Wtick()},
        "mpi_env": mpi_env(),
        **job,
    }
