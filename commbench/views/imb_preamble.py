"""IMB's preamble (spec §14), the lines commbench.views.imb_text prints before the tables:
the banner, the machine, the cut of the repetitions, the calling sequence, the message
lengths and datatypes, the methodology, the measuring settings, and the list of
benchmarks with their comments. Read from the run header only (metadata and resolved
config as plain data), so `commbench report` prints it again from a results file.
"""

from __future__ import annotations

from collections.abc import Iterator

from commbench.views.measuring_text import measuring_lines


def preamble(header: dict, cfg: dict, meta: dict, fam: dict) -> Iterator[str]:
    """The preamble's lines, one at a time; cfg, meta, fam: the header's config, metadata
    and family."""
    yield from header.get("notes", [])
    yield from _banner(cfg, meta, fam)
    yield from _sizes_and_types(cfg, fam)
    yield from [*header.get("preamble_extra", []), *measuring_lines(cfg)]
    yield from per_iteration_lines(cfg)
    yield from _benchmark_list(cfg, header.get("comments", {}))


def _banner(cfg: dict, meta: dict, fam: dict) -> Iterator[str]:
    """The banner, the machine, the cut of the repetitions and the calling sequence."""
    line = "#" + "-" * 60
    yield line
    yield f"#    commbench {meta['commbench_version']}, {fam['part']}    "
    yield line
    u = meta["uname"]
    yield f"# Date                  : {meta['date_asctime']}"
    yield f"# Machine               : {u['machine']}"
    yield f"# System                : {u['system']}"
    yield f"# Release               : {u['release']}"
    yield f"# Version               : {u['version']}"
    yield f"# MPI Version           : {meta['mpi_version']}"
    yield f"# MPI Thread Environment: {meta['thread_level']}"
    yield ""
    yield ""
    yield "# The number of repetitions per message size is cut down at run time"
    yield "# when one size is expected to run longer than SECS_PER_SAMPLE"
    yield f"# ({cfg['secs']:g} s, set with -time); see -iter and -iter_policy."
    yield ""
    yield ""
    yield ""
    yield "# Calling sequence was: "
    yield ""
    yield "#" + "".join(" " + a for a in meta["calling_sequence"])
    yield ""


def _sizes_and_types(cfg: dict, fam: dict) -> Iterator[str]:
    """The message lengths (IO: portions), the datatypes, the operation, the methodology."""
    io = fam["profile"] == "io"
    if cfg["msglen"] is not None:
        yield "# IO lengths were user defined" if io else "# Message lengths were user defined"
    else:
        what = "io portion" if io else "message length"
        yield f"# Minimum {what} in bytes:   0"
        yield f"# Maximum {what} in bytes:   {2 ** cfg['maxlog']}"
    if not io:
        yield "#"
        params = cfg.get("params", {})
        yield (
            "# MPI_Datatype                   :   "
            f"MPI_{params.get('mpi1_data_type', 'byte').upper()} "
        )
        yield (
            "# MPI_Datatype for reductions    :   "
            f"MPI_{params.get('mpi1_red_data_type', 'float').upper()}"
        )
        yield "# MPI_Op                         :   MPI_SUM  "
        yield f"# Methodology                    :   {methodology_line(cfg)}"
        yield "#"
        yield "#"


def _benchmark_list(cfg: dict, comments: dict) -> Iterator[str]:
    """The list of benchmarks to run, each with IMB's comments on it."""
    yield ""
    yield "# List of Benchmarks to run:"
    yield ""
    prefix = "(Multi-)" if cfg["multi"] is not None else ""
    for name in cfg["benchmarks"]:
        yield f"# {prefix}{name}"
        if comments.get(name):
            yield "#     Comments on this Benchmark:"
            for c in comments[name]:
                yield f"#     {c}"


def per_iteration_lines(cfg: dict) -> list[str]:
    """The preamble's lines of --per-iteration and --sync-start window (none without them)."""
    m = cfg.get("measuring") or {}
    out = []
    if m.get("per_iteration"):
        out.append(
            "# Per-iteration                  :   each repetition timed alone; P50/P90/P99/max of "
            "the slowest rank per repetition, '-' below the timer floor (docs/statistics.md)"
        )
    if m.get("sync_start") == "window":
        out.append(
            "# Start of collectives           :   window: a common time of synchronized clocks "
            "(SKaMPI offsets, HCA tree); 'late': repetitions left out (docs/statistics.md)"
        )
    return out


def methodology_line(cfg: dict) -> str:
    """How this run times and roots its collectives (commbench.imb_methodology), in one line."""
    m = cfg.get("methodology") or {}
    if not m:
        return "imb4"
    timing = (
        f"-sync on ({m['sync']} barrier(s) after each call)"
        if m["sync"]
        else "-sync off (loop timed)"
    )
    return (
        f"{m['name']}: {timing}, -root_shift {'on' if m['root_shift'] else 'off'}, "
        f"PingPong source {'any' if m['any_source'] else 'partner'}, warm-up "
        f"{('every size' if m['warmup_each_size'] else 'first size') if m['warmup'] else 'off'}, "
        f"CPU exploit {m.get('cpu_matrix', 100)}x{m.get('cpu_matrix', 100)}"
    )
