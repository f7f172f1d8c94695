"""Command line: `commbench run|list|report …` (thin: parsing lives in config, measuring in
harness)."""

from __future__ import annotations

import os
import sys
import time

from commbench import redact

USAGE = """usage: commbench <command> [args]

commands:
  run [options] [benchmarks]   measure (commbench run -h for every option)
  list [family]                every benchmark by family, with a one-line description
  report FILE [--csv OUT]      IMB text (or CSV) rebuilt from a results file
  report --html OUT FILE [FILE ...]   one self-contained HTML page: metadata, tables, plots, comparison
  report --html OUT --trend STORE[:SELECTOR] [FILE ...]   and stored rows over time: bands, flags, changes
  compare OLD NEW [--threshold 10%] [--alpha A] [--json FILE|-] [--gate-unsampled] [--allow-different]
                               regression gate: per-row tests on --samples, exit 1 on a regression
  compare A B --across mpi [--html OUT.html]   which of two MPI libraries is faster, row by row (exit 0/2)
  overhead [options]           F/S/R/A/U/E decomposition and LogGP (= run --suite overhead)
  fit FILE [options]           Hockney (or linear) fit of time against size, with CIs
  plot FILE [FILE ...] -o OUT  time and rate against size with the fits (PNG or SVG)
  import LOG [LOG ...] -o OUT.json [--format imb|osu|nccl|auto]
                               IMB, OSU or nccl-tests output as a results file (docs/import.md)
  schema                       the results file's JSON Schema (docs/schema.md)
  store add|list|show|rm|accept|export|trend   the results store of runs (commbench store -h)
  compare NEW --baseline STORE[:SELECTOR]   NEW against stored runs: the between-run gate

`python -m commbench` is the same program."""  # noqa: E501


def _err(msg: str) -> int:
    print(f"commbench: error: {msg}", file=sys.stderr)
    return 2


def _wants_launch(argv: list[str]) -> bool:
    from commbench.launch import in_mpi_job

    asks = any(a in ("-n", "--np") or a.startswith("--np=") for a in argv)
    return asks and not in_mpi_job()


def _mpi4py_rc(initialize: bool, thread_level: str | None = None) -> None:
    import mpi4py

    mpi4py.rc.initialize = initialize
    # IMB's default is plain MPI_Init; mpi4py's own default would ask for MULTIPLE.
    mpi4py.rc.thread_level = thread_level or "single"


def _helping(argv: list[str]) -> bool:
    from commbench.launch import in_mpi_job

    return any(a in ("-h", "-help", "--help") for a in argv) and not in_mpi_job()


def cmd_run(argv: list[str]) -> int:
    if _wants_launch(argv) or _helping(argv):  # parse, then start mpiexec (or print the usage)
        _mpi4py_rc(initialize=False)
        from commbench import deferred

        deferred.defer("numpy", "mpi4py.MPI")  # the launcher never measures (commbench.deferred)
        from commbench import config, launch, runoptions

        try:
            cfg = config.parse_run_args(argv)
        except config.HelpRequested:
            print(runoptions.usage(argv))
            return 0
        except config.ConfigError as e:
            return _err(str(e))
        if cfg.np is None:  # "-h" was an option's value: no help asked, and no -n
            return _err(
                "commbench run needs -n N to start processes outside an MPI job (accepted: -n N, "
                "or mpiexec -n N commbench run …)"
            )
        refused = _store_refusal(cfg)
        if refused:
            return _err(refused)
        output = cfg.output or config.default_output(cfg.family)
        if cfg.store:
            from commbench import jobenv

            os.environ[jobenv.STORE_BY_LAUNCHER] = "1"  # the launcher stores it, not rank 0
        rc = launch.launch(
            cfg.mpiexec,
            cfg.np,
            "run",
            argv,
            output=output,
            reserved=cfg.output is None,
            family=cfg.family,
        )
        return _stored(rc, output, cfg.store, cfg.system, cfg.tags) if cfg.store else rc
    from commbench import config, jobenv
    from commbench.launch import mark_started

    mark_started()
    jobenv.throttle_if_oversubscribed()  # before MPI_Init reads the environment
    if os.environ.get("COMMBENCH_FAULT_INIT_HANG") == os.environ.get("PMI_RANK", "-"):
        # tests: this rank never reaches MPI_Init, so the others wait inside it
        time.sleep(3600)
    _mpi4py_rc(initialize=True, thread_level=config.scan_thread_level(argv))
    from commbench import watchdog

    # Before MPI starts its own threads: the watchdog thread receives the
    # ending signals even while the main thread is blocked inside MPI.
    watchdog.block_signals()
    from commbench import job

    rc = job.run(argv, store_check=_store_refusal)  # under mpiexec too, before measuring
    for request in job.STORE_REQUEST:  # rank 0 of a job not started by commbench's launcher
        rc = _stored(rc, *request)
    return rc


def _store_refusal(cfg) -> str | None:
    """--store and --tag refused before anything runs (bad store, no results file)."""
    if not cfg.store:  # --system alone names the run's system in its file (the store reads it)
        return "--tag tags the run in a results store: it goes with --store" if cfg.tags else None
    if cfg.output == "-":
        return "--store keeps the run's results file, and -o - (or /dev/null) writes none"
    from commbench.store import cmd

    return cmd.check_location(cfg.store)


def _stored(rc: int, output: str | None, store, system: str | None, tags: tuple) -> int:
    """The run's results file added to the store; a run that ended early is stored as
    incomplete (kept, never a baseline); a store that fails makes a passing run's status 2."""
    if not output or output == "-" or not os.path.exists(output) or not os.path.getsize(output):
        print("commbench: nothing stored: the run wrote no results file", file=sys.stderr)
        return rc or 2
    from commbench.store import cmd

    got = cmd.store_run(output, store, system, tags)
    return rc or got


def option_table() -> list[str]:
    """Which general option applies to which family (docs/options.md; commbench list --options),
    generated from the declarations the refusals come from (commbench.suites.uses)."""
    from commbench import runoptions, suites
    from commbench.suites import uses

    return uses.table(runoptions.OPTIONS, runoptions.RUN_LEVEL, suites.families())


def cmd_list(argv: list[str]) -> int:
    _mpi4py_rc(initialize=False)
    from commbench import suites

    names = suites.family_names()
    if argv == ["--options"]:  # which general option applies to which family (docs/options.md)
        print("\n".join(option_table()))
        return 0
    if argv:
        fam = suites.canonical_family(argv[0])
        if fam is None:
            return _err(f"unknown family {argv[0]!r} (accepted: {'|'.join(names)})")
        names = [fam]
    for n in names:
        fam = suites.family(n)
        print(f"{fam.name} ({fam.title}): {fam.description}")
        for b in fam.benchmarks:
            flag = (
                ""
                if b.default
                else (
                    " [default with --methodology imb2021]"
                    if getattr(b, "default_in", ())
                    else " [by name or -include]"
                )
            )
            print(f"  {b.name:<26} {b.description}{flag}")
        print()
    return 0


def cmd_report(argv: list[str]) -> int:
    from commbench.views import csv_export, results_file

    if any(a in ("--html", "--trend") or a.startswith("--trend=") for a in argv):
        # one self-contained page of runs (views.html_report); a store's trend read here
        from commbench.views import html_report

        try:
            out, paths, where = html_report.options(argv)
            data = None
            if where is not None:  # the store is above the views: they get plain data
                from commbench.store import location, selector, trend
                from commbench.store.db import Store, StoreError

                try:
                    store_text, sel_text = location.split(where)
                    sel = selector.parse(sel_text)
                    with Store.open(store_text) as store:
                        data = trend.compute(store, sel)
                except (StoreError, ValueError) as e:
                    raise ValueError(f"--trend {where}: {e}") from None
            html_report.write(out, paths, data)
        except ValueError as e:
            return _err(str(e))
        said = [f"{len(paths)} results file{'s' if len(paths) != 1 else ''}"] if paths else []
        said += [f"the trend of {len(data['runs'])} stored runs"] if data else []
        print(f"commbench: report of {' and '.join(said)} written to {out}", file=sys.stderr)
        return 0
    try:
        path, out = _report_arguments(argv)
        doc, recs = results_file.read(path)
    except ValueError as e:
        return _err(str(e))
    if out is not None:
        try:
            csv_export.write(
                sys.stdout if out == "-" else out, recs, doc["config"].get("mb_unit", 10**6)
            )
        except OSError as e:
            return _err(
                f"--csv {out!r}: cannot write ({e.strerror}) "
                "(accepted: --csv <file in a writable directory>)"
            )
        if out != "-":
            print(f"commbench: {len(recs)} records written to {out}", file=sys.stderr)
        return 0
    from commbench.views.report_text import replay

    try:
        replay(doc, recs, sys.stdout)  # the run's text again, as the run's views printed it
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as e:
        # a file that passes the schema (open where families add their own keys) but lacks or
        # mistypes what its family's text needs: the file's problem, said as such
        what = f"it has no {e.args[0]!r}" if isinstance(e, KeyError) else f"{type(e).__name__}: {e}"
        return _err(
            f"{path}: cannot print the text of this {doc['config'].get('family')} run: {what}, "
            "which the text needs (was the file edited? `commbench schema` prints the format)"
        )
    return 0


REPORT_USAGE = (
    "commbench report FILE [--csv OUT|-], or commbench report --html OUT.html FILE [FILE ...], "
    "or commbench report --html OUT.html --trend STORE[:SELECTOR] [FILE ...]"
)


def _report_arguments(argv: list[str]) -> tuple[str, str | None]:
    """(results file, --csv's OUT or None) in any order; --csv alone or --csv - is stdout."""
    paths, out, i = [], None, 0
    while i < len(argv):
        a = argv[i]
        if a == "--csv" or a.startswith("--csv="):
            if a != "--csv":
                out = a.partition("=")[2] or "-"
            elif i + 1 < len(argv) and (argv[i + 1] == "-" or not argv[i + 1].startswith("-")):
                out, i = argv[i + 1], i + 1
            else:
                out = "-"
        elif a.startswith("-") and a != "-":
            raise ValueError(f"report takes no option {a!r} (accepted: {REPORT_USAGE})")
        else:
            paths.append(a)
        i += 1
    if len(paths) != 1:
        raise ValueError(
            f"report needs one results file, got {len(paths)}"
            + (" (did --csv take the results file as its OUT?)" if out and not paths else "")
            + f" (accepted: {REPORT_USAGE})"
        )
    return paths[0], out


def cmd_compare(argv: list[str]) -> int:
    """Exit 0 (no regression), 1 (a regression), 2 (bad input, incomparable runs):
    views.compare_gate."""
    if any(a == "--baseline" or a.startswith("--baseline=") for a in argv) and not any(
        a in ("-h", "--help") for a in argv
    ):  # NEW against the runs of a results store
        from commbench.store import gate

        return gate.run(argv)
    from commbench.views import compare_gate

    return compare_gate.run(argv)


def cmd_store(argv: list[str]) -> int:
    from commbench.store import cmd

    return cmd.main(argv)


def cmd_overhead(argv: list[str]) -> int:
    """`commbench overhead …` = `commbench run --suite overhead …` (seed 002)."""
    return cmd_run(["--suite", "overhead", *argv])


def _fitcmd():
    from commbench import fitcmd  # the models and matplotlib load only for these commands

    return fitcmd


def _importer():
    from commbench.importers import command  # other tools' logs: only this command reads them

    return command


def _schema(argv: list[str]) -> int:
    from commbench import schema

    if argv:
        return _err(
            f"schema takes no arguments, got {' '.join(argv)!r} (accepted: commbench schema)"
        )
    print(schema.text(), end="")
    return 0


SUBCOMMANDS = {
    "run": cmd_run,
    "list": cmd_list,
    "report": cmd_report,
    "compare": cmd_compare,
    "overhead": cmd_overhead,
    "fit": lambda argv: _fitcmd().cmd_fit(argv),
    "plot": lambda argv: _fitcmd().cmd_plot(argv),
    "import": lambda argv: _importer().main(argv),
    "schema": lambda argv: _schema(argv),
    "store": cmd_store,
}


def _single_threaded_blas() -> None:
    """One BLAS thread per rank: a benchmark process must not spawn compute threads
    that fight the other ranks for cores (the CPU-exploit kernel uses numpy.dot).
    Set before numpy is first imported; a user's explicit setting wins."""
    if (
        "OMP_NUM_THREADS" not in os.environ
    ):  # the mt family's thread count then falls back to the CPUs
        os.environ["COMMBENCH_OMP_DEFAULTED"] = "1"
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")


def main(argv: list[str] | None = None) -> int:
    _single_threaded_blas()
    redact.mask_streams()  # no password of a store URL on any line commbench writes
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if argv else 2
    cmd = SUBCOMMANDS.get(argv[0])
    if cmd is None:
        return _err(f"unknown command {argv[0]!r} (accepted: {', '.join(SUBCOMMANDS)})")
    if argv[0] not in ("run", "overhead"):  # they read files and descriptors: no MPI library needed
        from commbench import deferred

        deferred.defer("mpi4py.MPI")
    try:
        return cmd(argv[1:])
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except (RuntimeError, ImportError) as e:
        if "MPI library" not in str(e) and "mpi4py" not in str(e):
            return _unexpected(argv[0], e)
        if any(
            os.environ.get(v, "0") != "0"
            for v in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID")
        ):
            return 2  # one voice: the job's first process says it
        why = str(e).replace(chr(10), "; ")
        return _err(_wrong_libmpi(why) or NO_MPI.format(why=why))
    except Exception as e:  # noqa: BLE001 - the exit status must not read as a regression (1)
        return _unexpected(argv[0], e)


def _unexpected(command: str, e: BaseException) -> int:
    """A bug met by a command: exit status 2, never 1 (compare's regression, run's failed check),
    and the traceback only when asked for (COMMBENCH_DEBUG=1)."""
    if command in ("run", "overhead") or os.environ.get("COMMBENCH_DEBUG") == "1":
        raise e
    return _err(
        f"internal error in `commbench {command}`: {type(e).__name__}: {e} (a bug in commbench: "
        "please report it with the command and its files; COMMBENCH_DEBUG=1 shows where it "
        "happened)"
    )


NO_MPI = (
    "no MPI library could be loaded ({why}). Two ways to get one: pip install 'commbench[mpich]' "
    "(the MPICH wheel, for a laptop or a single node), or, on a cluster, the site's MPI: "
    "module load <mpi>; pip install --no-binary mpi4py --force-reinstall mpi4py "
    "(mpi4py built against it; MPI4PY_LIBMPI may also point at its libmpi.so)"
)


def _resolved_libmpi(ext: str) -> tuple[str, str] | None:
    """(soname, path) of the libmpi the dynamic loader gives mpi4py's extension `ext` (ldd)."""
    import subprocess

    try:
        out = subprocess.run(["ldd", ext], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        name, _, rest = line.strip().partition(" => ")
        if name.startswith(("libmpi.", "libmpich.", "libmpi_")) and rest.startswith("/"):
            return name, rest.split(" (")[0]
    return None


def _wrong_libmpi(why: str) -> str | None:
    """mpi4py compiled with one MPI's mpi.h but loading another MPI's libmpi (an undefined
    symbol): where the loader found that library, and, when it is a file in this Python's own
    prefix (the mpich wheel's, which the build's -L and RUNPATH put before the site's), which
    file to remove or which interpreter to build from; None for any other import failure."""
    import glob
    import re

    m = re.search(r"(/\S+\.so): undefined symbol: (\w+)", why)
    found = _resolved_libmpi(m.group(1)) if m else None
    if found is None:
        return None
    soname, path = found
    head = (
        f"mpi4py's MPI extension ({m.group(1)}) was compiled for another MPI than the library it "
        f"loads: undefined symbol {m.group(2)}; the loader gives it {soname} => {path}"
    )
    rebuild = (
        "MPICC=<the site's mpicc> pip install --no-binary mpi4py --no-cache-dir "
        "--force-reinstall mpi4py"
    )
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.base_exec_prefix)}
    lib_dir = os.path.dirname(os.path.realpath(path))
    prefix = next((p for p in sorted(prefixes) if os.path.join(p, "lib") == lib_dir), None)
    if prefix is None:
        return f"{head}. Rebuild mpi4py with the mpicc of the MPI you run: {rebuild}"
    wheel = glob.glob(os.path.join(prefix, "lib", "python3*", "site-packages", "mpich-*.dist-info"))
    owner = f" (the {os.path.basename(wheel[0])[: -len('.dist-info')]} wheel's)" if wheel else ""
    remove = f"{prefix}/bin/python3 -m pip uninstall mpich" if wheel else f"rm {lib_dir}/libmpi.so*"
    use = "a Python whose prefix holds no libmpi"
    if os.path.exists("/usr/bin/python3") and prefix != "/usr":
        use += " (/usr/bin/python3 -m venv ENV)"
    return (
        f"{head}. That file{owner} lies in this Python's prefix, {lib_dir}, which the build "
        f"of mpi4py puts first on the linker's path (-L{lib_dir}) and in its RUNPATH, before "
        f"the site's libmpi. Build from {use}, or remove {lib_dir}/libmpi.so and its "
        f"libmpi.so.* ({remove}); then {rebuild} (docs/cluster.md)"
    )
