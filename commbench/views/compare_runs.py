"""What differs between the two runs of `commbench compare` beyond their rows (no MPI).

DIFFERENCES reads each setting from the results files (metadata and config): an
incomparable difference (another library, another way of timing, other buffers) makes
`commbench compare` refuse (commbench.views.compare_gate); the others are notes said
before the ratios. A value one file does not record (an imported log's) is not held
against it.

`--across mpi` (commbench.views.compare_mpis) turns it around: the factors that go with
the MPI library (WITH_THE_MPI) may differ, and everything else that changes the numbers
must agree, ACROSS_ALSO and the settings in STRICT_ACROSS included.
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


def _methodology(d: dict):
    """A run's methodology knobs; a file written before a knob existed ran its old way,
    imb4's (imb_methodology.Methodology.from_dict fills it in)."""
    given = _conf("methodology")(d)
    return methodology_knobs(given) if isinstance(given, dict) else given


def methodology_knobs(given: dict) -> dict:
    """Every knob of a recorded methodology, those it predates at their old value."""
    from commbench import imb_methodology

    try:
        return imb_methodology.Methodology.from_dict(given).as_dict()
    except TypeError:  # a knob this version does not know: compared as written
        return given


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
    ("methodology (--methodology)", _methodology, True),
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


# What goes with the MPI library: `--across mpi` lets these differ (and the launcher, which
# no other comparison reads).
WITH_THE_MPI = ("MPI library", "MPI standard version", "MPI environment variables")
# Said before the rows of an ordinary comparison, refused across MPIs: they change what a
# row measures, so a ratio across them would mix that change with the library's.
STRICT_ACROSS = ("family", "family options", "check mode (-check)")


def _hosts(d: dict):
    hosts = (d.get("metadata") or {}).get("hosts")
    return sorted(map(str, hosts)) if isinstance(hosts, list) and hosts else ABSENT


def _repetitions(d: dict):
    keys = ("msgspersample", "overall_vol", "msgs_nonaggr", "iter_policy", "secs")
    conf = d.get("config") or {}
    return {k: conf.get(k) for k in keys} if _ran(d) and any(k in conf for k in keys) else ABSENT


# Refused across MPIs only: an ordinary comparison (a CI gate on two machines of one kind)
# may run on other hosts; two MPIs compared on other hosts compare the hosts too.
ACROSS_ALSO = (
    ("hosts", _hosts, True),
    ("repetitions (-iter, -iter_policy, -time)", _repetitions, True),
)


def _table(across: str | None) -> tuple:
    if across is None:
        return DIFFERENCES
    return (
        tuple(
            (label, get, hard or label in STRICT_ACROSS)
            for label, get, hard in DIFFERENCES
            if label not in WITH_THE_MPI
        )
        + ACROSS_ALSO
    )


def _differences(
    old_doc: dict, new_doc: dict, hard: bool | None, across: str | None = None
) -> list[tuple[str, object, object]]:
    out = []
    for label, get, is_hard in _table(across):
        if hard is not None and is_hard != hard:
            continue
        a, b = get(old_doc), get(new_doc)
        if a is not ABSENT and b is not ABSENT and a != b:
            if isinstance(a, dict) and isinstance(b, dict):
                keys = sorted(k for k in {*a, *b} if a.get(k) != b.get(k))
                a, b = ({k: d.get(k, "(unset)") for k in keys} for d in (a, b))
            out.append((label, a, b))
    return out


def incomparable(
    old_doc: dict,
    new_doc: dict,
    names: tuple[str, str] = ("old", "new"),
    across: str | None = None,
) -> list[str]:
    """Why the two runs cannot be compared row by row (empty: they can). A value that
    one file does not record (an imported log's) is not held against it. across="mpi":
    what differs beyond the MPI library (and what goes with it)."""
    return [
        f"{label} differs: {names[0]} {_short(a)}, {names[1]} {_short(b)}"
        for label, a, b in _differences(old_doc, new_doc, True, across)
    ]


def context_notes(
    old_doc: dict,
    new_doc: dict,
    hard: bool | None = None,
    names: tuple[str, str] = ("old", "new"),
    across: str | None = None,
) -> list[str]:
    """What differs between the two runs beyond the rows: said before the ratios
    (every difference by default, the incomparable ones too; hard=False: only the others)."""
    return [
        f"# note: {label} differs: {names[0]} {_short(a)}, {names[1]} {_short(b)}; "
        "ratios include that difference"
        for label, a, b in _differences(old_doc, new_doc, hard, across)
    ]


def agreeing(old_doc: dict, new_doc: dict, across: str | None = None) -> list[str]:
    """The settings that change the numbers and that both files record alike."""
    return [
        label
        for label, get, hard in _table(across)
        if hard and get(old_doc) is not ABSENT and get(old_doc) == get(new_doc)
    ]


def _short(v: object) -> str:
    s = "none" if v is None else str(v)
    return s if len(s) <= 120 else s[:117] + "..."
