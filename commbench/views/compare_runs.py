"""What differs between the two runs of `commbench compare` beyond their rows (no MPI).

DIFFERENCES reads each setting from the results files (metadata and config): an
incomparable difference (another library, another way of timing, other buffers) makes
`commbench compare` refuse (commbench.views.compare_gate); the others are notes said
before the ratios. A value one file does not record (an imported log's) is not held
against it.
"""

from __future__ import annotations

ABSENT = type(
    "NotRecorded", (), {"__repr__": lambda self: "not recorded"}
)()  # held against no file


def _meta(key: str):
    return lambda d: _recorded((d.get("metadata") or {}).get(key))


def _recorded(v: object) -> object:
    return ABSENT if v is None else v


def _conf(key: str):
    """A run's option: None is a value (off, unset); a key the file lacks, or an import's
    config (what its logs say, not a run's options), is not recorded."""
    return lambda d: (d.get("config") or {}).get(key, ABSENT) if _ran(d) else ABSENT


def _ran(d: dict) -> bool:
    """A file of commbench run (an import records only what its logs say)."""
    return "source" not in (d.get("metadata") or {})


def _placement(d: dict):
    per_host = (d.get("metadata") or {}).get("ranks_per_host")
    return (
        sorted(per_host.values(), reverse=True)
        if isinstance(per_host, dict) and per_host
        else ABSENT
    )


def _library(d: dict):
    v = (d.get("metadata") or {}).get("mpi_library_version")
    return " ".join(v.split()) if isinstance(v, str) else ABSENT


# Variables a launcher sets for each job (its command, working directory, process counts,
# each rank's place): a description of the job, not a setting, so that two runs of one
# configuration under Open MPI's prterun always differ in them.
JOB_VARIABLES = (
    "OMPI_ARGV",
    "OMPI_COMMAND",
    "OMPI_FILE_LOCATION",
    "OMPI_MCA_initial_wdir",
    "OMPI_MCA_num_procs",
    "OMPI_NUM_APP_CTX",
    "OMPI_UNIVERSE_SIZE",
    "OMPI_FIRST_RANKS",
    "OMPI_APP_CTX_NUM_PROCS",
    "PRTE_LAUNCHED",
)
JOB_PREFIXES = ("OMPI_COMM_WORLD_", "OMPI_WORLD_")


def mpi_env_settings(d: dict):
    """The MPI environment variables a run records, less those its launcher sets per job."""
    env = (d.get("metadata") or {}).get("mpi_env")
    if not isinstance(env, dict):
        return _recorded(env)
    return {
        k: v for k, v in env.items() if k not in JOB_VARIABLES and not k.startswith(JOB_PREFIXES)
    }


def _measuring(key: str):
    return lambda d: (
        ((d.get("config") or {}).get("measuring") or {}).get(key, ABSENT) if _ran(d) else ABSENT
    )


# (what, how to read it from a document, incomparable?): an incomparable difference
# changes what the numbers are (another library, another way of timing, other buffers)
# and makes `commbench compare` refuse (exit 2, --allow-different compares anyway); the
# others are said before the rows.
DIFFERENCES = (
    ("world size", _meta("world_size"), True),
    ("rank placement (ranks per host)", _placement, True),
    ("buffer allocation (--alloc)", _conf("alloc"), True),
    ("huge pages (--hugepages)", _conf("hugepages"), True),
    ("MPI library", _library, True),
    ("MPI standard version", _meta("mpi_version"), True),
    ("MPI thread level (-thread_level)", _meta("thread_level"), True),
    ("methodology (--methodology)", _conf("methodology"), True),
    ("per-repetition timing (--per-iteration)", _measuring("per_iteration"), True),
    ("synchronized starts (--sync-start)", _measuring("sync_start"), True),
    ("cache policy (-off_cache)", _conf("off_cache"), True),
    ("concurrent groups (-multi)", _conf("multi"), True),
    ("process mapping (-map)", _conf("map"), True),
    ("engine (--engine)", _meta("engine"), True),
    ("MPI environment variables", mpi_env_settings, True),
    ("family", lambda d: _recorded((d.get("family") or {}).get("name")), False),
    ("family options", _conf("params"), False),
    ("check mode (-check)", _conf("check"), False),
    ("repeated samples (--samples)", _conf("samples"), False),
)


def _differences(
    old_doc: dict, new_doc: dict, hard: bool | None
) -> list[tuple[str, object, object]]:
    out = []
    for label, get, is_hard in DIFFERENCES:
        if hard is not None and is_hard != hard:
            continue
        a, b = get(old_doc), get(new_doc)
        if a is not ABSENT and b is not ABSENT and a != b:
            if isinstance(a, dict) and isinstance(b, dict):
                keys = sorted(k for k in {*a, *b} if a.get(k) != b.get(k))
                a, b = ({k: d.get(k, "(unset)") for k in keys} for d in (a, b))
            out.append((label, a, b))
    return out


def incomparable(old_doc: dict, new_doc: dict) -> list[str]:
    """Why the two runs cannot be compared row by row (empty: they can). A value that
    one file does not record (an imported log's) is not held against it."""
    return [
        f"{label} differs: old {_short(a)}, new {_short(b)}"
        for label, a, b in _differences(old_doc, new_doc, True)
    ]


def context_notes(old_doc: dict, new_doc: dict, hard: bool | None = None) -> list[str]:
    """What differs between the two runs beyond the rows: said before the ratios
    (every difference by default, the incomparable ones too; hard=False: only the others)."""
    return [
        f"# note: {label} differs: old {_short(a)}, new {_short(b)}; ratios include that difference"
        for label, a, b in _differences(old_doc, new_doc, hard)
    ]


def _short(v: object) -> str:
    s = "none" if v is None else str(v)
    return s if len(s) <= 120 else s[:117] + "..."
