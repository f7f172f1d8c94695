"""IMB-MPI4's persistent requests and timed loops (the catalog: commbench.suites.mpi4).

A persistent request binds one buffer and one root, so the benchmark's setup (per size,
outside any timed region) creates one request per (off-cache slot, root the run uses);
teardown frees them. A call i starts the request of its slot and of its root,
ctx.root_of(i). The overlap and pure kernels around these loops are IMB-NBC's.
"""

from __future__ import annotations

from itertools import repeat

from mpi4py import MPI

from commbench.suites.nbc.kernels import shape_of

# ---------------------------------------------------------------- persistent requests


def bind(stem: str):
    """setup(ctx): MPI_<stem>_init once per (slot, root), in the same order on every rank, with
    the arguments of IMB-NBC's call shape of `stem` (nbc.kernels.shape_of)."""
    shape = shape_of(stem)

    def setup(ctx):
        lists, make = shape(ctx)
        init = getattr(ctx.comm, f"{stem}_init")
        slots = len(lists[0]) if lists else 1
        roots = sorted({ctx.root_of(i) for i in range(ctx.size)}) if ctx.bench.root_based else [0]
        ctx.requests = {
            root: [init(*make(root, tuple(lst[k] for lst in lists))) for k in range(slots)]
            for root in roots
        }

    return setup


def free(ctx) -> None:
    by_root, ctx.requests = ctx.requests, {}
    for reqs in by_root.values():
        for req in reqs:
            req.Free()


def _calls(ctx, n: int) -> list:
    """The requests of calls first … first+n-1: each call's slot's, for its root."""
    by_root = ctx.requests
    roots = list(by_root)
    index = {root: j for j, root in enumerate(roots)}
    per_slot = ctx.each(n, *(by_root[r] for r in roots))
    calls = ctx.roots(n) if ctx.bench.root_based else repeat(0, n)
    return [reqs[index[root]] for root, reqs in zip(calls, per_slot)]


# ---------------------------------------------------------------- timed loops (see nbc)


def pure_loop(ctx, n):
    reqs = _calls(ctx, n)
    start, wait = MPI.Prequest.Start, MPI.Request.Wait
    t0 = MPI.Wtime()
    for req in reqs:
        start(req)
        wait(req)
    return ((MPI.Wtime() - t0) / n,)


def overlapped_loop(ctx, n, exploit, target):
    reqs = _calls(ctx, n)
    start, wait, clock = MPI.Prequest.Start, MPI.Request.Wait, MPI.Wtime
    t_cpu = 0.0
    t0 = clock()
    for req in reqs:
        start(req)
        c0 = clock()
        exploit(target, False)
        t_cpu += clock() - c0
        wait(req)
    return (clock() - t0) / n, t_cpu / n


def once(stem: str):
    """ctx -> op(*args): one persistent operation initialised, started, waited for and
    freed (check mode's per-root sweep, untimed)."""

    def op_of(ctx):
        init = getattr(ctx.comm, f"{stem}_init")

        def op(*args):
            req = init(*args)
            req.Start()
            req.Wait()
            req.Free()

        return op

    return op_of


def probe() -> str | None:
    """What fails when this MPI library runs a persistent collective, or None: MPI_Barrier_init
    and MPI_Allreduce_init on MPI_COMM_SELF, each started, completed and freed, the reduction's
    result read. The capability itself, not a version number: Open MPI 5.0 implements them
    and reports MPI 3.1 (issue 33)."""
    import numpy as np

    if not hasattr(MPI.Comm, "Bcast_init"):
        return "this mpi4py has no Comm.Bcast_init (accepted: mpi4py >= 4.0)"
    try:
        req = MPI.COMM_SELF.Barrier_init()
        req.Start()
        req.Wait()
        req.Free()
        got, one = np.zeros(1, np.int32), np.ones(1, np.int32)
        req = MPI.COMM_SELF.Allreduce_init(one, got, MPI.SUM)
        req.Start()
        req.Wait()
        req.Free()
    except (NotImplementedError, MPI.Exception) as e:  # a missing symbol, an MPI error
        return f"{type(e).__name__}: {str(e).strip() or 'not implemented'}"
    if got[0] != 1:
        return f"MPI_Allreduce_init on MPI_COMM_SELF delivered {int(got[0])}, not 1"
    return None
