"""ReFrame checks that run commbench, read its IMB-style table and keep every run in
commbench's results store (docs/results.md, "ReFrame").

    reframe -C examples/reframe/settings.py -c examples/reframe/commbench_checks.py -r

CommbenchPingPong  runs PingPong and Allreduce on 2 ranks, reports PingPong's t[usec] and
                   Allreduce's t_avg[usec] at one size as ReFrame performance values, and
                   keeps the results file in the store (tag `reframe`, system = ReFrame's
                   current system:partition).
CommbenchGate      runs the same measurement again and gates it with
                   `commbench compare NEW --baseline STORE:tag=reframe`: exit status 1 (a
                   regression) or 2 (refused: e.g. no comparable run in the store) fail its
                   sanity check. It depends on CommbenchPingPong, so even the first session
                   has a baseline run; it keeps nothing in the store itself.

The store: `-S store=PATH|URL`, else $COMMBENCH_STORE when ReFrame loads the checks, else
commbench's own default (`--store` alone: $COMMBENCH_STORE in the job's environment, else
~/.local/share/commbench/results.db). How the job calls commbench: `-S commbench=...`
(default: the `commbench` script on PATH; e.g. `-S "commbench=python3 -m commbench"`).

Launching: on a partition whose launcher is `local` (no scheduler) commbench starts its 2
ranks itself (`commbench run -n 2`, with the mpiexec of mpi4py's MPI). On any other launcher
(srun, mpirun …) ReFrame's launcher starts num_tasks ranks and commbench runs inside that
MPI job, as on a cluster.
"""

import os
import shlex

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import (
    performance_function,
    run_after,
    run_before,
    sanity_function,
    variable,
)


class CommbenchBase(rfm.RunOnlyRegressionTest):
    """The measurement both checks share (not a test itself: no @simple_test)."""

    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    num_tasks = 2
    time_limit = "10m"
    maintainers = ["commbench"]
    tags = {"commbench", "mpi"}

    #: the command that starts commbench in the job script
    commbench = variable(str, value="commbench")
    #: the results store (a path or a postgresql:// URL); '' = commbench's default
    store = variable(str, value=os.environ.get("COMMBENCH_STORE", ""))
    #: the tags the stored run gets (comma-separated)
    store_tags = variable(str, value="reframe")
    #: -msglog: sizes 0, 2^min … 2^max
    msglog = variable(str, value="0:10")
    #: the row (bytes) whose time is the performance value; one of -msglog's sizes
    size = variable(int, value=1024)
    #: -iter: repetitions per sample (bounds the run time)
    iters = variable(int, value=200)
    #: -time: seconds per size of IMB's dynamic policy; -iter bounds the repetitions, so this
    #: is the per-table budget (-time x sizes), generous for a loaded or oversubscribed node
    secs = variable(float, value=10.0)
    #: --samples: repeated measurements per row; the gate's test needs them
    samples = variable(int, value=5)
    #: the results file, in the stage directory (kept in the output directory)
    results = variable(str, value="commbench.json")

    #: on system `local` (one node, shared memory: a laptop moves 1 KiB in about 1-2 us),
    #: both performance values must stay at or below this many microseconds
    local_ceiling_us = variable(float, value=10.0)

    @run_after("init")
    def set_reference(self):
        # ReFrame's reference: (value, lower, upper threshold as fractions, unit); here a
        # ceiling for the example's system `local`. A site puts its partitions' own numbers
        # here, e.g. 'cluster:compute': {'pingpong_t': (1.8, None, 0.2, 'us')}: at most
        # 20% above 1.8 us.
        ceiling = (self.local_ceiling_us, None, 0.0, "us")
        self.reference = {"local": {"pingpong_t": ceiling, "allreduce_t_avg": ceiling}}

    @run_after("setup")
    def set_system(self):
        # The system the stored run belongs to: ReFrame's system:partition.
        self.system_name = self.current_partition.fullname
        self.keep_files = [self.results]

    def store_option(self):
        return f"--store={shlex.quote(self.store)}" if self.store else "--store"

    def run_options(self):
        """`commbench run`'s arguments, without where the results go."""
        opts = ["run"]
        if self.current_partition.launcher_type.registered_name == "local":
            # No launcher in front of the command: commbench starts its ranks itself.
            opts += ["-n", str(self.num_tasks)]
        opts += ["PingPong", "Allreduce", "-msglog", self.msglog, "-iter", str(self.iters)]
        opts += ["-time", f"{self.secs:g}", "--samples", str(self.samples), "--no-progress"]
        return opts + ["-o", self.results]

    @run_before("run")
    def set_command(self):
        self.executable = self.commbench
        self.executable_opts = [
            *self.run_options(),
            self.store_option(),
            "--system",
            shlex.quote(self.system_name),
            "--tag",
            shlex.quote(self.store_tags),
        ]

    def measured(self):
        """Sanity of the measurement: the tables printed, the results file stored."""
        return sn.all(
            [
                sn.assert_found(r"^# Benchmarking PingPong", self.stdout),
                sn.assert_found(r"^# Benchmarking Allreduce", self.stdout),
                sn.assert_not_found(r"time-out", self.stdout),
                sn.assert_found(r"^commbench: results written to", self.stderr),
            ]
        )

    @sanity_function
    def validate(self):
        return sn.all(
            [
                sn.assert_eq(self.job.exitcode, 0, msg="commbench exited with status {0}"),
                self.measured(),
                sn.assert_found(r"stored as run \d+", self.stderr, msg="run not stored"),
            ]
        )

    def row(self, benchmark, column):
        """The value in column `column` (0: #bytes) of the row `size` of the first table
        of `benchmark` in commbench's IMB-style stdout."""
        fields = r"\s+\S+" * (column - 1)
        return sn.extractsingle(
            rf"(?s)^# Benchmarking {benchmark}\s*$.*?^\s+{self.size}{fields}\s+(\S+)",
            self.stdout,
            1,
            float,
        )

    @performance_function("us")
    def pingpong_t(self):
        # PingPong: #bytes #repetitions t[usec] Mbytes/sec
        return self.row("PingPong", 2)

    @performance_function("us")
    def allreduce_t_avg(self):
        # Allreduce: #bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]
        return self.row("Allreduce", 4)


@rfm.simple_test
class CommbenchPingPong(CommbenchBase):
    descr = "commbench PingPong and Allreduce on 2 ranks, kept in the results store"


@rfm.simple_test
class CommbenchGate(CommbenchBase):
    descr = "commbench PingPong and Allreduce, gated against the results store"

    #: compare's --threshold: the smallest slow-down that counts as a regression
    threshold = variable(str, value="10%")
    #: the baseline's selector (commbench store -h), e.g. tag=reframe,last=10 or since=14d
    selector = variable(str, value="tag=reframe")

    @run_after("init")
    def after_measurement(self):
        # The stored runs of this session's CommbenchPingPong are (part of) the baseline.
        self.depends_on("CommbenchPingPong")

    @run_after("setup")
    def keep_verdict(self):
        self.keep_files = [self.results, "compare.txt"]

    @run_before("run")
    def set_command(self):
        # Measure (not stored: only CommbenchPingPong writes to the store), then compare.
        self.executable = self.commbench
        self.executable_opts = self.run_options()
        baseline = f"{self.store}:{self.selector}" if self.store else self.selector
        self.postrun_cmds = [
            'echo "commbench run: exit $?"',
            f"{self.commbench} compare {self.results} --baseline {shlex.quote(baseline)} "
            f"--system {shlex.quote(self.system_name)} --threshold {self.threshold} "
            "> compare.txt 2>&1",
            'echo "commbench compare: exit $?"',
        ]

    @sanity_function
    def validate(self):
        compare = sn.extractsingle(r"^commbench compare: exit (\d+)", self.stdout, 1, int)
        return sn.all(
            [
                sn.assert_eq(
                    sn.extractsingle(r"^commbench run: exit (\d+)", self.stdout, 1, int),
                    0,
                    msg="commbench run exited with status {0}",
                ),
                self.measured(),
                sn.assert_eq(
                    compare,
                    0,
                    msg="commbench compare exited with {0} (1: regression, 2: refused); "
                    "see compare.txt (in the stage directory of a failed test)",
                ),
            ]
        )
