"""Checks before anything is allocated: memory the run will need, and large counts.

The harness skips a size whose buffers exceed -mem with an out-of-mem row
(spec §6.4). That cap alone does not protect the machine: -mem 20 on a host
with 16 GiB free, or four ranks per host each allowed 8 GB, would push the
host into swap or the OOM killer halfway through a run. So before the first
measurement rank 0 computes the largest buffer need of the whole run (every
benchmark, process count and size the cap lets through), multiplies it by the
most ranks on one host, and refuses the run with exit status 2 when that
exceeds the host's MemAvailable. Sizes of 2^31 bytes or more need MPI-4
large-count functions (MPI_Send_c, …); mpi4py >= 4 uses them when the
library is MPI-4, otherwise the run is refused up front.
"""

from __future__ import annotations

from commbench import policy

INT_MAX = 2**31 - 1


def mem_available() -> int | None:
    """Bytes the kernel says can be allocated without swapping (MemAvailable), or None."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def preflight(
    plan, ranks_per_host: int, mpi_version: tuple[int, int], available: int | None = None
) -> str | None:
    """An error message when the run (a commbench.harness.plan.Plan) cannot be honoured here,
    else None."""
    peak, biggest, where = plan.peak()
    if biggest > INT_MAX and mpi_version < (4, 0):
        return (
            f"message size {biggest} bytes needs MPI-4 large counts, but this MPI is "
            f"{mpi_version[0]}.{mpi_version[1]} (accepted: sizes < 2^31 = {INT_MAX + 1} bytes; "
            "lower -msglen / --maxlog)"
        )
    available = mem_available() if available is None else available
    if available is None or peak == 0:
        return None
    total = peak * ranks_per_host
    if total > available:
        gib = 2**30
        if plan.family.memory is not None:  # a driver family: its own options set the size
            return (
                f"the run needs {peak / gib:.3f} GiB per process ({where}); x {ranks_per_host} "
                f"process{'es' if ranks_per_host > 1 else ''} on one host = {total / gib:.3f} "
                f"GiB, but only {available / gib:.3f} GiB is available there (MemAvailable) "
                "(accepted: smaller values of the options named, within the memory of a host)"
            )
        return (
            f"the run needs {peak / gib:.3f} GiB of message buffers per process ({where}); x "
            f"{ranks_per_host} process{'es' if ranks_per_host > 1 else ''} on one host = "
            f"{total / gib:.3f} GiB, but only {available / gib:.3f} GiB is available there "
            "(MemAvailable) (accepted: sizes whose buffers fit, i.e. lower -msglen / -msglog / "
            f"--maxlog, or -mem <= {available / ranks_per_host / gib:.3f} so larger sizes are "
            "skipped as out-of-mem)"
        )
    return None


SAMPLE_BYTES = 24  # one sample in the results file: a float in JSON and its separator
SAMPLES_FILE_LIMIT = 256 * 10**6  # bytes of samples a plan may write without --force


def _duration(s: float) -> str:
    if s < 1:
        return "1 s"
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def _bytes(b: float) -> str:
    return f"{b / 1e3:.0f} kB" if b < 1e6 else f"{b / 1e6:,.0f} MB"


def samples_plan(plan, world_size: int) -> tuple[str | None, str | None]:
    """--samples K: (the announcement, a refusal or None) before anything runs.

    Each row repeats its timed run up to K times, cut once -time seconds have
    passed (commbench.harness.core), and a sweep's later sizes time out past
    its time budget (Plan.samples_bound); the results file keeps every sample of every rank. A plan
    whose samples could pass SAMPLES_FILE_LIMIT is refused unless --force: past a few hundred
    samples the median's confidence interval hardly narrows (it shrinks as
    1/sqrt(K)), while the file grows in proportion.
    """
    cfg = plan.cfg
    secs, k = plan.row_budget()  # --precision: its budget per row
    if k <= 1:
        return None, None
    rows, seconds = plan.samples_bound()
    summarised = policy.summarised(world_size, getattr(cfg, "rank_detail", None))
    kept = 0 if summarised else world_size
    per_k = rows * (kept + 1) * SAMPLE_BYTES  # every rank's sample (kept) and the row's t_max
    size = k * per_k
    target = getattr(getattr(cfg, "measuring", None), "precision", None)
    rows_s = f"{rows} row{'s' if rows != 1 else ''}"
    what = (
        f"--precision {100 * target:g}%: {rows_s}, each at most {k} samples in {secs:g} s"
        if target
        else f"--samples {k}: {rows_s}, each cut at -time {cfg.secs:g} s"
    )
    say = (
        f"{what}: at most about {_duration(seconds)} and "
        f"{_bytes(size)} of samples in the results file"
    )
    if size > SAMPLES_FILE_LIMIT and not cfg.force:
        most = max(2, SAMPLES_FILE_LIMIT // per_k)
        fewer = (
            f"--precision-budget {secs:g},{max(6, most)} for this run, or fewer rows"
            if target
            else f"--samples <= {most} for this run, fewer rows, or --force to run it as planned"
        )
        return (
            say,
            f"{say}, past the limit of {SAMPLES_FILE_LIMIT / 1e6:.0f} MB (accepted: {fewer})",
        )
    return say, None
