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
        return launch.launch(cfg.mpiexec, cfg.np, "run", argv)
    _mpi4py_rc(initialize=True, thread_level=config.scan_thread_level(argv))
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
                cfg = config.with_output(cfg, default_output(cfg.family))
            msg = ("ok", cfg)
        except config.HelpRequested:
            msg = ("help", config.usage())
        except config.ConfigError as e:
            msg = ("error", str(e))
    return comm.bcast(msg, root=0)


def build_sinks(cfg) -> list:
    from commbench.views.csv_export import CsvRecords
    from commbench.views.imb_text import ImbText
    from commbench.views.results_file import JsonResults

    sinks: list = [ImbText(sys.stdout)]
    if cfg.output and cfg.output != "-":
        sinks.append(JsonResults(cfg.output))
    if cfg.csv:
        sinks.append(CsvRecords(cfg.csv, cfg.mb_unit))
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
    }


def run_in_job(argv: list[str]) -> int:
    from mpi4py import MPI

    from commbench import metadata
    from commbench.harness import Harness

    comm = MPI.COMM_WORLD
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
    rank = comm.Get_rank()
    sinks = build_sinks(cfg) if rank == 0 else []
    meta = metadata.collect(comm, cfg)
    started = time.time()
    try:
        if rank == 0:
            header = run_header(cfg, meta)
            for s in sinks:
                s.start(header)
        harness = Harness(cfg, sinks, comm)
        failures = harness.run()
        comm.Barrier()
    except Exception:
        sys.stdout.flush()
        print(f"commbench: rank {rank}: internal error:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
        comm.Abort(3)
        return 3
    if rank == 0:
        summary = {"check_failures": failures, "elapsed_s": round(time.time() - started, 3)}
        for s in sinks:
            s.finish(summary)
        if cfg.output and cfg.output != "-":
            print(f"commbench: results written to {cfg.output}", file=sys.stderr)
    return 1 if failures else 0


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
    view = ImbText(sys.stdout)
    view.start({k: doc[k] for k in ("metadata", "config", "family", "notes", "comments") if k in doc})
    for r in recs:
        view.record(r)
    view.finish(doc.get("summary", {"interrupted": "results file incomplete"}))
    return 0


def _fitcmd():
    from commbench import fitcmd  # the models and matplotlib load only for these commands

    return fitcmd


SUBCOMMANDS = {
    "run": cmd_run,
    "list": cmd_list,
    "report": cmd_report,
    "fit": lambda argv: _fitcmd().cmd_fit(argv),
    "plot": lambda argv: _fitcmd().cmd_plot(argv),
}


def main(argv: list[str] | None = None) -> int:
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
