"""Command line: `commbench run|list|report …` (thin: parsing lives in config, measuring in harness)."""

from __future__ import annotations

import os
import sys
import time
import traceback

USAGE = """usage: commbench <command> [args]

commands:
  run [options] [benchmarks]   measure (commbench run -h for every option)
  list [family]                every benchmark by family, with a one-line description
  report FILE [--csv OUT]      IMB text (or CSV) rebuilt from a results file
  compare OLD NEW [--threshold F]   time ratios new/old per matched row, with verdicts
  overhead [options]           F/S/R/A/U/E decomposition and LogGP (= run --suite overhead)
  fit FILE [options]           Hockney (or linear) fit of time against size, with CIs
  plot FILE [FILE ...] -o OUT  time and rate against size with the fits (PNG or SVG)

`python -m commbench` is the same program."""


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


def cmd_run(argv: list[str]) -> int:
    from commbench import config

    if _wants_launch(argv):
        _mpi4py_rc(initialize=False)
        from commbench import launch

        try:
            cfg = config.parse_run_args(argv)
        except config.HelpRequested:
            print(config.usage())
            return 0
        except config.ConfigError as e:
            return _err(str(e))
        return launch.launch(cfg.mpiexec, cfg.np, "run", argv, output=cfg.output or default_output(cfg.family))
    _mpi4py_rc(initialize=True, thread_level=config.scan_thread_level(argv))
    from commbench import watchdog

    # Before MPI starts its own threads: the watchdog thread receives the
    # ending signals even while the main thread is blocked inside MPI.
    watchdog.block_signals()
    return run_in_job(argv)


def default_output(family: str) -> str:
    return os.path.join("results", f"commbench-{family}-{time.strftime('%Y%m%d-%H%M%S')}.json")


def _parse_on_root(comm, argv: list[str]):
    from commbench import config

    msg = None
    if comm.Get_rank() == 0:
        try:
            cfg = config.parse_run_args(argv, world_size=comm.Get_size())
            if cfg.output is None:
                # The launcher picks the default name so it can finish the file if the job dies.
                cfg = config.with_output(cfg, os.environ.get("COMMBENCH_DEFAULT_OUTPUT") or default_output(cfg.family))
            config.check_writable("-o", cfg.output)
            config.check_writable("--csv", cfg.csv)
            msg = ("ok", cfg)
        except config.HelpRequested:
            msg = ("help", config.usage())
        except config.ConfigError as e:
            msg = ("error", str(e))
    return comm.bcast(msg, root=0)


def build_sinks(cfg) -> list:
    from commbench import suites
    from commbench.views.csv_export import CsvRecords
    from commbench.views.imb_text import ImbText
    from commbench.views.results_file import JsonResults

    view = suites.family(cfg.family).view or ImbText
    sinks: list = [view(sys.stdout)]
    if cfg.output and cfg.output != "-":
        sinks.append(JsonResults(cfg.output))
    if cfg.csv:
        sinks.append(CsvRecords(cfg.csv, cfg.mb_unit))
    if getattr(cfg, "engine", None) == "both":
        from commbench.views.binding import BindingOverhead

        sinks.insert(0, BindingOverhead(sys.stdout))  # first: its rows go into the summary
    if cfg.fit:  # first, so its fits reach the results file before that one finishes
        from commbench.views.fit_text import fit_sink
        sinks.insert(0, fit_sink(cfg, sinks))
    return sinks


def run_header(cfg, meta: dict) -> dict:
    from commbench import policy, suites

    fam = suites.family(cfg.family)
    notes = list(cfg.warnings)
    if cfg.msglen is not None:
        units = {b.unit for b in fam.benchmarks}
        for unit in sorted(units):
            notes += policy.user_size_list(cfg.msglen, unit, cfg.maxlog)[1]
        notes = list(dict.fromkeys(notes))
    return {
        "metadata": meta,
        "config": cfg.resolved(),
        "family": {"name": fam.name, "title": fam.title, "part": fam.part, "profile": fam.profile.name},
        "notes": notes,
        "comments": {b.name: list(b.comments) for b in fam.benchmarks if b.comments},
        "preamble_extra": fam.preamble(cfg) if fam.preamble is not None else [],
    }


def _finisher(sinks: list, lock, started: float, output: str | None):
    """Rank 0: end the sinks once with an 'interrupted' reason (watchdog thread or error path)."""
    done = []

    def finish(reason: str) -> None:
        if done or not lock.acquire(timeout=5):
            return
        try:
            done.append(reason)
            summary = {"interrupted": reason, "elapsed_s": round(time.time() - started, 3)}
            for s in sinks:
                try:
                    s.finish(summary)
                except Exception as e:  # noqa: BLE001 - one broken sink must not cost the others
                    print(f"commbench: could not finish {type(s).__name__}: {e}", file=sys.stderr, flush=True)
            if output and output != "-":
                print(f"commbench: results so far (complete: false) written to {output}", file=sys.stderr, flush=True)
        finally:
            lock.release()

    return finish


def run_in_job(argv: list[str]) -> int:
    import threading

    from mpi4py import MPI

    from commbench import metadata, resources, suites
    from commbench.harness import Harness
    from commbench.watchdog import Watchdog

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    # Signals only until the configuration is known; then the --timeout clock too.
    wd = Watchdog(0, rank, comm.Get_size(), host=MPI.Get_processor_name()).start()
    status, payload = _parse_on_root(comm, argv)
    if status == "help":
        if comm.Get_rank() == 0:
            print(payload)
        return 0
    if status == "error":
        if comm.Get_rank() == 0:
            _err(payload)
        return 2
    cfg = payload
    sinks = build_sinks(cfg) if rank == 0 else []
    meta = metadata.collect(comm, cfg)
    harness = Harness(cfg, sinks, comm, watchdog=wd)
    problem = None
    if rank == 0:
        per_host = max(meta["ranks_per_host"].values())
        problem = resources.preflight(harness, per_host, MPI.Get_version())
    problem = comm.bcast(problem, root=0)
    if problem:
        if rank == 0:
            _err(problem)
        return 2
    started = time.time()
    lock = harness.sink_lock if rank == 0 else threading.Lock()
    finish_interrupted = _finisher(sinks, lock, started, cfg.output) if rank == 0 else None
    timeout = cfg.watchdog_timeout()
    wd.timeout = timeout
    info = wd.listen() if rank == 0 and timeout > 0 else None
    wd.rank0 = comm.bcast(info, root=0)
    wd.progress(phase="start-up")
    try:
        if rank == 0:
            header = run_header(cfg, meta)
            for s in sinks:
                s.start(header)
            wd.on_end = finish_interrupted
        driver = suites.family(cfg.family).driver
        failures = driver(cfg, sinks, comm) if driver else harness.run()
        wd.progress(phase="the final barrier")
        comm.Barrier()
    except Exception as e:  # noqa: BLE001 - any failure: keep the records, end every rank
        sys.stdout.flush()
        where = describe_state(wd.state)
        if isinstance(e, MPI.Exception):
            why = f"MPI error on rank {rank} in {where}: {e.Get_error_string().strip()}"
            print(f"commbench: {why}", file=sys.stderr, flush=True)
        else:
            why = f"internal error on rank {rank} in {where}: {type(e).__name__}: {e}"
            print(f"commbench: rank {rank}: internal error:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
        if finish_interrupted is not None:
            finish_interrupted(why)
        comm.Abort(3)
        return 3
    wd.stop()
    if rank == 0:
        summary = {"check_failures": failures, "elapsed_s": round(time.time() - started, 3)}
        with lock:
            for s in sinks:
                s.finish(summary)
        if cfg.output and cfg.output != "-":
            print(f"commbench: results written to {cfg.output}", file=sys.stderr)
    return 1 if failures else 0


def describe_state(state: dict) -> str:
    from commbench.watchdog import describe

    return describe(state)


def cmd_list(argv: list[str]) -> int:
    _mpi4py_rc(initialize=False)
    from commbench import suites

    names = suites.family_names()
    if argv:
        fam = suites.canonical_family(argv[0])
        if fam is None:
            return _err(f"unknown family {argv[0]!r} (accepted: {'|'.join(names)})")
        names = [fam]
    for n in names:
        fam = suites.family(n)
        print(f"{fam.name} ({fam.title}): {fam.description}")
        for b in fam.benchmarks:
            flag = "" if b.default else " [by name or -include]"
            print(f"  {b.name:<26} {b.description}{flag}")
        print()
    return 0


def cmd_report(argv: list[str]) -> int:
    from commbench.views import csv_export, results_file
    from commbench.views.imb_text import ImbText

    if not argv or argv[0].startswith("-"):
        return _err("report needs a results file (accepted: commbench report FILE [--csv OUT])")
    try:
        doc = results_file.load(argv[0])
    except ValueError as e:
        return _err(str(e))
    recs = results_file.measurements(doc)
    if "--csv" in argv:
        i = argv.index("--csv")
        out = argv[i + 1] if i + 1 < len(argv) else "-"
        csv_export.write(sys.stdout if out == "-" else out, recs, doc["config"].get("mb_unit", 10**6))
        return 0
    from commbench import suites

    fam = suites.canonical_family(doc.get("family", {}).get("name", "mpi1"))
    view = ((suites.family(fam).view if fam else None) or ImbText)(sys.stdout)
    view.start({k: doc[k] for k in ("metadata", "config", "family", "notes", "comments", "preamble_extra") if k in doc})
    for r in recs:
        view.record(r)
    from commbench.views.binding import table_lines

    if doc.get("summary", {}).get("binding_overhead"):
        print("\n".join(table_lines(doc["summary"]["binding_overhead"])))
    view.finish(doc.get("summary", {"interrupted": "results file incomplete"}))
    return 0


def cmd_compare(argv: list[str]) -> int:
    from commbench.views import compare, results_file

    threshold = 0.05
    if "--threshold" in argv:
        i = argv.index("--threshold")
        try:
            threshold = float(argv[i + 1])
        except (IndexError, ValueError):
            return _err("--threshold needs a number (accepted: --threshold 0.05 for 5%)")
        argv = argv[:i] + argv[i + 2 :]
    if len(argv) != 2:
        return _err("compare needs two results files (accepted: commbench compare OLD.json NEW.json)")
    try:
        old, new = (results_file.measurements(results_file.load(p)) for p in argv)
    except ValueError as e:
        return _err(str(e))
    print(compare.render(compare.compare(old, new, threshold), argv[0], argv[1]))
    return 0


def cmd_overhead(argv: list[str]) -> int:
    """`commbench overhead …` = `commbench run --suite overhead …` (seed 002)."""
    return cmd_run(["--suite", "overhead", *argv])


def _fitcmd():
    from commbench import fitcmd  # the models and matplotlib load only for these commands

    return fitcmd


SUBCOMMANDS = {
    "run": cmd_run,
    "list": cmd_list,
    "report": cmd_report,
    "compare": cmd_compare,
    "overhead": cmd_overhead,
    "fit": lambda argv: _fitcmd().cmd_fit(argv),
    "plot": lambda argv: _fitcmd().cmd_plot(argv),
}


def _single_threaded_blas() -> None:
    """One BLAS thread per rank: a benchmark process must not spawn compute threads
    that fight the other ranks for cores (the CPU-exploit kernel uses numpy.dot).
    Set before numpy is first imported; a user's explicit setting wins."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")


def main(argv: list[str] | None = None) -> int:
    _single_threaded_blas()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if argv else 2
    cmd = SUBCOMMANDS.get(argv[0])
    if cmd is None:
        return _err(f"unknown command {argv[0]!r} (accepted: {', '.join(SUBCOMMANDS)})")
    try:
        return cmd(argv[1:])
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
