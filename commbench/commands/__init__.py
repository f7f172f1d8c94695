"""Command line: `commbench <command> …`, one module of this package a command, each parsing
its arguments, calling the layers below (config, job, views, store, importers, models) and
returning an exit status."""

from __future__ import annotations

import importlib
import os
import sys

from commbench import redact
from commbench.commands.errors import NO_MPI, err, wrong_libmpi

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
  expect RULES.toml RESULTS... [--junit OUT.xml]   each row against what the site expects of it
                               (pass, fail, no data; exit 1 on a failure; docs/expect.md)
  expect --write OUT.toml RESULTS...   propose an expectations file from a good run
  health [-n N] [--expect RULES] [--slurm-drain]   every host and its network measured: a
                               verdict per host (good, slow, failed to run); drains the slow in Slurm
  schema                       the results file's JSON Schema (docs/schema.md)
  store add|list|show|rm|accept|export|trend   the results store of runs (commbench store -h)
  compare NEW --baseline STORE[:SELECTOR]   NEW against stored runs: the between-run gate

`python -m commbench` is the same program."""  # noqa: E501


# command -> (module of this package, its function)
SUBCOMMANDS = {
    "run": ("run", "cmd_run"),
    "list": ("listing", "main"),
    "report": ("report", "main"),
    "compare": ("compare", "main"),
    "overhead": ("run", "overhead"),
    "fit": ("fit", "main"),
    "plot": ("plot", "main"),
    "import": ("importing", "main"),
    "expect": ("expect", "main"),
    "health": ("health", "main"),
    "schema": ("schema", "main"),
    "store": ("store", "main"),
}


def command(name: str):
    """The function of command `name` (its module imported only now)."""
    module, function = SUBCOMMANDS[name]
    return getattr(importlib.import_module(f"commbench.commands.{module}"), function)


def _single_threaded_blas() -> None:
    """One BLAS thread per rank: a benchmark process must not spawn compute threads
    that fight the other ranks for cores (the CPU-exploit kernel uses numpy.dot).
    Set before numpy is first imported; a user's explicit setting wins."""
    if "OMP_NUM_THREADS" not in os.environ:
        # the mt family's thread count then falls back to the CPUs
        os.environ["COMMBENCH_OMP_DEFAULTED"] = "1"
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")


def main(argv: list[str] | None = None) -> int:
    """The program (argv None: the command line) or, given argv, a call that returns its
    exit status. As a program, `run` ends without the interpreter's teardown (_quick_exit)."""
    if argv is not None:
        return _main(argv)
    status = _main(sys.argv[1:])
    if sys.argv[1:2] in (["run"], ["overhead"]):
        _quick_exit(status)
    return status


def _quick_exit(status: int) -> None:
    """`commbench run` ends at once, without the interpreter's teardown, which frees every
    module and object one by one: ~20 ms at the end of every rank and ~12 ms at the end of the
    launcher, on every run (benchmarks/startup.py, issue 50). What the teardown does that
    matters is done first: atexit's functions (commbench's cleanup, coverage), MPI_Finalize
    where MPI runs (mpi4py's own call comes at the very end of the teardown), the standard
    streams flushed. Every file commbench writes is closed by then (its views' finish)."""
    import atexit

    atexit._run_exitfuncs()
    mpi = sys.modules.get("mpi4py.MPI")
    ran_mpi = mpi is not None and mpi.Is_initialized()
    if ran_mpi and not mpi.Is_finalized():
        mpi.Finalize()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    code = status if isinstance(status, int) and 0 <= status < 256 else 1
    if ran_mpi:
        # The C library's exit, as a C program ends: the MPI library's own exit handlers run
        # (without them Hydra took a rank that left first for a bad end and killed the others
        # with SIGKILL, 4 ranks on 2 cores, 6 runs in 12). PyDLL holds the GIL: no daemon
        # thread runs Python meanwhile.
        import ctypes

        ctypes.PyDLL(None).exit(code)
    os._exit(code)


def _main(argv: list[str]) -> int:
    _single_threaded_blas()
    redact.mask_streams()  # no password of a store URL on any line commbench writes
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if argv else 2
    if argv[0] not in SUBCOMMANDS:
        return err(f"unknown command {argv[0]!r} (accepted: {', '.join(SUBCOMMANDS)})")
    try:
        return command(argv[0])(argv[1:])
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except (RuntimeError, ImportError) as e:
        if "MPI library" not in str(e) and "mpi4py" not in str(e):
            return _unexpected(argv[0], e)
        from commbench import process_origin

        if not process_origin.first_by_launcher():
            return 2  # one voice: the job's first process says it
        why = str(e).replace(chr(10), "; ")
        return err(wrong_libmpi(why) or NO_MPI.format(why=why))
    except Exception as e:  # noqa: BLE001 - the exit status must not read as a regression (1)
        return _unexpected(argv[0], e)


def _unexpected(command: str, e: BaseException) -> int:
    """A bug met by a command: exit status 2, never 1 (compare's regression, run's failed check),
    and the traceback only when asked for (COMMBENCH_DEBUG=1)."""
    if command in ("run", "overhead") or os.environ.get("COMMBENCH_DEBUG") == "1":
        raise e
    return err(
        f"internal error in `commbench {command}`: {type(e).__name__}: {e} (a bug in commbench: "
        "please report it with the command and its files; COMMBENCH_DEBUG=1 shows where it "
        "happened)"
    )
