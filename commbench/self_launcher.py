"""Starting commbench under mpiexec when it is run outside an MPI job.

`commbench run -n 4 …` execs `<mpiexec> -n 4 <python> -m commbench run …`
with the mpiexec that belongs to mpi4py's MPI (the mpich wheel's, beside the
Python executable), or the one given by --mpiexec. Inside a job started by
mpiexec or srun nothing is launched.

The launcher outlives the job: it passes Ctrl-C and SIGTERM on to mpiexec
(which forwards them to every rank, where the watchdog finishes the results
file), waits for the job to end, and when the job ended badly before rank 0
could say why (a rank killed, the whole job killed) it marks the results file
interrupted itself, keeping every record.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time

from commbench import launch_token, mpilib, process_origin
from commbench.watchdog_report import say

# Variables that process managers set in every process they start.
JOB_VARIABLES = (
    "PMI_RANK",
    "PMI_SIZE",
    "PMIX_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "MPI_LOCALNRANKS",
    "HYDRA_CONTROL_FD",
    "PMI_FD",
    "SLURM_STEP_ID",
)


def in_mpi_job() -> bool:
    return any(v in os.environ for v in JOB_VARIABLES)


def find_mpiexec(given: str | None = None) -> str | None:
    """--mpiexec's path; else the mpiexec of the library mpi4py loads (mpilib)."""
    return choose_mpiexec(given)[0]


def choose_mpiexec(
    given: str | None = None, lib: mpilib.Library | None = None
) -> tuple[str | None, str | None]:
    """(the mpiexec to start the job with, a note when it may not be the library's).

    --mpiexec wins; else the mpiexec of lib's family (Hydra for MPICH and Intel MPI,
    PRRTE for Open MPI) found beside the library, under a distribution's name for it
    (mpiexec.mpich), beside Python, then on PATH."""
    if given:
        return mpilib.given_tool(given), None
    return mpilib.matching_mpiexec(lib, mpilib.python_dirs())


def split_launch_options(argv: list[str]) -> tuple[list[tuple[str, str | None]], list[str]]:
    """(-n N / --np N / --mpiexec P as given, in order: (name, value; None where the name is
    argv's last word), argv without them: what the job itself runs, not launching again)."""
    given: list[tuple[str, str | None]] = []
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        name, eq, value = a.partition("=")
        if a in ("-n", "--np", "--mpiexec"):
            given.append((a, argv[i + 1] if i + 1 < len(argv) else None))
            i += 2
            continue
        if eq and name in ("--np", "--mpiexec"):
            given.append((name, value))
            i += 1
            continue
        out.append(a)
        i += 1
    return given, out


def _mpiexec_for(given: str | None, lib: mpilib.Library | None) -> str | None:
    """The mpiexec to start the job with, or None after saying why there is none."""
    mpiexec, mismatch = choose_mpiexec(given, lib)
    if mpiexec is None or (mismatch and mpilib.launcher_family(mpiexec)[0] != "other"):
        if given:
            what = f"--mpiexec {given!r} not found"
        else:
            what = mismatch or "no mpiexec found beside the MPI library, beside Python or on PATH"
        hint = (
            ""
            if mismatch
            else " (install the mpich wheel: pip install mpich, or pass --mpiexec PATH)"
        )
        say(f"{what}{hint}")
        return None
    if given and lib is not None:
        fam = mpilib.launcher_family(mpiexec)
        if fam[0] != "other" and fam[0] != mpilib.family_of(lib):
            say(
                f"warning: mpi4py runs on {lib.describe()}, but --mpiexec "
                f"{mpiexec} is {fam[1]!r}'s: the processes may not meet in one world"
            )
    return mpiexec


def settings(
    lib: mpilib.Library | None, mpiexec: str, np_: int, env, family: str | None = None
) -> tuple[list, str]:
    """(what this run gets on lib, the note to print); lib None (mpi4py could not be asked):
    judged by the launcher's family. family: the benchmark family the run resolved."""
    if lib is None and mpilib.launcher_family(mpiexec)[0] == "openmpi":
        lib = mpilib.Library(None, "Open MPI v?, (told by its mpiexec)")
    cores = os.cpu_count() or 1
    over, note = mpilib.oversubscribed(lib, np_, cores, env)
    mt = _intel_mt(lib, family, np_, cores, env)
    if mt:  # the note said that commbench sets nothing for Intel MPI
        note = (
            f"{np_} processes on {cores} cores, oversubscribed: commbench sets {mt[0].name}="
            f"{mt[0].value} for {lib.name}: {mt[0].why} (oversubscribed timings are not "
            "representative)"
        )
    return over + mpilib.open_mpi_settings(lib, env) + mt, note


INTEL_COLL = "I_MPI_COLL_INTRANODE"


def _intel_mt(lib, family: str | None, np_: int, cores: int, env) -> list:
    """Intel MPI 2021 (2021.18 here), oversubscribed: two threads of a rank in MPI_Reduce at
    once, each on its own communicator (the mt family's ReduceMT), hang in its shared-memory
    collectives at 3 and 4 processes on 2 cores (repro/impi_mt_reduce.c shows it without
    commbench); its point-to-point based ones complete. Unless the user chose."""
    if family != "mt" or lib is None or lib.flavour != "intel" or np_ <= cores or INTEL_COLL in env:
        return []
    why = (
        "Intel MPI's shared-memory collectives hang when threads of an oversubscribed rank run "
        "collectives on their own communicators at once (repro/impi_mt_reduce.c)"
    )
    return [mpilib.Setting(INTEL_COLL, "pt2pt", why)]


def command(
    mpiexec: str,
    np_: int,
    subcommand: str,
    argv: list[str],
    lib: mpilib.Library | None = None,
    family: str | None = None,
) -> tuple[list[str], dict]:
    env = dict(os.environ)
    cmd = [mpiexec, "-n", str(np_)]
    applied, note = settings(lib, mpiexec, np_, env, family)
    for s in applied:
        if s.name.startswith("-"):
            cmd.append(s.name)
        else:
            env[s.name] = s.value
    if applied:  # the ranks record what the launcher set and why (metadata: launch_settings)
        process_origin.add_settings(env, [(s.name, s.value, s.why) for s in applied])
    if note:
        say(note)
    env.pop(process_origin.TERMINAL, None)
    terminal = process_origin.terminal_value()
    if terminal and "--no-progress" not in argv:  # rank 0 draws its progress line there
        env[process_origin.TERMINAL] = terminal
    cmd += [sys.executable, "-m", "commbench", subcommand, *split_launch_options(argv)[1]]
    return cmd, env


STOP_GRACE = 20.0  # seconds the job gets to finish its files after a forwarded signal


# mpiexec said 1 (what MPI_Abort(1) and fatal MPI errors give) but rank 0 never finished
ABORTED = 4


def exit_meaning(rc: int) -> str:
    """What mpiexec's exit status says about how the job ended."""
    if rc < 0:
        return f"mpiexec was killed by signal {-rc}"
    known = {
        124: "the watchdog ended it (--timeout)",
        130: "interrupted (SIGINT, Ctrl-C)",
        143: "terminated (SIGTERM)",
        137: "a process was killed (SIGKILL, e.g. the OOM killer)",
        9: "a process was killed (signal 9, SIGKILL: kill -9 or the OOM killer)",
        11: "a process crashed (signal 11, SIGSEGV)",
        6: "a process aborted (signal 6, SIGABRT)",
        3: "a process reported an internal or MPI error",
        ABORTED: (
            "the job was aborted (MPI_Abort, or an MPI library's fatal error) before rank 0 "
            "wrote its summary"
        ),
    }
    return known.get(
        rc,
        "a process ended badly (Hydra reports a signal's number, e.g. 9 for SIGKILL; "
        "other launchers 128 + signal)",
    )


# how long ranks on this host may take through MPI_Init (COMMBENCH_STARTUP_TIMEOUT)
STARTUP_S = 120.0


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when pid ends (Linux 5.3+), else None."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _ended(proc: subprocess.Popen, pidfd: int | None, secs: float) -> int | None:
    """proc's exit status if it ends within secs, else None. With a pidfd the launcher wakes
    when mpiexec ends; Popen.wait(timeout) polls with sleeps of up to 50 ms, which every run
    paid at its end (issue 50: start-up)."""
    if pidfd is None:
        try:
            return proc.wait(timeout=secs)
        except subprocess.TimeoutExpired:
            return None
    ready, _, _ = select.select([pidfd], [], [], secs)
    return proc.wait() if ready else None


def _wait(proc: subprocess.Popen, token: str | None = None) -> tuple[int, str | None]:
    """Wait for mpiexec; pass Ctrl-C / SIGTERM on once and give the job time to finish its
    files; end a job whose ranks never get through MPI_Init (a peer that cannot be reached)."""
    caught: list[int] = []
    old = signal.signal(signal.SIGTERM, lambda signo, frame: caught.append(signo))
    forwarded = None
    deadline = None
    started = time.monotonic()
    limit = float(os.environ.get("COMMBENCH_STARTUP_TIMEOUT") or STARTUP_S)
    stuck = False
    pidfd = _pidfd(proc.pid)
    try:
        while True:
            try:
                rc = _ended(proc, pidfd, 0.2)
                if rc is not None:
                    break
            except KeyboardInterrupt:
                caught.append(signal.SIGINT)
            if caught and forwarded is None:
                # mpiexec runs in its own session, so a terminal's Ctrl-C reaches only
                # us: forward it exactly once (a second SIGINT makes Hydra abort at
                # once, before rank 0 has written its files).
                forwarded = caught[0]
                if proc.poll() is None:
                    proc.send_signal(forwarded)
                deadline = time.monotonic() + STOP_GRACE
            if deadline is not None and time.monotonic() > deadline:
                proc.kill()
                deadline = None
            late = time.monotonic() - started >= limit
            if not stuck and forwarded is None and late and launch_token.stuck_in_init(token):
                stuck = True
                say(
                    f"the MPI job did not get through MPI_Init in {limit:g} s (a "
                    "process that cannot reach a peer: a down interface, a firewall, a wrong "
                    "netmod?); ending it (COMMBENCH_STARTUP_TIMEOUT sets the limit)"
                )
                _end_group(proc)
    finally:
        signal.signal(signal.SIGTERM, old)
        if pidfd is not None:
            os.close(pidfd)
    if stuck:
        return 3, None
    why = None
    if forwarded is not None:
        why = {
            signal.SIGINT: "interrupted by SIGINT (Ctrl-C) at the launcher",
            signal.SIGTERM: "terminated by SIGTERM at the launcher",
        }[forwarded]
    return rc, why


def _unfinished(output: str) -> bool:
    """The results file is not a finished run's: missing, unreadable (even where salvage
    could recover its records), or still saying what it says while the run goes on."""
    from commbench.views import results_file

    try:
        doc = results_file.load(output)
    except (OSError, ValueError):  # a finished run always leaves a whole file
        return True
    return bool((doc.get("summary") or {}).get("provisional"))


def _ended_by_watchdog(output: str) -> bool:
    from commbench.views import results_file

    try:
        reason = results_file.load(output).get("summary", {}).get("interrupted") or ""
    except ValueError:
        return False
    return reason.startswith("watchdog:")


def _end_group(proc: subprocess.Popen) -> None:
    """mpiexec's process group (its own session): SIGTERM, which Hydra passes on to the
    ranks, then SIGKILL; then the MPI segments the ranks had mapped (a rank stuck in
    MPI_Init cannot remove them)."""
    from commbench import cleanup

    segments = cleanup.job_segments(proc.pid)
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except OSError:
            break
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    cleanup.unlink_all(segments)


def _tied_to(parent: int):
    """preexec_fn of mpiexec: SIGTERM to it when this launcher dies, even by SIGKILL
    (Linux PR_SET_PDEATHSIG), so the job ends the way a cancelled job does (every
    rank finishes its files) instead of running on orphaned. Elsewhere: nothing."""

    def tie() -> None:
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            return
        if os.getppid() != parent:  # the launcher died before the tie was made
            os.kill(os.getpid(), signal.SIGTERM)

    return tie


def _release(path: str | None) -> None:
    """A default name reserved for the job (created empty) that the job never wrote."""
    if path and os.path.exists(path) and os.path.getsize(path) == 0:
        os.unlink(path)


def launch(
    mpiexec_given: str | None,
    np_: int,
    subcommand: str,
    argv: list[str],
    output: str | None = None,
    reserved: bool = False,
    family: str | None = None,
) -> int:
    """reserved: output is a default name the caller created empty (outputs.default_output);
    family: what the caller's parse of argv resolved (the ranks then load no other). output
    None: the caller parsed nothing, and the job's rank 0 tells its results file (thin)."""
    path = output if output and output != "-" else None  # the results file, if any
    lib = mpilib.of_python(sys.executable)  # the library the ranks' mpi4py will load
    return _launch(lib, mpiexec_given, np_, subcommand, argv, path, reserved, family)


def thin(argv: list[str], np_: int, mpiexec_given: str | None) -> int | None:
    """`commbench run -n N …` without the launcher's own parse (~0.06 s before mpiexec,
    issue 50): the job's rank 0 parses, as under any other launcher, and tells its results
    file (launch_token). For a command line whose run needs nothing of the launcher beyond
    starting it (commands.run decides). None: the launch settings depend on the run's family
    (Intel MPI, oversubscribed: _intel_mt), so the caller parses and calls launch."""
    lib = mpilib.of_python(sys.executable)
    if lib is not None and lib.flavour == "intel" and np_ > (os.cpu_count() or 1):
        return None
    return _launch(lib, mpiexec_given, np_, "run", argv, None, False, None)


def _launch(lib, mpiexec_given, np_, subcommand, argv, path, reserved, family) -> int:
    mpiexec = _mpiexec_for(mpiexec_given, lib)
    if mpiexec is None:
        _release(path if reserved else None)
        return 2
    cmd, env = command(mpiexec, np_, subcommand, argv, lib, family)
    if path:
        env["COMMBENCH_DEFAULT_OUTPUT"] = path
    if family:
        env[process_origin.FAMILY_HINT] = family
    token = launch_token.create()
    # every rank on this host marks it: the job really ran commbench; set even when no token
    # file could be made: the ranks know commbench's launcher started them (started_here)
    env[launch_token.TOKEN_VAR] = token or ""
    sys.stdout.flush()
    try:
        # Own session: terminal signals come to us only, and we forward them once.
        # No stdin: a rank never reads it, and Hydra would otherwise poll the terminal.
        proc = subprocess.Popen(
            cmd,
            env=env,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_tied_to(os.getpid()) if sys.platform.startswith("linux") else None,
        )
    except OSError as e:
        launch_token.consume(token)  # removes it
        _release(path if reserved else None)
        say(f"cannot start {mpiexec}: {e.strerror}")
        return 2
    rc, why = _wait(proc, token)
    started, told = launch_token.consume(token)
    if told is not None and path is None and not reserved:  # rank 0 parsed: its file
        path, reserved = told
    _release(path if reserved else None)
    return _status(mpiexec, rc, why, started, path)


def _status(mpiexec: str, rc: int, why: str | None, started: bool | None, path: str | None) -> int:
    """The launcher's exit status from mpiexec's (rc), the signal that ended the job (why),
    whether a rank started commbench and the results file; a results file of a job that
    ended early is marked so (complete: false, the reason)."""
    if rc in (0, 1) and why is None and started is False and not (path and os.path.exists(path)):
        say(
            f"{mpiexec} ended with status {rc} without running commbench: no process "
            "started it and no results were written (is it an mpiexec? accepted: --mpiexec <path "
            "of an mpiexec>)"
        )
        return 3
    if why is not None and rc in (0, 1):  # prterun answers a forwarded signal with status 1
        rc = 130 if "SIGINT" in why else 143
    # 1 is the check failures' status only from a finished run
    if rc == 1 and path and _unfinished(path):
        rc = ABORTED
    if rc not in (0, 1, 2) and path and os.path.exists(path):
        from commbench.views import results_file

        if _ended_by_watchdog(path):
            # Hydra reports the status of whichever process it saw end (124 from rank 0,
            # or 9 from a rank it killed afterwards): the watchdog's is the job's.
            rc = 124
        reason = why or (
            (
                "the MPI job was aborted (mpiexec's status 1 from an unfinished run: MPI_Abort, "
                "or an MPI library's fatal error) before rank 0 wrote its summary; commbench's "
                "status 4"
            )
            if rc == ABORTED
            else f"the MPI job ended with status {rc}: {exit_meaning(rc)}"
        )
        if results_file.mark_interrupted(path, reason):  # else rank 0 said where its results are
            say(f"{reason}; results so far (complete: false) are in {path}")
        elif why is not None:
            say(why)
    elif why is not None:
        say(why)
    return rc if rc >= 0 else 128 - rc
