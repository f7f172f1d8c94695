"""Regenerate tests/data/osu/ from the OMB 7.4 binaries in ../shared/peers/osu.

Run from the repository root: `python tests/data/osu/collect.py` (about a
minute). It writes help.txt (every program's -h, identical texts merged),
headers.txt (every program's first lines: title, settings, column line) and
ref/*.txt (whole outputs of latency, bw and bibw that tests/test_osu.py
parses together with commbench's). The commands are written beside each
output. Timings in these files mean nothing (a shared 2-core machine).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
PEERS = Path("../shared/peers/osu")
V = Path(sys.prefix)
ENV = dict(
    os.environ,
    LD_LIBRARY_PATH=str(V / "lib"),
    MPIR_CVAR_CH4_PROGRESS_THROTTLE="1",
    MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT="64",
)
# Programs that need more than 2 processes to print their header here.
NP = {
    p: 4
    for p in (
        "neighbor_allgather",
        "neighbor_allgatherv",
        "neighbor_alltoall",
        "neighbor_alltoallv",
        "neighbor_alltoallw",
        "ineighbor_allgather",
        "ineighbor_allgatherv",
        "ineighbor_alltoall",
        "ineighbor_alltoallv",
        "ineighbor_alltoallw",
    )
}
REFS = {
    "latency": "-m 1:4096 -i 100 -x 10",
    "latency-z": "-m 1:4096 -i 100 -x 10 -z",
    "latency-c": "-m 1:4096 -i 100 -x 10 -c",
    "latency-c-z": "-m 1:64 -i 100 -x 10 -c -z",
    "latency-T-int": "-m 1:64 -i 100 -x 10 -T mpi_int",
    "latency-T-all": "-m 1:16 -i 100 -x 10 -T all",
    "latency-m-3-100": "-m 3:100 -i 100 -x 10",
    "bw": "-m 1:4096 -i 20 -x 2",
    "bw-z": "-m 1:4096 -i 20 -x 2 -z",
    "bw-W8-c": "-m 1:256 -i 20 -x 2 -W 8 -c",
    "bw-c-z": "-m 1:64 -i 20 -x 2 -c -z",
    "bibw-c-z": "-m 1:64 -i 20 -x 2 -c -z",
    "bibw": "-m 1:4096 -i 20 -x 2",
    "bibw-z": "-m 1:4096 -i 20 -x 2 -z",
    "bibw-c": "-m 1:256 -i 20 -x 2 -c",
    # one-sided (tests/test_osu_rma.py's LAYOUTS; ref/rma-steps.txt: see README.md)
    "put_latency": "-m 1:4096 -i 100 -x 10",
    "put_latency-z": "-m 1:4096 -i 100 -x 10 -z",
    "get_latency-w-create-s-lock": "-m 1:4096 -i 100 -x 10 -w create -s lock",
    "put_bw-W8-z": "-m 1:4096 -i 20 -x 2 -W 8 -z",
    "get_bw-w-dynamic-s-fence": "-m 1:4096 -i 20 -x 2 -w dynamic -s fence",
    "put_bibw": "-m 1:4096 -i 20 -x 2",
    "put_bibw-s-fence": "-m 1:4096 -i 20 -x 2 -s fence",
    "acc_latency-c": "-m 1:64 -i 100 -x 10 -c",
    "acc_latency-c-z": "-m 1:64 -i 100 -x 10 -c -z",
    "acc_latency-T-all": "-m 1:16 -i 100 -x 10 -T all",
    "get_acc_latency": "-m 1:4096 -i 100 -x 10",
    "get_acc_latency-s-pscw-w-allocate": "-m 1:64 -i 100 -x 10 -s pscw -w allocate",
    "fop_latency": "-i 100 -x 10",
    "fop_latency-T-int-c": "-i 100 -x 10 -T mpi_int -c",
    "cas_latency-c-s-lock_all": "-i 100 -x 10 -c -s lock_all",
    "cas_latency-T-int-z": "-i 100 -x 10 -T mpi_int -z",
}
# The blocking and persistent collectives (tests/test_osu_coll.py): every program with -f -z (-c
# where it takes it) at 2 processes, and a few at 4 (names ending in -np4).
COLL = (
    "allreduce allgather allgatherv alltoall alltoallv alltoallw bcast gather gatherv reduce "
    "reduce_scatter reduce_scatter_block scatter scatterv"
).split()
REFS.update(
    {
        f"{c}{p}-f-z-c": "-m 1:64 -i 20 -x 2 -f -z -c"
        for c in COLL
        for p in ("", "_persistent")
        if f"{c}{p}" != "reduce_scatter_block_persistent"
    }
)
REFS.update(
    {
        "barrier-f-z": "-i 20 -x 2 -f -z",
        "barrier_persistent-f-z": "-i 20 -x 2 -f -z",
        "allreduce-T-all-np4": "-m 1:16 -i 20 -x 2 -T all",
        "reduce_scatter-f-np4": "-m 1:64 -i 20 -x 2 -f",
        "alltoallv_persistent-c-np4": "-m 1:64 -i 20 -x 2 -c",
        "barrier-np4": "-i 20 -x 2",
        "gather-m-3-100-np4": "-m 3:100 -i 20 -x 2",
    }
)
# The rest of point-to-point and init (tests/test_osu_pt2pt.py); bw_fan_in/out refuse one node
# (README.md).
REFS.update(
    {
        "latency_persistent": "-m 1:4096 -i 100 -x 10",
        "bw_persistent": "-m 1:4096 -i 20 -x 2",
        "bibw_persistent": "-m 1:4096 -i 20 -x 2",
        "bw_persistent-c-z": "-m 1:64 -i 20 -x 2 -c -z",
        "mbw_mr": "-m 1:4096 -i 20 -x 2",
        "mbw_mr-W8-z": "-m 1:64 -i 20 -x 2 -W 8 -z",
        "multi_lat": "-m 1:4096 -i 100 -x 10",
        "latency_mp": "-m 1:4096 -i 100 -x 10",
        "latency_mp-t-4-6": "-m 1:64 -i 100 -x 10 -t 4:6",
        "latency_mt": "-m 1:4096 -i 100 -x 10",
        "latency_mt-t-3-z": "-m 1:64 -i 100 -x 10 -t 3 -z",
        "init": "",
        "init-I": "-I",
    }
)
# -z<list> (tests/test_osu.py)
REFS.update(
    {
        "latency-z-list": "-m 1:64 -i 100 -x 10 -z5,50,100",
        "bw-c-z-list": "-m 1:64 -i 20 -x 2 -c -z99,100",
    }
)
# OMB's buffer operands after the options, as ReFrame's OSU tests pass them
# (tests/test_osu_limits.py): the CPU build runs them on host memory and prints nothing of them
REFS.update(
    {
        "latency-D-D": "-m 1:64 -i 100 -x 10 D D",
        "bw-H-H": "-m 1:64 -i 20 -x 2 H H",
        "allreduce-M-D": "-m 1:64 -i 20 -x 2 M D",
    }
)


def run(np_: int, prog: str, args: str) -> tuple[str, str]:
    cmd = f"mpiexec -n {np_} {PEERS / ('osu_' + prog)} {args}".strip()
    p = subprocess.run(
        [str(V / "bin" / "mpiexec"), "-n", str(np_), str(PEERS / f"osu_{prog}"), *args.split()],
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
    )
    return cmd, p.stdout + p.stderr


def programs() -> list[str]:
    return sorted(p.name[4:] for p in PEERS.glob("osu_*"))


def helps() -> str:
    texts: dict[str, list[str]] = {}
    for prog in programs():
        _, out = run(2, prog, "-h")
        out = out.replace(str(PEERS) + "/", "").replace(f"osu_{prog}", "PROG")
        texts.setdefault(out, []).append(f"osu_{prog}")
    parts = [
        f"## {', '.join(names)}  (mpiexec -n 2 PROG -h; PROG = the program)\n{text}"
        for text, names in texts.items()
    ]
    return "\n".join(parts)


def headers() -> str:
    parts = []
    for prog in programs():
        np_ = NP.get(prog, 2)
        cmd, out = run(np_, prog, "" if prog in ("init", "hello") else "-m 1:1 -i 1 -x 0")
        lines = out.splitlines()
        cut = next(
            (
                i
                for i, s in enumerate(lines)
                if re.match(r"#\s*(Size\s|Avg Latency|Overall\(us\))", s)
            ),
            None,
        )
        keep = lines[: cut + 1] if cut is not None else lines[:6]
        parts.append(f"## {cmd}\n" + "\n".join(keep) + "\n")
    return "\n".join(parts)


def main() -> None:
    (HERE / "help.txt").write_text(helps())
    (HERE / "headers.txt").write_text(headers())
    ref = HERE / "ref"
    ref.mkdir(exist_ok=True)
    for name, args in REFS.items():
        prog = name.split("-")[0]
        cmd, out = run(4 if name.endswith("-np4") else 2, prog, args)
        (ref / f"{name}.txt").write_text(out)
        print(cmd)


if __name__ == "__main__":
    main()
