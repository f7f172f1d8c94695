"""`commbench run` as a rank runs it, writing at exit which top-level packages the rank
imported, to <dir>/modules.<rank> (tests/mpi/test_scale.py: a rank imports only what it uses).

    mpiexec -n N python tests/support/modules_job.py DIR run ...
"""

import atexit
import os
import runpy
import sys

OUT = sys.argv[1]


def _dump() -> None:
    from mpi4py import MPI

    rank = MPI.COMM_WORLD.Get_rank()
    with open(os.path.join(OUT, f"modules.{rank}"), "w") as f:
        f.write("\n".join(sorted({m.split(".")[0] for m in sys.modules})))


atexit.register(_dump)
sys.argv = ["commbench", *sys.argv[2:]]
runpy.run_module("commbench", run_name="__main__")
