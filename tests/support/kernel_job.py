"""A kernel-level job without the CLI:
`mpiexec -n 2 python tests/support/kernel_job.py FAMILY NAME… [-- OPTIONS]`.

It builds the RunConfig, a Session whose only view collects the records, and
runs the Harness directly; world rank 0 prints one JSON line per record. Used
by tests/mpi/test_kernels.py to exercise kernels at 2 ranks beside the end-to-end
runs through `commbench run`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mpi4py import MPI  # noqa: E402

from commbench import run_config  # noqa: E402
from commbench.harness.core import Harness  # noqa: E402
from commbench.session import Session  # noqa: E402
from commbench.views import Collector  # noqa: E402


def main(argv: list[str]) -> int:
    family, rest = argv[0], argv[1:]
    names, opts = (
        (rest[: rest.index("--")], rest[rest.index("--") + 1 :]) if "--" in rest else (rest, [])
    )
    comm = MPI.COMM_WORLD
    cfg = run_config.parse_run_args(["--suite", family, *names, *opts], world_size=comm.Get_size())
    sink = Collector()
    failures = Harness(Session(cfg, comm, [sink])).run()
    if comm.Get_rank() == 0:
        for r in sink.records:
            print(
                json.dumps(
                    {
                        "benchmark": r.benchmark,
                        "np": r.np,
                        "mode": r.mode,
                        "bytes": r.bytes,
                        "status": r.status,
                        "defects": r.defects,
                        "check": r.extra.get("check"),
                        "repetitions": r.repetitions,
                        "t": r.values.get("t_max", r.values.get("t_ovrl")),
                    }
                )
            )
        print(json.dumps({"check_failures": failures}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
