"""The native engine on real MPI: same tables and check-mode verdicts as the mpi4py
engine, --engine both, and a clean fallback when it cannot be built or loaded.

Where no MPI C compiler exists (no mpicc beside Python or on PATH, or no cc),
the native engine cannot be built: the tests that need it are skipped, the
fallback tests still run. Where one exists the native engine must build. The pattern table
and --engine, without a build or MPI: tests/unit/test_native.py.
"""

import ctypes
import json
import os
import shutil
import stat

import numpy as np
import pytest

from commbench import native
from commbench.suites import mpi1
from tests.support.mpirun import mpiexec, run_json, tables
from tests.support.native_rows import with_row as _with_row

# Few repetitions and a generous time budget: on a loaded machine a time-out row
# would change a table.
FAST = ["-iter", "20", "-time", "10"]

ALL = [b.name for b in mpi1.BENCHMARKS]
CAN_BUILD = (
    native.find_mpicc() is not None and (shutil.which("cc") or shutil.which("gcc")) is not None
)
needs_native = pytest.mark.skipif(
    not CAN_BUILD, reason="no mpicc/cc here: the native engine cannot be built"
)


def engines_of(doc: dict) -> set:
    return {r["extra"].get("engine") for r in doc["records"]}


@needs_native
@pytest.mark.parametrize("np_", [2, 4])
def test_native_same_tables_and_check_as_mpi4py(tmp_path, np_):
    args = [*FAST, "-msglog", "3", "-check", *ALL]
    got = {}
    for engine in ("native", "mpi4py"):
        d = tmp_path / engine
        d.mkdir()
        p, doc = run_json(d, np_, *args, "--engine", engine)
        assert doc["metadata"]["engine"] == engine, p.stderr
        assert engines_of(doc) == {engine}
        assert "native engine unavailable" not in p.stderr
        assert "!!!!  ALL CHECKED BENCHMARKS SUCCESSFUL; 1 NOT CHECKED !!!! " in p.stdout  # Barrier
        got[engine] = (tables(p.stdout), doc)
    (t_nat, doc_nat), (t_py, doc_py) = got["native"], got["mpi4py"]
    assert t_nat.keys() == t_py.keys() and t_nat
    for key in t_nat:
        rows_n, rows_p = t_nat[key], t_py[key]
        assert [len(r) for r in rows_n] == [len(r) for r in rows_p], key
        if key[0] != "Barrier":
            assert [r[0] for r in rows_n] == [r[0] for r in rows_p], key  # same sizes
            assert all(float(r[-1]) == 0.0 for r in rows_n), key  # defects column
    strip = ("values", "rank_times", "repetitions", "extra", "group_values")
    same = [{k: v for k, v in r.items() if k not in strip} for r in doc_nat["records"]]
    assert same == [{k: v for k, v in r.items() if k not in strip} for r in doc_py["records"]]


@needs_native
def test_native_check_mode_catches_corruption(tmp_path):
    p = mpiexec(
        2,
        "run",
        *FAST,
        "-msglog",
        "2",
        "-check",
        "PingPong",
        "Allreduce",
        "Exchange",
        "--engine",
        "native",
        "-o",
        str(tmp_path / "r.json"),
        env={"COMMBENCH_FAULT_CORRUPT": "1"},
    )
    assert p.returncode == 1, p.stderr[-2000:]
    doc = json.loads((tmp_path / "r.json").read_text())
    assert engines_of(doc) == {"native"}
    for name in ("PingPong", "Allreduce", "Exchange"):
        assert f"{name}    : FAILED !! " in p.stdout


@needs_native
def test_engine_both_gives_binding_overhead(tmp_path):
    p, doc = run_json(
        tmp_path, 2, *FAST, "-msglog", "2", "-check", "--engine", "both", "PingPong", "Barrier"
    )
    assert doc["metadata"]["engine"] == "both"
    recs = doc["records"]
    for name, sizes in (("PingPong", [0, 1, 2, 4]), ("Barrier", [None])):
        for engine in ("native", "mpi4py"):
            mine = [r for r in recs if r["benchmark"] == name and r["extra"]["engine"] == engine]
            assert [r["bytes"] for r in mine] == sizes
        nat = [r for r in recs if r["benchmark"] == name and r["extra"]["engine"] == "native"]
        py = [r for r in recs if r["benchmark"] == name and r["extra"]["engine"] == "mpi4py"]
        assert [r["repetitions"] for r in nat] == [r["repetitions"] for r in py]
    assert p.stdout.count("#    ENGINE: native") == 2 and p.stdout.count("#    ENGINE: mpi4py") == 2
    assert "# Binding overhead" in p.stdout
    rows = doc["summary"]["binding_overhead"]
    assert [(r["benchmark"], r["bytes"]) for r in rows] == [
        ("PingPong", x) for x in (0, 1, 2, 4)
    ] + [("Barrier", None)]
    for r in rows:
        assert r["overhead_us"] == pytest.approx(r["t_mpi4py_us"] - r["t_native_us"])
    assert "!!!!  ALL CHECKED BENCHMARKS SUCCESSFUL; 1 NOT CHECKED !!!! " in p.stdout  # Barrier


def _fallback(tmp_path, mpicc: str) -> tuple:
    env = {"COMMBENCH_MPICC": mpicc, "COMMBENCH_CACHE_DIR": str(tmp_path / "cache")}
    p, doc = run_json(
        tmp_path, 2, *FAST, "-msglog", "2", "-check", "PingPong", "Allreduce", env=env
    )
    assert "!!!!  ALL BENCHMARKS SUCCESSFUL !!!! " in p.stdout
    assert doc["metadata"]["engine"] == "mpi4py"
    assert doc["metadata"]["engine_detail"]["requested"] == "native"
    assert engines_of(doc) == {"mpi4py"}
    notes = [line for line in p.stderr.splitlines() if "native engine unavailable" in line]
    assert len(notes) == 1, p.stderr  # one line, from rank 0 only
    assert "Traceback" not in p.stderr
    return notes[0], doc


def test_fallback_when_compiler_missing(tmp_path):
    note, doc = _fallback(tmp_path, "/nonexistent/mpicc")
    assert "/nonexistent/mpicc" in note and "using the mpi4py engine" in note
    assert doc["metadata"]["engine_detail"]["note"] == note.split("commbench: ", 1)[1]


def test_fallback_when_compiler_fails(tmp_path):
    note, _ = _fallback(tmp_path, shutil.which("false") or "/bin/false")
    assert "failed" in note


def test_fallback_when_library_cannot_be_loaded(tmp_path):
    # A "compiler" that writes a file that is no shared library: the real load path fails.
    fake = tmp_path / "fake-mpicc"
    fake.write_text('#!/bin/sh\nwhile [ "$1" != "-o" ]; do shift; done\necho garbage > "$2"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    note, _ = _fallback(tmp_path, str(fake))
    assert "cannot load" in note


def test_engine_mpi4py_needs_no_compiler(tmp_path):
    env = {"COMMBENCH_MPICC": "/nonexistent/mpicc", "COMMBENCH_CACHE_DIR": str(tmp_path / "cache")}
    p, doc = run_json(tmp_path, 2, *FAST, "-msglog", "1", "--engine", "mpi4py", "PingPong", env=env)
    assert "native engine unavailable" not in p.stderr
    assert doc["metadata"]["engine"] == "mpi4py" and engines_of(doc) == {"mpi4py"}
    assert not os.path.exists(tmp_path / "cache")


# ---------------------------------------------------------------- one table


@needs_native
def test_library_exports_the_table_and_a_new_row_runs(tmp_path, monkeypatch):
    from mpi4py import MPI

    lib = native.load()
    assert list(lib.kernels) == list(native.PATTERNS)
    # The one-row addition builds, exports its table and runs (on COMM_SELF, in this process).
    monkeypatch.setenv("COMMBENCH_CACHE_DIR", str(tmp_path / "cache"))
    path = native.build(
        native.find_mpicc(native.mpi_abi()),
        native.mpi_abi(),
        MPI.Get_library_version(),
        _with_row(tmp_path),
        native.LIB_NAME,
    )
    dll = ctypes.CDLL(str(path))
    dll.cb_patterns.restype = ctypes.c_char_p
    assert dll.cb_patterns().decode().split()[-2:] == ["persist:persist", "allreduce_again:floats"]
    with pytest.raises(native.NativeUnavailable, match="pattern table differs"):
        native.NativeLibrary(path)  # this module's table lacks the new row
    fn = dll.cb_allreduce_again
    fn.restype, fn.argtypes = (
        ctypes.c_double,
        [ctypes.POINTER(native.NativeArgs), ctypes.c_longlong],
    )
    sbuf, rbuf = np.arange(8, dtype=np.float32), np.zeros(8, dtype=np.float32)
    a = native.NativeArgs(
        comm=MPI._addressof(MPI.COMM_SELF),
        sbuf=sbuf.ctypes.data,
        rbuf=rbuf.ctypes.data,
        slots=1,
        count=8,
        rank=0,
        size=1,
        peer=-1,
        source=-1,
    )
    assert fn(ctypes.byref(a), 3) >= 0.0
    assert (rbuf == sbuf).all()
