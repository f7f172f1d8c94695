"""The families whose check mode tests/mpi/test_check_honesty.py corrupts, and the options
their runs take; tests/unit/test_check_honesty.py holds that these and the families that
check themselves are every family."""

from __future__ import annotations

KERNEL_FAMILIES = ("mpi1", "ext", "rma", "nbc", "mpi4", "comms", "pgas", "io")
DRIVER_FAMILIES = {
    "overhead": [
        "--sizes",
        "16,64",
        "--trials",
        "1",
        "--reps",
        "3",
        "--q-time",
        "100",
        "--stream-time",
        "0.05",
        "--loggp-n",
        "3",
    ],
    "msgrate": ["--peers", "2", "--iters", "2", "--msgs", "4", "--cache-size", "0"],
    "p2p": ["-msglog", "2", "-iter", "5", "-pause", "0"],
    "net": ["--net-samples", "2", "--net-rings", "1", "--net-rounds", "1"],
    "gpcnet": ["RRTwoSidedLat", "--gpcnet-rings", "1", "-time", "0.05"],
}
