"""`commbench run` inside an MPI job: configure, measure, conclude.

Rank 0 parses and validates the command line and tells every rank; rank 0
builds the views (sinks) and the run header; a Session carries the run to
the harness (the family's per-size kernels, or the rows of its procedure); any failure keeps every
record written so far and ends every rank, and the watchdog can end the run from its own thread at
any time.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from dataclasses import dataclass

from mpi4py import MPI

from commbench import (
    cleanup,
    launch_token,
    mpilib,
    policy,
    process_origin,
    records,
    resources,
    run_config,
    run_metadata,
    run_options,
    suites,
    watchdog,
)
from commbench.harness import limits
from commbench.harness.core import Harness
from commbench.harness.plan import Plan
from commbench.option_types import RunError
from commbench.session import Session
from commbench.watchdog import Watchdog
from commbench.watchdog_report import describe, say


def error(msg: str) -> int:
    say(f"error: {msg}")
    return 2


def parse_on_root(comm, argv: list[str], store_check=None):
    """("ok", RunConfig) | ("help", text) | ("error", message), the same on every rank.
    store_check(cfg): why --store or --expect is refused (None: fine), given by the command
    line, which sits above the store: a run that cannot be kept or judged is refused before
    anything is measured."""
    msg = None
    if comm.Get_rank() == 0:
        try:
            cfg = run_config.parse_run_args(argv, world_size=comm.Get_size())
            # The launcher that parsed picks the default name so it can finish the file if
            # the job dies; else rank 0 reserves one and tells the launcher (launch_token).
            picked = os.environ.get("COMMBENCH_DEFAULT_OUTPUT")
            reserved = cfg.output is None and not picked
            if cfg.output is None:
                cfg = run_config.with_output(cfg, picked or run_config.default_output(cfg.family))
            launch_token.tell_output(cfg.output, reserved)
            run_config.check_writable("-o", cfg.output)
            run_config.check_writable("--csv", cfg.csv)
            run_config.check_distinct(cfg.output, cfg.csv)
            refused = store_check(cfg) if store_check is not None else None
            if refused:
                raise run_config.ConfigError(refused)
            dump = run_config.dump_path(argv)
            if dump is not None:  # -dump: written once, by the job's rank 0
                run_config.options_file.write(dump, argv, cfg.resolved())
            msg = ("ok", cfg)
        except run_config.HelpRequested:
            msg = ("help", run_options.usage(argv))
        except run_config.ConfigError as e:
            msg = ("error", str(e))
    return comm.bcast(msg, root=0)


def build_sinks(cfg) -> list:
    from commbench import views
    from commbench.views.csv_export import CsvRecords
    from commbench.views.results_file import JsonResults

    view = suites.family(cfg.family).view
    sinks: list = [views.text_view(view, sys.stdout)]
    from commbench.views import limits_text

    if view not in limits_text.SAID_BY_THE_VIEW:
        sinks.append(limits_text.LimitsTrailer(sys.stdout))
    if cfg.output and cfg.output != "-":
        sinks.append(JsonResults(cfg.output))
    if cfg.csv:
        sinks.append(CsvRecords(cfg.csv, cfg.mb_unit))
    if cfg.engine == "both":
        from commbench.views.binding import BindingOverhead

        sinks.insert(0, BindingOverhead(sys.stdout))  # first: its rows go into the summary
    if cfg.fit:  # first, so its fits reach the results file before that one finishes
        from commbench.views.fit_text import fit_sink

        sinks.insert(0, fit_sink(cfg, sinks))
    from commbench.views import progress

    # stderr reaches a terminal: the progress line, first (erased before a row prints)
    terminal = progress.terminal(cfg)
    if terminal:
        width, via_stdout = terminal
        sinks.insert(
            0, progress.ProgressView(cfg, width, out=sys.stdout if via_stdout else sys.stderr)
        )
    return sinks


def run_header(cfg, meta: dict) -> dict:
    fam = suites.family(cfg.family)
    notes = list(cfg.warnings)
    if cfg.msglen is not None:
        units = {b.unit for b in fam.benchmarks}
        for unit in sorted(units):
            notes += policy.user_size_list(cfg.msglen, unit, cfg.maxlog)[1]
        notes = list(dict.fromkeys(notes))
    if policy.summarised(meta["world_size"], cfg.rank_detail):
        notes.append(
            f"{meta['world_size']} ranks, more than --rank-detail {cfg.rank_detail}: each record "
            f"keeps the distribution of its ranks' times and its {records.SLOWEST} slowest ranks "
            "with their hosts (rank_summary), not every rank's times"
        )
    return {
        "metadata": meta,
        "config": cfg.resolved(),
        "family": {
            "name": fam.name,
            "title": fam.title,
            "part": fam.part,
            "profile": fam.profile.name,
        },
        "notes": notes,
        "comments": {b.name: list(b.comments) for b in fam.benchmarks if b.comments},
        "preamble_extra": fam.preamble(cfg) if fam.preamble is not None else [],
    }


class Finisher:
    """Rank 0: ends the sinks exactly once, with the summary of a completed run or
    the reason a run ended early (watchdog thread, signal, error path), so the
    terminal and the results file always tell the same story: whichever comes
    second only says what the first did."""

    def __init__(self, session: Session, started: float, output: str | None):
        self.session, self.started, self.output = session, started, output
        self.outcome: str | None = None  # "complete" | "interrupted"
        self.failed = False  # a view could not write what it had to (a full disk)

    def _end(self, summary: dict) -> None:
        for s in self.session.sinks:
            try:
                s.finish(summary)
            except Exception as e:  # noqa: BLE001 - one broken sink must not cost the others
                self.failed = True
                say(f"could not finish {type(s).__name__}: {e}")
            if getattr(s, "saved", True) is False:
                self.failed = True

    def _saved(self) -> bool:
        return bool(self.output) and self.output != "-"

    def interrupted(self, reason: str) -> None:
        if not self.session.lock.acquire(timeout=5):
            return
        try:
            if self.outcome == "complete":
                if self._saved():
                    say(
                        f"{reason} after the run completed; its results (complete: "
                        f"true) are in {self.output}"
                    )
                return
            if self.outcome is not None:
                return
            self.outcome = "interrupted"
            wd = self.session.watchdog
            # What memory still holds: held rows, and the completed samples of the row
            # a signal stopped (gathered by the watchdog); then the views close.
            self.session.stop(wd.partials if wd is not None else None)
            running = wd.state.get("benchmark") if wd is not None else None
            self._end(
                {
                    "interrupted": reason,
                    "running": running,
                    "elapsed_s": round(time.time() - self.started, 3),
                }
            )
            if self._saved():
                kept = "kept (the summary could not be written)" if self.failed else "written"
                say(f"results so far (complete: false) {kept} in {self.output}")
        finally:
            self.session.lock.release()

    def completed(self, failures: int) -> None:
        with self.session.lock:
            if self.outcome is not None:
                return
            self.outcome = "complete"
            self._end(
                {"check_failures": failures, "elapsed_s": round(time.time() - self.started, 3)}
            )
        if self.failed:
            say("the run completed, but not every result could be written (see above)")
        elif self._saved() or self.session.cfg.csv:
            files = [f for f in (self.output if self._saved() else None, self.session.cfg.csv) if f]
            say(f"results written to {' and '.join(files)}")


ABORT_GRACE = 0.3  # seconds between a failure's message and MPI_Abort


@dataclass
class Job:
    session: Session
    watchdog: Watchdog
    started: float
    finisher: Finisher | None  # rank 0 only
    shm_guard: object = None  # the node leader's segment guardian (cleanup.segment_guardian)


def srun_throttle(lib: mpilib.Library) -> str | None:
    """The note on the progress throttling process_origin set under an oversubscribing srun, now
    that the library is known; its variables go where the library lacks them."""
    if not process_origin.in_srun_step() or not any(
        s["name"] in process_origin.THROTTLE for s in process_origin.launch_settings()
    ):
        return None
    where = f"{process_origin.tasks_on_this_node()} srun tasks on {os.cpu_count()} cores"
    if mpilib.THROTTLE_CVAR in mpilib.has_cvars(lib.path):
        return (
            f"{where}: {lib.name}'s progress throttling enabled "
            "(oversubscribed timings are not representative; recorded under launch_settings)"
        )
    process_origin.untrottle()
    return (
        f"{where}: {lib.name} has no {mpilib.THROTTLE_CVAR}, so "
        "commbench sets nothing (oversubscribed timings are not representative)"
    )


def configure(comm, argv: list[str], store_check=None) -> Job | int:
    """Parse, build the views, check the run fits this machine; an exit status on failure."""
    rank = comm.Get_rank()
    lib = mpilib.here()
    mismatch = process_origin.world_mismatch(comm.Get_size(), library=lib.describe())
    if mismatch:  # every process is its own world: each says it (no collective possible)
        return error(mismatch)
    throttled = srun_throttle(lib)
    if throttled and comm.Get_rank() == 0:
        say(throttled)
    # Signals only until the configuration is known; then the --timeout clock too.
    wd = Watchdog(0, rank, comm.Get_size(), host=MPI.Get_processor_name()).start()
    status, payload = parse_on_root(comm, argv, store_check)
    if status == "help":
        if rank == 0:
            print(payload)
        return 0
    if status == "error":
        if rank == 0:
            error(payload)
        return 2
    cfg = payload
    session = Session(cfg, comm, build_sinks(cfg) if rank == 0 else [], watchdog=wd)
    meta = run_metadata.collect(comm, cfg)
    problem, biggest = _planned(session, comm, meta) if rank == 0 else (None, 0)
    problem, biggest = comm.bcast((problem, biggest), root=0)
    if not problem:
        problem = _measured_limits(session, meta, biggest)
    if problem:
        if rank == 0:
            error(problem)
        return 2
    job = Job(session, wd, time.time(), None)
    timeout = cfg.watchdog_timeout()
    wd.timeout = timeout
    info = wd.listen() if rank == 0 and timeout > 0 else None
    wd.join(comm.bcast(info, root=0))  # the others connect to rank 0 (commbench.peers)
    wd.progress(phase="start-up")
    job.shm_guard = _guard_segments(comm)
    if rank == 0:
        job.finisher = Finisher(session, job.started, cfg.output)
        wd.on_end = job.finisher.interrupted
    return job


def _planned(session, comm, meta) -> tuple[str | None, int]:
    """Rank 0: why the run cannot be honoured here (memory, --samples, an output another
    run claims), or None; and the largest message of its plan."""
    cfg = session.cfg
    session.rank_hosts = meta["rank_hosts"]
    per_host = max(meta["ranks_per_host"].values())
    plan = Plan(cfg, comm.Get_size(), large_counts=MPI.Get_version() >= (4, 0))
    problem = resources.preflight(plan, per_host, MPI.Get_version())
    plan_note, refusal = (
        resources.samples_plan(plan, comm.Get_size()) if plan.family.kernels else (None, None)
    )
    problem = problem or refusal
    if plan_note and not problem:
        say(plan_note)
    claims = (s.claim() for s in session.sinks if hasattr(s, "claim"))
    peak, biggest, _ = plan.peak()
    # the limits' largest copy (commbench.harness.limits): the plan's largest message, or
    # where a family plans its own buffers half of what a rank holds, so the probe's two
    # buffers never raise a rank's peak above the run's own
    return problem or next((c for c in claims if c), None), biggest or peak // 2


def _measured_limits(session, meta, biggest: int) -> str | None:
    """The hosts' physical limits (commbench.harness.limits) into the metadata, then the
    views' headers; the problem of writing them, the same on every rank. Collective."""
    session.watchdog.progress(phase="measuring the limits of the hosts")
    session.limits = limits.measure(session.comm, session.cfg, biggest) or {}
    problem = None
    if session.rank == 0:
        meta["limits"] = session.limits
        problem = _start_sinks(session, session.cfg, meta)
    return session.comm.bcast(problem, root=0)


def _start_sinks(session, cfg, meta) -> str | None:
    """Rank 0 writes the views' headers before the others go on: a file that cannot be
    written ends every rank with exit 2 here, not rank 0 alone with the others waiting."""
    header = run_header(cfg, meta)
    try:
        for s in session.sinks:
            s.start(header)
    except (OSError, RunError) as e:
        return f"cannot write the run's output: {getattr(e, 'strerror', None) or e}"
    return None


def _guard_segments(comm):
    """The MPI library's /dev/shm segments go on every bad exit (cleanup): at a signal
    or the watchdog by each rank, after SIGKILL by a shell of each node's first rank."""
    watchdog.at_exit(cleanup.remove_segments)
    node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())
    leader = node.Get_rank() == 0
    node.Free()
    return cleanup.segment_guardian(cleanup.mpi_segments()) if leader else None


def measure(job: Job) -> int | None:
    """The family's run: its check failures, or None after a failure that kept the
    records so far and ended every rank."""
    session, wd = job.session, job.watchdog
    comm, rank = session.comm, session.rank
    try:
        fam = suites.family(session.cfg.family)
        if fam.procedure:  # a family of rows (procedures): its harness, loaded only for them
            from commbench.harness import rows

            failures = rows.run(session, fam.procedure(session))
        else:
            failures = Harness(session).run()
        wd.progress(phase="the final barrier")
        comm.Barrier()
        return failures
    except Exception as e:  # noqa: BLE001 - any failure: keep the records, end every rank
        sys.stdout.flush()
        _unless_ending(wd)
        where = describe(wd.state)
        if isinstance(e, MPI.Exception):
            why = f"MPI error on rank {rank} in {where}: {e.Get_error_string().strip()}"
            say(why)
        elif isinstance(e, RunError):  # its message says it all: no traceback
            why = f"rank {rank} in {where}: {e}"
            say(f"error: {why}")
        else:
            why = f"internal error on rank {rank} in {where}: {type(e).__name__}: {e}"
            say(f"rank {rank}: internal error:\n{traceback.format_exc()}")
        if job.finisher is not None:
            job.finisher.interrupted(why + wd.lost_note())  # a peer that died first: named
        # MPI_Abort makes the process manager kill every process at once; under
        # load Hydra's proxy may not yet have forwarded the message printed just
        # above, and a failure would end in silence: give it a moment.
        time.sleep(ABORT_GRACE)
        cleanup.remove_segments()
        comm.Abort(3)
        return None


# seconds: more than the watchdog needs to exit
ENDING_WAIT = watchdog.SIGNAL_LINGER + watchdog.REPORT_GRACE + 10


def _unless_ending(wd: Watchdog) -> None:
    """The watchdog is ending the job (Ctrl-C, --timeout, a lost rank): the error the main
    thread met is its consequence (the peers it ended), not a failure of its own, and the
    watchdog says why; wait for it to end this process instead of a second story."""
    deadline = time.monotonic() + ENDING_WAIT
    while wd.ending and time.monotonic() < deadline:
        time.sleep(0.1)


def conclude(job: Job, failures: int) -> int:
    """Stop the watchdog, finish every view with the summary; exit 1 on check failures."""
    job.watchdog.stop()
    if job.finisher is not None:
        job.finisher.completed(failures)
    if job.shm_guard is not None:  # MPI_Finalize removes the segments itself
        try:
            job.shm_guard.stdin.write(b"done\n")
            job.shm_guard.stdin.close()
        except OSError:
            pass
    if job.finisher is not None and job.finisher.failed:
        return 3
    return 1 if failures else 0


@dataclass(frozen=True)
class RunOutcome:
    """What `commbench run` inside the job ended with, on this rank: the exit status, the
    configuration (None: refused, help, or ended before it was known) and whether this rank
    finished the results file (the job's rank 0, once the run is configured)."""

    status: int
    cfg: run_config.RunConfig | None = None
    wrote_results: bool = False


def run(argv: list[str], store_check=None) -> RunOutcome:
    """Every rank: the whole `commbench run` inside the job (store_check: parse_on_root's)."""
    launch_token.mark("i")  # through MPI_Init (importing this module initialised MPI)
    watchdog.at_exit(launch_token.orphaned)  # a launcher killed leaves its token to the ranks
    try:
        job = configure(MPI.COMM_WORLD, argv, store_check)
    except Exception:  # noqa: BLE001 - one rank's failure here would leave the others waiting
        say(f"internal error:\n{traceback.format_exc()}")
        time.sleep(ABORT_GRACE)  # the message reaches the terminal before the job is killed
        MPI.COMM_WORLD.Abort(3)
        return RunOutcome(3)
    if isinstance(job, int):
        return RunOutcome(job)
    failures = measure(job)
    status = 3 if failures is None else conclude(job, failures)
    return RunOutcome(status, job.session.cfg, job.finisher is not None)
