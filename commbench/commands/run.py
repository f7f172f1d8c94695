"""`commbench run` (and `commbench overhead`, the same with --suite overhead): outside an MPI
job it parses, starts mpiexec and stores the finished results file when --store asks; inside
one it is a rank of the job (commbench.mpi_job)."""

from __future__ import annotations

import os
import sys
import time

from commbench.commands.errors import err as _err


def _outside_job(argv: list[str]) -> bool:
    """-n N (mpiexec to start) or -h (the usage to print), and not a rank of an MPI job."""
    asks = ("-n", "--np", "-h", "-help", "--help")
    if not any(a in asks or a.startswith("--np=") for a in argv):
        return False  # a rank's usual argv: the launcher leaves -n out (no launcher's imports)
    from commbench.self_launcher import in_mpi_job

    return not in_mpi_job()


def mpi4py_rc(initialize: bool, thread_level: str | None = None) -> None:
    import mpi4py

    mpi4py.rc.initialize = initialize
    # IMB's default is plain MPI_Init; mpi4py's own default would ask for MULTIPLE.
    mpi4py.rc.thread_level = thread_level or "single"


# What makes the launcher parse the command line itself before it starts mpiexec: the usage
# to print, and what it does after the job (--store, --expect; --tag and --system go with
# --store) or may read from a file (-load). Otherwise the job's rank 0 parses (thin launch).
LAUNCHER_PARSES = ("-h", "-help", "--help", "--store", "--expect", "--tag", "--system", "-load")


def _thin_launch(argv: list[str], launch_options) -> tuple[int, str | None] | None:
    """(-n's processes, --mpiexec's path) when the launcher may leave the parse to the job's
    rank 0: -n a plain count, no launch option without its value, nothing of LAUNCHER_PARSES
    anywhere (an option's value that looks like one only costs the thin start); else None.
    launch_options: argv's, as self_launcher.split_launch_options gives them."""
    if any(a.partition("=")[0] in LAUNCHER_PARSES for a in argv):
        return None
    np_, mpiexec = None, None
    for name, value in launch_options:
        if value is None:
            return None  # no value: the parse says so
        if name == "--mpiexec":
            mpiexec = value
        elif not value.isdigit() or int(value) < 1:
            return None  # the parse says what is wrong with it
        else:
            np_ = int(value)
    return (np_, mpiexec) if np_ is not None else None


def _launcher(argv: list[str]) -> int:
    """Outside a job: start mpiexec, the parse left to the job's rank 0 where it can be
    (_thin_launch), else parsed here first (or the usage printed)."""
    mpi4py_rc(initialize=False)  # the launcher measures nothing: no catalog loads MPI or numpy
    from commbench import self_launcher

    thin = _thin_launch(argv, self_launcher.split_launch_options(argv)[0])
    rc = self_launcher.thin(argv, *thin) if thin is not None else None
    if rc is not None:
        return rc
    from commbench import run_config, run_options

    try:
        cfg = run_config.parse_run_args(argv)
    except run_config.HelpRequested:
        print(run_options.usage(argv))
        return 0
    except run_config.ConfigError as e:
        return _err(str(e))
    if cfg.np is None:  # "-h" was an option's value: no help asked, and no -n
        return _err(
            "commbench run needs -n N to start processes outside an MPI job (accepted: -n N, "
            "or mpiexec -n N commbench run …)"
        )
    refused = _store_refusal(cfg) or _expect_refusal(cfg)
    if refused:
        return _err(refused)
    output = cfg.output or run_config.default_output(cfg.family)
    rc = self_launcher.launch(
        cfg.mpiexec,
        cfg.np,
        "run",
        argv,
        output=output,
        reserved=cfg.output is None,
        family=cfg.family,
    )
    rc = _stored(rc, output, cfg.store, cfg.system, cfg.tags) if cfg.store else rc
    return _judged(rc, output, cfg.expect) if cfg.expect else rc


def cmd_run(argv: list[str]) -> int:
    if _outside_job(argv):  # start mpiexec (or print the usage)
        return _launcher(argv)
    from commbench import launch_token, process_origin, run_config

    launch_token.mark()
    process_origin.throttle_if_oversubscribed()  # before MPI_Init reads the environment
    if os.environ.get("COMMBENCH_FAULT_INIT_HANG") == os.environ.get("PMI_RANK", "-"):
        # tests: this rank never reaches MPI_Init, so the others wait inside it
        time.sleep(3600)
    mpi4py_rc(initialize=True, thread_level=run_config.scan_thread_level(argv))
    from commbench import watchdog

    # Before MPI starts its own threads: the watchdog thread receives the
    # ending signals even while the main thread is blocked inside MPI.
    watchdog.block_signals()
    from commbench import mpi_job

    if launch_token.started_here():  # the launcher refused a --store it cannot keep, stores it
        return mpi_job.run(argv).status
    # a job started by another launcher (mpiexec, srun): --store refused before measuring, and
    # rank 0 stores the results file it finished
    outcome = mpi_job.run(argv, store_check=lambda c: _store_refusal(c) or _expect_refusal(c))
    cfg, rc = outcome.cfg, outcome.status
    if cfg is None or not outcome.wrote_results:
        return rc
    rc = _stored(rc, cfg.output, cfg.store, cfg.system, cfg.tags) if cfg.store else rc
    return _judged(rc, cfg.output, cfg.expect) if cfg.expect else rc


def _store_refusal(cfg) -> str | None:
    """--store and --tag refused before anything runs (bad store, no results file)."""
    if not cfg.store:  # --system alone names the run's system in its file (the store reads it)
        return "--tag tags the run in a results store: it goes with --store" if cfg.tags else None
    if cfg.output == "-":
        return "--store keeps the run's results file, and -o - (or /dev/null) writes none"
    from commbench.commands import store

    return store.check_location(cfg.store)


def _expect_refusal(cfg) -> str | None:
    """--expect refused before anything runs: no results file to judge, or bad rules."""
    if not cfg.expect:
        return None
    if cfg.output == "-":
        return "--expect judges the run's results file, and -o - (or /dev/null) writes none"
    from commbench.commands import expect

    try:
        expect.rules(cfg.expect)
    except ValueError as e:
        return str(e)
    return None


def _judged(rc: int, output: str | None, rules: str) -> int:
    """The finished run's rows against the expectations (commbench expect): a run that
    passed takes the verdict's exit status."""
    if not output or not os.path.exists(output) or not os.path.getsize(output):
        print("commbench: nothing judged: the run wrote no results file", file=sys.stderr)
        return rc or 2
    from commbench.commands import expect

    got = expect.main([rules, output])
    return rc or got


def _stored(rc: int, output: str | None, store, system: str | None, tags: tuple) -> int:
    """The run's results file added to the store; a run that ended early is stored as
    incomplete (kept, never a baseline); a store that fails makes a passing run's status 2."""
    if not output or output == "-" or not os.path.exists(output) or not os.path.getsize(output):
        print("commbench: nothing stored: the run wrote no results file", file=sys.stderr)
        return rc or 2
    from commbench.commands import store as store_command

    got = store_command.store_run(output, store, system, tags)
    return rc or got


def overhead(argv: list[str]) -> int:
    """`commbench overhead …` = `commbench run --suite overhead …` (seed 002)."""
    return cmd_run(["--suite", "overhead", *argv])
