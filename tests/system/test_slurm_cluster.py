"""commbench under a real 4-node Slurm on this one machine (tests/support/slurm_cluster.py): srun
-N 2 and -N 4 across emulated nodes, a rate-limited node seen in the timings, sbatch -N 4,
scancel, a node that fails mid-run, and the diagnosis family naming the rate-limited node (issue
21).

The nodes are network namespaces on a bridge, each with its slurmd; MPICH
talks OFI over TCP (FI_PROVIDER=tcp), so the bytes between nodes cross the
emulated links. One cluster serves the module (up in under 2 s); it is
stopped, and checked to have left nothing, at the end, pass or fail. Needs
root and network namespaces, and installs Debian's Slurm when missing;
skips with the reason otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import slurm, slurm_cluster
from tests.support.mpirun import records_in, wait_for_records
from tests.support.slurm import Unavailable

ROOT = str(Path(__file__).resolve().parents[2])
PY = sys.executable
WHY_NOT = slurm_cluster.available()
pytestmark = [
    pytest.mark.needs("slurm"),
    pytest.mark.skipif(WHY_NOT is not None, reason=f"emulated nodes unavailable: {WHY_NOT}"),
]

SHORT = ["-msglog", "0:3", "-iter", "20", "-check", "--timeout", "60"]
# up to 8 ranks on 2 cores: throttled progress polling (recorded), as the self-launcher would
ENV = {
    "MPIR_CVAR_CH4_PROGRESS_THROTTLE": "1",
    "MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT": "64",
    "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])),
}
# long enough to be stopped in the middle: 23 sizes up to 4 MiB, 200 repetitions each
LONG = ["Allreduce", "-msglog", "0:22", "-iter", "200,off", "-time", "100", "--timeout", "60"]


@pytest.fixture(scope="module")
def cluster():
    t0 = time.monotonic()
    try:
        c = slurm_cluster.SlurmCluster(4).start()
    except (Unavailable, OSError, subprocess.SubprocessError) as e:
        pytest.skip(f"no multi-node Slurm here: {e}")
    print(f"\n4-node Slurm up in {time.monotonic() - t0:.1f} s (subnet 10.213.{c.net.subnet}.0/24)")
    yield c
    c.stop()
    assert not c.leftovers(), c.leftovers()
    assert not _daemons(c), _daemons(c)


def _daemons(c: slurm_cluster.SlurmCluster) -> list[str]:
    """Live (not zombie) processes started for this cluster: they name its directory."""
    out = []
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and str(c.dir).encode() in (d / "cmdline").read_bytes():
                if (d / "stat").read_text().split(") ")[-1][0] != "Z":
                    out.append(d.name)
        except OSError:
            continue
    return out


def run(c, *cmd: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        list(cmd), capture_output=True, text=True, timeout=timeout, env=c.env(**ENV)
    )


def srun(c, nodes: int, ppn: int, *args: str, extra: tuple = (), timeout: float = 120):
    return run(
        c,
        "srun",
        "--mpi=pmi2",
        "-N",
        str(nodes),
        f"--ntasks-per-node={ppn}",
        *extra,
        PY,
        "-m",
        "commbench",
        "run",
        *args,
        timeout=timeout,
    )


def check_placement(c, meta: dict, nodes: int, ppn: int, job: str | None = None) -> None:
    """The results name the Slurm job and the node of every rank: srun's block distribution
    over the nodes Slurm chose (whichever they are)."""
    s = meta["slurm"]
    assert s["job_id"] and (job is None or s["job_id"] == job)
    names = run(c, "scontrol", "show", "hostnames", s["step_nodelist"]).stdout.split()
    assert len(names) == nodes and set(names) <= set(c.nodes)
    where = [h for h in names for _ in range(ppn)]
    assert meta["launcher"] == "srun" and meta["world_size"] == nodes * ppn
    assert meta["rank_hosts"] == where and meta["hosts"] == sorted(names)  # MPI_Get_processor_name
    assert meta["ranks_per_host"] == dict.fromkeys(sorted(names), ppn)
    assert s["rank_nodes"] == where  # Slurm's name of the node of every rank (SLURMD_NODENAME)
    assert s["step_num_nodes"] == str(nodes)
    assert (
        meta["mpi_env"]["MPIR_CVAR_CH4_NETMOD"] == "ofi" and meta["mpi_env"]["FI_PROVIDER"] == "tcp"
    )


@pytest.mark.parametrize("nodes,ppn", [(2, 1), (2, 2), (4, 1), (4, 2)])
def test_srun_across_nodes(cluster, tmp_path, nodes, ppn):
    """IMB-MPI1 and IMB-RMA (one-sided, passive target) on every rank of N nodes, data checked."""
    for family, benchmarks in (
        ("mpi1", ["PingPong", "Allreduce"]),
        ("rma", ["Unidir_put", "Accumulate"]),
    ):
        out = tmp_path / f"{family}.json"
        p = srun(cluster, nodes, ppn, "--suite", family, *benchmarks, *SHORT, "-o", str(out))
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
        assert "ALL BENCHMARKS SUCCESSFUL" in p.stdout  # -check: the bytes crossed intact
        doc = json.loads(out.read_text())
        assert doc["complete"] is True
        check_placement(cluster, doc["metadata"], nodes, ppn)
        assert {r["benchmark"] for r in doc["records"]} == set(benchmarks)
        assert {r["status"] for r in doc["records"]} <= {
            "ok",
            "time-out",
        }  # 8 ranks on 2 cores may hit -time
        assert max(r["np"] for r in doc["records"]) == (nodes * ppn if family == "mpi1" else 2)


def test_rate_limited_node_shows_in_timings(cluster, tmp_path):
    """tbf at 200 Mbit/s on h1's link: PingPong h0<->h1 under srun measures its 25 MB/s (within
    10%): the bytes between Slurm nodes cross the emulated links."""
    lens = tmp_path / "lens"
    lens.write_text("1048576\n4194304\n")
    out = tmp_path / "rate.json"
    cluster.limit("h1", 200)
    try:
        p = run(
            cluster,
            "srun",
            "--mpi=pmi2",
            "-N",
            "2",
            "-w",
            "h0,h1",
            "--ntasks-per-node=1",
            PY,
            "-m",
            "commbench",
            "run",
            "PingPong",
            "-msglen",
            str(lens),
            "-iter",
            "6",
            "-iter_policy",
            "off",
            "--timeout",
            "60",
            "-o",
            str(out),
        )
    finally:
        cluster.unlimit("h1")
    assert p.returncode == 0, p.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert doc["metadata"]["rank_hosts"] == ["h0", "h1"]
    rate = doc["records"][-1]["values"]["bytes_per_sec"]
    print(
        "4 MiB PingPong h0<->h1 at tbf 200 Mbit/s: "
        f"{rate / 1e6:.2f} MB/s ({rate / 25e6:.3f} of 25 MB/s)"
    )
    assert abs(rate / 25e6 - 1) < 0.10


def test_diagnosis_under_srun_names_the_rate_limited_node(cluster, tmp_path):
    """The net family (docs/diagnose.md) across the 4 Slurm nodes, h2's link limited to 200 Mbit/s:
    its verdicts name h2 as a host, and no other host (issue 21 item 4)."""
    out = tmp_path / "net.json"
    cluster.limit("h2", 200)
    try:
        p = srun(cluster, 4, 1, "--suite", "net", "--timeout", "60", "-o", str(out), timeout=180)
    finally:
        cluster.unlimit("h2")
    assert p.returncode == 0, p.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert doc["metadata"]["slurm"]["rank_nodes"] == ["h0", "h1", "h2", "h3"]
    hosts = {v["hosts"][0] for v in doc["verdicts"] if v["kind"] == "host"}
    links = {tuple(v["hosts"]) for v in doc["verdicts"] if v["kind"] == "link"}
    assert hosts == {"h2"}, [v["text"] for v in doc["verdicts"]]
    assert all("h2" in link for link in links), [v["text"] for v in doc["verdicts"]]
    assert "SLOW host h2" in p.stdout


def test_health_drains_the_slow_node_and_only_it(cluster, tmp_path):
    """`commbench health --slurm-drain` across the 4 nodes, h2's link limited to 200 Mbit/s
    (known to the test, not to commbench): h2 is named slow with its evidence and drained in
    Slurm with commbench's reason; h0, h1 and h3 stay idle (issue 48, item 3)."""
    out, js = tmp_path / "health.json", tmp_path / "verdicts.json"
    cluster.limit("h2", 200)
    try:
        p = run(
            cluster, "srun", "--mpi=pmi2", "-N", "4", "--ntasks-per-node=1", PY, "-m",
            "commbench", "health", "--slurm-drain", "--timeout", "60", "-o", str(out),
            "--json", str(js), timeout=240,
        )  # fmt: skip
    finally:
        cluster.unlimit("h2")
    try:
        assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]
        states = dict(zip(["h0", "h1", "h2", "h3"], slurm.node_states(cluster.env())))
        assert states == {"h0": "idle", "h1": "idle", "h2": "drain", "h3": "idle"}, states
        why = run(cluster, "sinfo", "-h", "-R", "-o", "%n|%E").stdout.strip().splitlines()
        assert len(why) == 1 and why[0].startswith("h2|commbench: slow: network: host h2"), why
        verdicts = json.loads(js.read_text())["hosts"]
        assert {h: v["verdict"] for h, v in verdicts.items()} == {
            "h0": "good", "h1": "good", "h2": "slow", "h3": "good"
        }  # fmt: skip
        health = json.loads(out.read_text())["health"]  # recorded in the results file
        assert [(d["host"], d["node"], d["ok"]) for d in health["drained"]] == [("h2", "h2", True)]
        assert "  h2    SLOW" in p.stdout and "h2: drained as Slurm node h2" in p.stdout
        # the 4 nodes are namespaces of one machine: their memory is one, not compared
        assert health["notes"] == [
            "shared memory not measured: one rank a host (run two or more a host)",
            "memory not compared: hosts share a machine (one boot id), their copies ran on the "
            "same memory at once",
        ]
    finally:
        for node in ("h0", "h1", "h2", "h3"):  # whatever it drained, for the tests after it
            run(cluster, "scontrol", "update", f"nodename={node}", "state=resume")
        assert slurm.wait_for(lambda: "drain" not in slurm.node_states(cluster.env()), 30)


def test_health_refuses_to_drain_outside_slurm(tmp_path):
    """--slurm-drain on a machine without Slurm (no scontrol on PATH: this Python's and
    mpiexec's folders only): refused before measuring, exit 2."""
    path = os.pathsep.join(dict.fromkeys([str(Path(PY).parent), "/usr/local/bin"]))
    env = {**os.environ, **ENV, "PATH": path}
    p = subprocess.run(
        [PY, "-m", "commbench", "health", "-n", "2", "--slurm-drain", "-o",
         str(tmp_path / "h.json")], capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert "--slurm-drain: no scontrol on PATH: this is not a Slurm cluster" in p.stderr
    assert not (tmp_path / "h.json").exists() and "Benchmarking" not in p.stdout


def _sbatch(c, tmp_path: Path, args: list[str]) -> str:
    script = tmp_path / "job.sh"
    script.write_text(f"#!/bin/sh\nexec srun --mpi=pmi2 {PY} -m commbench run {' '.join(args)}\n")
    p = run(
        c,
        "sbatch",
        "--parsable",
        "-N",
        "4",
        "--ntasks-per-node=1",
        "-o",
        str(tmp_path / "slurm-%j.out"),
        str(script),
    )
    assert p.returncode == 0, p.stderr
    return p.stdout.strip().split(";")[0]


def _gone(c, job: str, timeout: float = 90) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not run(c, "squeue", "-h", "-j", job).stdout.strip():
            return True
        time.sleep(0.3)
    return False


def test_sbatch_four_nodes(cluster, tmp_path):
    out = tmp_path / "r.json"
    job = _sbatch(cluster, tmp_path, ["PingPong", "Allreduce", *SHORT, "-o", str(out)])
    assert _gone(cluster, job), run(cluster, "squeue").stdout
    doc = json.loads(out.read_text())
    assert doc["complete"] is True, (tmp_path / f"slurm-{job}.out").read_text()[-2000:]
    check_placement(cluster, doc["metadata"], 4, 1, job)


def test_scancel_mid_run_keeps_the_records(cluster, tmp_path):
    out = tmp_path / "r.json"
    job = _sbatch(cluster, tmp_path, [*LONG, "-o", str(out)])
    assert wait_for_records(out, 2, 90) >= 2
    assert run(cluster, "scancel", job).returncode == 0
    assert _gone(cluster, job)
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and "SIGTERM" in doc["summary"]["interrupted"]
    assert records_in(out) >= 2 and doc["summary"]["running"] == "Allreduce"
    check_placement(cluster, doc["metadata"], 4, 1, job)


@pytest.mark.parametrize("kill_on_bad_exit", [False, True])
def test_node_failure_mid_run(cluster, tmp_path, kill_on_bad_exit):
    """h2's slurmd and rank die mid-run: the job ends within seconds, rank 0's reason names h2, and
    the records stay. Without --kill-on-bad-exit srun leaves the other ranks blocked in MPI: rank 0
    sees rank 2's connection end and ends the job (commbench.peers); with it, srun's SIGTERM comes
    first and rank 0's reason names the lost rank too."""
    out = tmp_path / "r.json"
    extra = ["--kill-on-bad-exit=1"] if kill_on_bad_exit else []
    cmd = [
        "srun",
        "--mpi=pmi2",
        "-N",
        "4",
        "--ntasks-per-node=1",
        *extra,
        PY,
        "-m",
        "commbench",
        "run",
        *LONG,
        "-o",
        str(out),
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cluster.env(**ENV)
    )
    try:
        before = wait_for_records(out, 3, 90, proc)
        assert before >= 3, proc.communicate()
        killed = cluster.kill_node("h2")
        assert len(killed) == 2  # slurmd and the rank
        t0 = time.monotonic()
        _, err = proc.communicate(timeout=60)
        ended = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        cluster.start_node("h2")  # back for the other tests: its slurmd registers again
    print(
        f"node h2 failed ({'with' if kill_on_bad_exit else 'without'} --kill-on-bad-exit): "
        f"srun ended {ended:.1f} s later"
    )
    assert proc.returncode != 0 and ended < 20, err[-3000:]
    assert "h2: task 2: Killed" in err  # srun's word
    doc = json.loads(out.read_text())
    why = doc["summary"]["interrupted"]
    assert doc["complete"] is False and "rank 2 on h2" in why, why
    assert ("commbench: lost rank 2 on h2" in err) != kill_on_bad_exit, err[-3000:]
    assert len(doc["records"]) >= before and doc["summary"]["running"] == "Allreduce"
    check_placement(cluster, doc["metadata"], 4, 1)


def test_a_failed_start_leaves_nothing():
    """A cluster that cannot start (its slurmctld refuses a broken slurm.conf) says why and
    leaves no daemon, namespace, link or file behind."""

    class Broken(slurm_cluster.SlurmCluster):
        def _configure(self) -> None:
            super()._configure()
            self.conf.write_text(
                self.conf.read_text().replace("SelectType=", "SelectType=select/none\n#")
            )

    c = Broken(2, start_timeout=10)
    with pytest.raises(Unavailable, match="(?s)ended at start.*Can't find plugin for select/none"):
        c.start()
    assert not c.leftovers(), c.leftovers()
    assert not _daemons(c)
