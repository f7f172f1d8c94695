"""IMB-IO in real MPI processes at 1, 2 and 4 ranks: rows, records, check mode, files.

Every run checks that no file is left behind: after a normal run, after a
failure, and after SIGINT / SIGTERM / SIGKILL sent mid-run. The catalog, the file size
of every sample and the directories the parser refuses: tests/unit/test_io.py.
"""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from commbench import buffers, policy
from commbench.suites import io
from commbench.suites.io import check as io_check
from commbench.suites.io import files as io_files
from tests.support.mpirun import ENV, MPIEXEC, commbench, mpiexec, run_json, tables
from tests.support.unwritable import unwritable as _unwritable


def leftovers(d) -> list[str]:
    return sorted(
        n for n in os.listdir(d) if n.startswith(("IMB_out", ".IMB_out", "commbench-io-"))
    )


# ---------------------------------------------------------------- pure logic


def test_file_pattern_and_shares():
    assert np.array_equal(io_files.file_pattern(0, 1001), buffers.pattern(0, 1001, "int32"))
    whole = io_files.file_pattern(0, 5000)
    for start, n in ((1, 7), (3, 100), (4096, 777)):
        assert np.array_equal(io_files.file_pattern(start, n), whole[start : start + n])
    spec = io.SPECS["P_Write_Indv"]
    for x in (0, 1, 5, 13, 1000):
        parts = [io.share(spec, x, 3, k) for k in range(3)]
        assert sum(ln for _, ln in parts) == x
        assert all(ln == 0 or p + ln <= x for p, ln in parts)
    assert io.share(io.SPECS["P_Read_Priv"], 13, 3, 2) == policy.block_split(13, 3, 0)
    assert io.share(io.SPECS["S_Read_Expl"], 13, 1, 0) == (0, 13)


def test_shared_pointer_checks():
    a, b = buffers.pattern(0, 6, "int32").tobytes(), buffers.pattern(1, 4, "int32").tobytes()
    assert io_check._match_any_order(b + a + a + b, [a, b], 2)
    assert not io_check._match_any_order(b + a + a + a, [a, b], 2)
    limit = 4000
    assert io_check._find_in_file(io_files.file_pattern(1234, 40), limit)
    assert io_check._find_in_file(io_files.file_pattern(17, 3), limit)
    assert not io_check._find_in_file(buffers.pattern(3, 40, "int32"), limit)


# ---------------------------------------------------------------- errors before the run


def test_bad_directory_exit_status(tmp_path):
    missing = str(tmp_path / "missing")
    p = commbench("run", "-n", "2", "--suite", "io", "--iodir", missing, timeout=120)
    assert p.returncode == 2 and "no such directory" in p.stderr and "Benchmarking" not in p.stdout
    p = mpiexec(2, "run", "--suite", "io", "--iodir", missing, "-o", "-", timeout=120)
    assert p.returncode == 2 and "no such directory" in p.stderr and "Benchmarking" not in p.stdout
    ro = _unwritable(tmp_path)
    if ro is not None:
        p = commbench("run", "-n", "2", "--suite", "io", "--iodir", ro, timeout=120)
        assert p.returncode == 2 and "not writable" in p.stderr


# ---------------------------------------------------------------- every benchmark, every row


def _check_run(p, doc, np_, sizes, npmin, iodir):
    out = p.stdout
    t = tables(out)
    for b in io.BENCHMARKS:
        spec = b.variant
        nps = [1] if spec is not None and spec.cls == "S" else policy.np_sequence(np_, npmin)
        for n in nps:
            rows = t[(b.name, n)]
            if spec is None:
                assert len(rows) == 1 and len(rows[0]) == 4, (b.name, rows)
                continue
            assert len(rows) == len(sizes) * len(b.modes), (b.name, n, rows)
            width = 7 if spec.nonblocking or spec.cls != "S" else 5
            for r in rows:
                assert len(r) == width and all(float(v) >= 0 for v in r), (b.name, r)
                assert float(r[-1]) == 0.0  # defects
    assert "!!!!  ALL CHECKED BENCHMARKS SUCCESSFUL; 1 NOT CHECKED !!!! " in out
    assert (
        out.count(": Successful") == 36
        and "Open_Close    : not checked (no verifier looked at its data)" in out
    )  # no data to verify
    assert "# performance of" in out and "MFlops" in out
    assert "# Minimum io portion in bytes:   0" in out
    recs = [r for r in doc["records"] if r["status"] == "ok"]
    assert doc["complete"] and len(recs) == sum(len(v) for v in t.values())
    cpus = {r["values"]["t_cpu"] for r in recs if r["kind"] == "overlap"}
    assert len(cpus) == 1 and cpus.pop() > 0  # t_CPU calibrated once: identical in every row
    for r in recs:
        spec = io.SPECS.get(r["benchmark"])
        if spec is None:
            assert r["mode"] == "" and r["bytes"] is None
            continue
        assert r["mode"] in io.FAMILY.get(r["benchmark"]).modes
        assert r["defects"] is not None and r["defects"] <= policy.TOL
        if spec.nonblocking:
            assert 0.0 <= r["values"]["overlap"] <= 100.0
        elif r["bytes"]:
            assert r["values"]["bytes_per_sec"] == pytest.approx(
                r["bytes"] / (r["values"]["t_max"] * 1e-6)
            )
    assert leftovers(iodir) == []


@pytest.mark.parametrize("np_", [1, 2, 4])
def test_every_io_benchmark(tmp_path, np_):
    """np 1: dynamic policy (preliminary runs reset the pointers) in a user directory;
    np 2: the private temporary directory (TMPDIR), removed at the end; np 4: NP = 4 only."""
    d = tmp_path / "files"
    d.mkdir()
    args = ["--suite", "io", "-check"]
    env = None
    if np_ == 1:
        sizes, npmin = [0, 1, 2, 4, 8], 1
        args += ["-msglog", "0:3", "-iter", "3,16,2", "--iodir", str(d)]
    elif np_ == 2:
        sizes, npmin = [0, 1, 2, 4], 1
        args += ["-msglog", "0:2", "-iter", "3,16,2,off"]
        env = {"TMPDIR": str(d)}
    else:
        sizes, npmin = [0, 1, 2], 4
        args += ["-msglog", "1", "-iter", "2,16,2,off", "-npmin", "4", "--iodir", str(d)]
    p, doc = run_json(tmp_path, np_, *args, env=env, timeout=300)
    _check_run(p, doc, np_, sizes, npmin, d)
    assert doc["config"]["profile"] == "io"
    assert "# !! Attention: TARGET_CPU_SECS = 0.001 s" in p.stdout  # check mode shrinks it
    if np_ == 1:  # the same text rebuilt from the results file, preamble lines included
        rep = commbench("report", str(tmp_path / "r1.json"))
        assert rep.returncode == 0 and rep.stdout == p.stdout


def test_multi_and_write_check_catches_corruption(tmp_path):
    d = tmp_path / "files"
    d.mkdir()
    p, doc = run_json(
        tmp_path,
        4,
        "-msglog",
        "0:2",
        "-iter",
        "2,16,2,off",
        "-multi",
        "1",
        "-check",
        "--io-info",
        "romio_cb_write=enable",
        "--iodir",
        str(d),
        "S_Write_Indv",
        "P_Read_Priv",
        "C_IWrite_Expl",
        "P_Write_Shared",
        "Open_Close",
        timeout=300,
    )
    assert "# Benchmarking Multi-S_Write_Indv " in p.stdout
    assert '# romio_cb_write = "enable"' in p.stdout  # MPI_Info hints of every open (spec §14.1)
    assert "# ( 4 groups of 1 processes each running simultaneous ) " in p.stdout
    assert "# ( 2 groups of 2 processes each running simultaneous ) " in p.stdout
    assert "ALL CHECKED BENCHMARKS SUCCESSFUL; 1 NOT CHECKED" in p.stdout  # Open_Close
    assert all(
        len(r["group_values"]) == 4 for r in doc["records"] if r["benchmark"] == "S_Write_Indv"
    )
    assert leftovers(d) == []
    # rank 1 writes corrupted data: the read-back by file rank 0 must notice
    out = tmp_path / "bad.json"
    p = mpiexec(
        2,
        "run",
        "-msglog",
        "0:3",
        "-iter",
        "2,16,2,off",
        "-check",
        "--iodir",
        str(d),
        "-o",
        str(out),
        "P_Write_Indv",
        "C_IWrite_Shared",
        "P_Write_Shared",
        env={"COMMBENCH_FAULT_CORRUPT": "1"},
        timeout=300,
    )
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    assert "!!!!  3  BENCHMARKS FAILED     !!!! " in p.stdout
    recs = json.loads(out.read_text())["records"]
    bad = [r for r in recs if r["np"] == 2 and r["bytes"] and r["bytes"] >= 8]  # rank 1 has a share
    assert bad and all(r["defects"] == 1.0 for r in bad)
    assert leftovers(d) == []


def test_failure_mid_run_leaves_nothing(tmp_path):
    d = tmp_path / "files"
    d.mkdir()
    p = mpiexec(
        2,
        "run",
        "-msglog",
        "2",
        "-iter",
        "2,16,2,off",
        "--iodir",
        str(d),
        "-o",
        "-",
        "P_Write_Priv",
        "P_Read_Indv",
        env={"COMMBENCH_FAULT_IO_FAIL": "1"},
        timeout=300,
    )
    assert p.returncode != 0 and "injected failure" in p.stderr
    deadline = time.time() + 20  # the guardian sweeps once the ranks are gone
    while leftovers(d) and time.time() < deadline:
        time.sleep(0.2)
    assert leftovers(d) == []


# ---------------------------------------------------------------- interrupted runs


def _start_long_run(tmp_path, iodir: str | None, tmpdir: str):
    cmd = [
        MPIEXEC,
        "-n",
        "2",
        sys.executable,
        "-m",
        "commbench",
        "run",
        "--suite",
        "io",
        "-msglog",
        "0:16",
        "-iter",
        "50,16,10",
        "-o",
        str(tmp_path / "r.json"),
    ]
    if iodir:
        cmd += ["--iodir", iodir]
    env = dict(os.environ, **ENV, TMPDIR=tmpdir)
    return subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
        cwd=os.getcwd(),
    )


def _wait_for_files(d, pred, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        found = []
        for _root, _, files in os.walk(d):
            found += [f for f in files if f.startswith("IMB_out")]
        if pred(found):
            return found
        time.sleep(0.01)  # a quiet machine writes S_Write_Indv's file in well under a second
    raise AssertionError(f"no IO file appeared in {d}")


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_interrupted_run_leaves_nothing(tmp_path, how):
    """The signal goes to mpiexec's process group, as a Ctrl-C,
    a scheduler or a kill -9 would send it."""
    d = tmp_path / "files"
    d.mkdir()
    user_dir = how != "SIGTERM"  # SIGTERM: the private temporary directory under TMPDIR
    proc = _start_long_run(tmp_path, str(d) if user_dir else None, str(d))
    try:
        _wait_for_files(d, lambda f: len(f) > 0)
        time.sleep(0.5)  # mid-benchmark
        os.killpg(proc.pid, getattr(signal, how))
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode != 0
    deadline = time.time() + 20  # SIGKILL: the guardian sweeps after the ranks died
    while leftovers(d) and time.time() < deadline:
        time.sleep(0.2)
    err = proc.stderr.read().decode()
    assert leftovers(d) == [], err[-2000:]
    if how != "SIGKILL":  # the ranks themselves cleaned up (not only the guardian)
        assert f"{how}: IO files removed, exiting" in err, err[-2000:]


def test_foreign_file_between_benchmarks_is_never_deleted(tmp_path):
    """A file that appears in --iodir mid-run under the name a later benchmark needs:
    a clear message (no traceback), exit non-zero, records kept, and the file left
    exactly as it was, by the ranks and by the guardian (which sweeps only files the
    run listed as its own)."""
    d = tmp_path / "files"
    d.mkdir()
    out = tmp_path / "r.json"
    cmd = [
        MPIEXEC,
        "-n",
        "2",
        sys.executable,
        "-m",
        "commbench",
        "run",
        "--suite",
        "io",
        "S_Write_Indv",
        "P_Write_Indv",
        "-msglog",
        "0:16",
        "-iter",
        "2000,16,10",
        "--iodir",
        str(d),
        "-o",
        str(out),
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, **ENV)
    )
    try:
        _wait_for_files(d, lambda f: "IMB_out_0" in f)  # S_Write_Indv's file: the run is under way
        (d / "IMB_out").write_text("not commbench's\n")  # P_Write_Indv's name
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err[-2000:]
    assert "IMB_out exists and was not created by this commbench run; it is left untouched" in err
    assert "Traceback" not in err and "internal error" not in err
    time.sleep(3)  # the guardian's sweeps
    assert (d / "IMB_out").read_text() == "not commbench's\n"
    assert sorted(os.listdir(d)) == ["IMB_out"]
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and any(
        r["benchmark"] == "S_Write_Indv" for r in doc["records"]
    )
