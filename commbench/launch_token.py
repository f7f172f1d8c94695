"""The launch token: how commbench's launcher and the ranks of its job on the same host talk.

The launcher makes an empty file and names it in the job's environment (COMMBENCH_LAUNCH_TOKEN).
Every rank on the launcher's host appends 'r' when it starts and 'i' once through MPI_Init:
the launcher tells a job that never ran commbench, or never got through MPI_Init, from one
that did. The job's rank 0, once it has parsed the command line, writes the results file it
writes in a second file beside the token (`<token>.output`): the launcher then parses nothing
itself, and still finishes that file when the job ends before rank 0 could (issue 50:
start-up). Ranks on other hosts do not see the token (it is in the launcher's temporary
directory): there the launcher learns no results file, and a file of a job that ended badly
keeps what rank 0 wrote (complete: false, provisional) without the launcher's reason. A
launcher killed with SIGKILL cannot remove its token: the ranks that end after it do.
"""

from __future__ import annotations

import os

TOKEN_VAR = "COMMBENCH_LAUNCH_TOKEN"
OUTPUT_SUFFIX = ".output"
DEFAULT, GIVEN = "d", "o"  # the results file is a default name rank 0 reserved, or -o's


def create() -> str | None:
    """The launcher: a new token file (only its user may read it), None when none can be made.
    Made as tempfile.mkstemp makes one, without loading tempfile (with shutil and random,
    ~4 ms of every launch: issue 50, start-up)."""
    folder = next((os.environ[v] for v in ("TMPDIR", "TEMP", "TMP") if os.environ.get(v)), "/tmp")
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        path = os.path.join(folder, f"commbench-launch-{os.getpid()}-{os.urandom(6).hex()}")
        try:
            os.close(os.open(path, flags, 0o600))
            return path
        except FileExistsError:
            continue
        except OSError:
            return None
    return None


def started_here() -> bool:
    """Was this rank started by commbench's launcher (which, not the rank, then stores the
    results file with --store, and has already refused a --store it cannot keep)?"""
    return TOKEN_VAR in os.environ


def _mine() -> str | None:
    """The token of this rank's launcher, when it is on this host."""
    token = os.environ.get(TOKEN_VAR)
    return token if token and os.path.exists(token) else None


def mark(what: str = "r") -> None:
    """A rank started by the launcher: 'r' at start, 'i' once through MPI_Init."""
    token = _mine()
    if token:
        try:
            with open(token, "a") as f:
                f.write(what)
        except OSError:
            pass


def tell_output(path: str | None, reserved: bool) -> None:
    """The job's rank 0: its results file (None or "-": none), for its launcher."""
    token = _mine()
    if not token:
        return
    what = DEFAULT if reserved else GIVEN
    where = "" if path in (None, "-") else os.path.abspath(path)
    try:
        with open(token + OUTPUT_SUFFIX, "w") as f:
            f.write(what + where)
    except OSError:
        pass


def _launcher_gone(token: str) -> bool:
    """Has the launcher that made token (its pid is in the name) ended? A zombie (ended, its
    parent not yet told) has."""
    try:
        pid = int(os.path.basename(token).split("-")[2])
    except (ValueError, IndexError):
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True
    except (OSError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def orphaned(why: str = "") -> None:
    """A rank ending (watchdog.at_exit): where the launcher is gone (killed: mpiexec then ends
    the job), nobody else removes the token and rank 0's note beside it; remove them."""
    token = _mine()
    if token and _launcher_gone(token):
        for path in (token + OUTPUT_SUFFIX, token):
            try:
                os.unlink(path)
            except OSError:
                pass


def stuck_in_init(token: str | None) -> bool:
    """A rank of this host started (token 'r') but none got through MPI_Init ('i')."""
    if not token:
        return False
    try:
        with open(token) as f:
            marks = f.read()
    except OSError:
        return False
    return "r" in marks and "i" not in marks


def consume(token: str | None) -> tuple[bool | None, tuple[str | None, bool] | None]:
    """The launcher, after the job: (did a rank of the job mark the token, None: no token to
    tell; what rank 0 said of its results file, None: nothing, else (its path, None for none
    (-o -); whether it is a default name rank 0 reserved, created empty)). Removes both."""
    if not token:
        return None, None
    told = None
    try:
        with open(token + OUTPUT_SUFFIX) as f:
            text = f.read()
        os.unlink(token + OUTPUT_SUFFIX)
        if text[:1] in (DEFAULT, GIVEN):
            told = (text[1:] or None, text[:1] == DEFAULT)
    except OSError:
        pass
    try:
        return os.path.getsize(token) > 0, told
    except OSError:
        return None, told
    finally:
        try:
            os.unlink(token)
        except OSError:
            pass
