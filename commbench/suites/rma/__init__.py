"""IMB-RMA: MPI-3 one-sided communication, passive target (spec §12).

Common frame of every kernel: the origin(s) lock the target(s) (shared lock,
or lock_all), time the pattern, unlock; then all members meet in
MPI_Barrier(MY_COMM). Targets make no RMA calls — they wait in that barrier —
and return a negative time, which the records leave out of min/max/avg.
"Agg" benchmarks run NON-AGGREGATE (a completion call after every operation)
then AGGREGATE (n operations to disjoint slots, one completion call).
The window is created per size in the descriptor's setup, without a fence. The kernels are
in kernels.py, the check mode in check.py; this module declares the benchmarks.
"""

from __future__ import annotations

from commbench.suites.base import GET, PUT, TWO, Benchmark, Family, Kind, Lazy, hooks, xp

F = "rma"
AGG, NONAGG = "AGGREGATE", "NON-AGGREGATE"
MODES = (NONAGG, AGG)  # non-aggregate first [ref order] (spec §12)
KERNELS = "commbench.suites.rma.kernels"
CHECK = "commbench.suites.rma.check"
ONESIDED = "commbench.suites.onesided"

# name -> (MPI.Win method, window over, the native patterns' stem); kernels.ARGS: its arguments
OPERATIONS = {
    "put": ("Put", PUT, "rma_put"),
    "get": ("Get", GET, "rma_get"),
    "acc": ("Accumulate", PUT, "rma_accumulate"),
    "getacc": ("Get_accumulate", PUT, "rma_get_accumulate"),
    "fop": ("Fetch_and_op", PUT, "rma_fetch_and_op"),
    "cas": ("Compare_and_swap", PUT, "rma_compare_and_swap"),
}
FREE = Lazy(ONESIDED, "free_window")


_check = hooks(CHECK)


# ---------------------------------------------------------------- descriptors


def _r0(ctx):
    return (0,)


def _r1(ctx):
    return (1,)


def _both(ctx):
    return (0, 1)


def _partner(ctx):
    return 1 - ctx.rank


def _not_r0(ctx):
    return tuple(range(1, ctx.size))


def _all(ctx):
    return tuple(range(ctx.size))


def _single(name, op, completion, bidir, desc, expected=None, default=True, unit=1, **kw):
    """Rank 0 to rank 1, or both ways (bidir); a Put's or Get's verifier follows from op."""
    over = OPERATIONS[op][1]
    unit_disp = 4 if op in ("acc", "getacc", "fop", "cas") else 1
    if expected is None:  # where a Put's or Get's data arrives, and from which rank
        if bidir:
            expected = _check("arrived", _both, _partner)
        else:  # rank 0 puts into rank 1, gets from rank 1
            expected = _check(
                "arrived", *((_r1, lambda c: 0) if op == "put" else (_r0, lambda c: 1))
            )
    return Benchmark(
        name,
        F,
        Kind.SINGLE,
        Lazy(KERNELS, "pair", (op, completion, bidir)),
        desc,
        unit=unit,
        default=default,
        procs=TWO,
        modes=MODES,
        slots=True,
        setup=kw.pop("setup", Lazy(ONESIDED, "setup_window", (over, unit_disp))),
        teardown=FREE,
        expected=expected,
        variant=over,
        fit="fixed_sizes" not in kw,
        **kw,
        native=OPERATIONS[op][2]
        + ("_local" if completion == "Flush_local" else "")
        + ("_bidir" if bidir else ""),
    )


def _to_all(name, op, completion, desc, default=True):
    """Rank 0 to every other rank, or (All_*) every rank to every other, one completion call."""
    every = name.startswith("All_")
    over = OPERATIONS[op][1]
    if every or op == "get":
        expected = _check("from_one_of", _all if every else _r0, Lazy(CHECK, "others"))
    else:
        expected = _check("arrived", _not_r0, lambda c: 0)
    if every:
        native, turnover = f"rma_all_{op}_all", lambda np_: 1.0
    else:
        local = "_local" if completion == "Flush_local_all" else ""
        native, turnover = OPERATIONS[op][2] + "_all" + local, lambda np_: float(np_ - 1)
    return Benchmark(
        name,
        F,
        Kind.COLLECTIVE if every else Kind.MULTIPLE,
        Lazy(KERNELS, "to_all", (op, completion, every)),
        desc,
        default=default,
        turnover=turnover,
        setup=Lazy(ONESIDED, "setup_window", (over,)),
        teardown=FREE,
        expected=expected,
        variant=over,
        native=native,
    )


def _exchange_bench(name, op, desc):
    over = OPERATIONS[op][1]
    return Benchmark(
        name,
        F,
        Kind.COLLECTIVE,
        Lazy(KERNELS, "exchange", (op,)),
        desc,
        buffers=lambda x, np_: (2 * xp(x), 2 * xp(x)),
        setup=Lazy(ONESIDED, "setup_window", (over,)),
        teardown=FREE,
        expected=_check("check_exchange"),
        variant=over,
        native=f"rma_exchange_{op}",
    )


PASSIVE_COMMENTS = (
    "The benchmark measures execution time of MPI_Put for 2 cases:",
    "1) The target is waiting in MPI_Barrier call (t_pure value)",
    "2) The target performs computation and then enters MPI_Barrier routine (t_ovrl value)",
)

BENCHMARKS = (
    _single(
        "Unidir_put", "put", "Flush", False, "rank 0 MPI_Put of X bytes into rank 1, MPI_Win_flush"
    ),
    _single(
        "Unidir_get", "get", "Flush", False, "rank 0 MPI_Get of X bytes from rank 1, MPI_Win_flush"
    ),
    _single(
        "Bidir_put",
        "put",
        "Flush",
        True,
        "both ranks MPI_Put X bytes into each other, MPI_Win_flush",
    ),
    _single(
        "Bidir_get",
        "get",
        "Flush",
        True,
        "both ranks MPI_Get X bytes from each other, MPI_Win_flush",
    ),
    _to_all(
        "One_put_all",
        "put",
        "Flush_all",
        "rank 0 MPI_Put of X bytes to every other rank, one MPI_Win_flush_all",
    ),
    _to_all(
        "One_get_all",
        "get",
        "Flush_all",
        "rank 0 MPI_Get of X bytes from every other rank, one MPI_Win_flush_all",
    ),
    _to_all(
        "All_put_all",
        "put",
        "Flush_all",
        "every rank MPI_Put of X bytes to every other rank (staggered), MPI_Win_flush_all",
    ),
    _to_all(
        "All_get_all",
        "get",
        "Flush_all",
        "every rank MPI_Get of X bytes from every other rank (staggered), MPI_Win_flush_all",
    ),
    _single(
        "Put_local",
        "put",
        "Flush_local",
        False,
        "as Unidir_put, local completion MPI_Win_flush_local",
    ),
    _single(
        "Get_local",
        "get",
        "Flush_local",
        False,
        "as Unidir_get, local completion MPI_Win_flush_local",
        default=False,
    ),
    _to_all(
        "Put_all_local",
        "put",
        "Flush_local_all",
        "as One_put_all, local completion MPI_Win_flush_local_all",
    ),
    _to_all(
        "Get_all_local",
        "get",
        "Flush_local_all",
        "as One_get_all, local completion MPI_Win_flush_local_all",
        default=False,
    ),
    _exchange_bench(
        "Exchange_put", "put", "every rank MPI_Put of X bytes to both neighbours, two MPI_Win_flush"
    ),
    _exchange_bench(
        "Exchange_get",
        "get",
        "every rank MPI_Get of X bytes from both neighbours, two MPI_Win_flush",
    ),
    _single(
        "Accumulate",
        "acc",
        "Flush",
        False,
        "rank 0 MPI_Accumulate of X/4 floats (MPI_SUM) into rank 1, MPI_Win_flush",
        expected=_check("check_accumulate", False),
        unit=4,
    ),
    _single(
        "Get_accumulate",
        "getacc",
        "Flush",
        False,
        "rank 0 MPI_Get_accumulate of X/4 floats (MPI_SUM) with rank 1, MPI_Win_flush",
        expected=_check("check_accumulate", True),
        unit=4,
    ),
    _single(
        "Fetch_and_op",
        "fop",
        "Flush",
        False,
        "rank 0 MPI_Fetch_and_op of one float (MPI_SUM) on rank 1, MPI_Win_flush",
        expected=_check("check_accumulate", True, 4),
        unit=4,
        fixed_sizes=(4,),
    ),
    _single(
        "Compare_and_swap",
        "cas",
        "Flush",
        False,
        "rank 0 MPI_Compare_and_swap of one int on rank 1, MPI_Win_flush",
        expected=_check("check_cas"),
        unit=4,
        fixed_sizes=(4,),
        buffers=lambda x, np_: (xp(x), 3 * xp(x)),
        setup=_check("cas_setup"),
        comments=("Uses MPI_INT data type",),
    ),
    Benchmark(
        "Truly_passive_put",
        F,
        Kind.PASSIVE,
        Lazy(KERNELS, "truly_passive_put"),
        "MPI_Put+flush while the target waits in MPI (t_pure) and while it computes (t_ovrl)",
        procs=TWO,
        components=("t_pure", "t_ovrl", "t_cpu"),
        setup=Lazy(KERNELS, "passive_setup"),
        teardown=FREE,
        expected=_check("arrived", _r1, lambda c: 0),
        comments=PASSIVE_COMMENTS,
        variant=PUT,
        native="rma_truly_passive_put",
    ),
)

_DEFAULT = [
    "Unidir_put",
    "Unidir_get",
    "Bidir_put",
    "Bidir_get",
    "One_put_all",
    "One_get_all",
    "All_put_all",
    "All_get_all",
    "Put_local",
    "Put_all_local",
    "Exchange_put",
    "Exchange_get",
    "Accumulate",
    "Get_accumulate",
    "Fetch_and_op",
    "Compare_and_swap",
    "Truly_passive_put",
]

FAMILY = Family(
    name=F,
    title="IMB-RMA",
    part="MPI-RMA part",
    imb2021_order=(
        "Unidir_put",
        "Bidir_put",
        "Unidir_get",
        "Bidir_get",
        "Put_local",
        "Put_all_local",
        "One_put_all",
        "All_put_all",
        "One_get_all",
        "All_get_all",
        "Exchange_put",
        "Exchange_get",
        "Accumulate",
        "Get_accumulate",
        "Fetch_and_op",
        "Compare_and_swap",
        "Truly_passive_put",
    ),
    benchmarks=BENCHMARKS,
    description=(
        "MPI-3 one-sided communication, passive target "
        "with lock/flush (Intel MPI Benchmarks RMA part)"
    ),
    aliases=("IMB-RMA",),
    alloc="mpi",  # spec §6.1: one-sided buffers SHOULD come from MPI_Alloc_mem; --alloc overrides
)
