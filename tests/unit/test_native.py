"""The native engine's pattern table without a build: the patterns are the rows of the C
table, the table reader follows the preprocessor, a new row is a new pattern with a new
build key, and every IMB-MPI1 benchmark has a pattern; --engine as the parser takes it.
Building, loading and running the engine are tests/mpi/test_native.py."""

from __future__ import annotations

import shutil
from types import SimpleNamespace

import pytest

from commbench import native, run_config
from commbench.suites import mpi1
from tests.support.native_rows import KERNELS, NEW_ROW
from tests.support.native_rows import with_row as _with_row


def test_patterns_are_the_rows_of_the_c_table():
    src = KERNELS.read_text()
    assert list(native.PATTERNS) == [name for name, _ in native.TABLE]
    assert len(native.TABLE) == src.count("\nP(") >= 21
    for name, args in native.TABLE:
        assert native.PATTERNS[name] is native.ARGS[args]
    # The builders the patterns had before the table, unchanged.
    assert native.TABLE[:4] == [
        ("pingpong", "p2p"),
        ("pingpong_specific", "p2p_specific"),
        ("pingpong_select", "p2p_select"),
        ("pingping", "p2p"),
    ]
    assert (
        dict(native.TABLE)["exchange"] == "exchange" and dict(native.TABLE)["gatherv"] == "vbytes"
    )
    assert dict(native.TABLE)["reduce"] == "floats" and dict(native.TABLE)["barrier"] == "bytes"


def test_table_reader_follows_the_preprocessor(tmp_path):
    f = tmp_path / "k.c"
    f.write_text(
        "/* P(not_a_row, bytes, EACH, x) */\n"
        "#define CB_PATTERNS(P) \\\n"
        "/* P(commented, bytes, EACH, x) */ \\\n"
        "P( one ,bytes,EACH, MPI_Send(s, c, MPI_BYTE, 1, 1, comm); \\\n"
        "        MPI_Recv(r, c, MPI_BYTE, 1, 1, comm, MPI_STATUS_IGNORE)) \\\n"
        "P(two, vbytes, SAME, one)\n"
        "#define OTHER(P) P(three, bytes, EACH, x)\n"
    )
    assert native.read_table(f) == [("one", "bytes"), ("two", "vbytes")]
    assert native.read_table(tmp_path / "missing.c") == []


def test_a_new_row_is_a_new_pattern(tmp_path):
    copy = _with_row(tmp_path)
    assert native.read_table(copy) == [*native.TABLE, ("allreduce_again", "floats")]
    # A changed source is built anew, and so is a changed file it includes.
    mpicc = native.find_mpicc() or "/bin/sh"
    key = native.build_key(mpicc, "mpich", "v", native.SOURCE)
    changed = native.build_key(mpicc, "mpich", "v", copy)
    assert changed != key
    assert [p.name for p in native.local_includes(copy)] == ["abi.h", "collectives.h", "loops.h"]
    (tmp_path / "loops.h").write_text((tmp_path / "loops.h").read_text() + "\n/* changed */\n")
    assert native.build_key(mpicc, "mpich", "v", copy) != changed
    # and so is a change in a file that an included file includes (osu.h: abi.h)
    osu = native.SOURCE.with_name("osu_rma.c")
    assert [p.name for p in native.local_includes(osu)] == ["osu.h", "abi.h"]
    shutil.copy(osu, tmp_path / "osu_rma.c")
    shutil.copy(osu.with_name("osu.h"), tmp_path / "osu.h")
    before = native.build_key(mpicc, "mpich", "v", tmp_path / "osu_rma.c")
    (tmp_path / "abi.h").write_text((tmp_path / "abi.h").read_text() + "\n/* changed */\n")
    assert native.build_key(mpicc, "mpich", "v", tmp_path / "osu_rma.c") != before
    # A row naming a builder that ARGS lacks is refused at once, by name.
    with pytest.raises(RuntimeError, match="no_such_builder"):
        native._patterns(
            native.read_table(
                _with_row(tmp_path, NEW_ROW.replace("floats", "no_such_builder"), "bad.c")
            )
        )


def test_pattern_of_reads_the_native_field():
    assert native.pattern_of(SimpleNamespace(native="gatherv")) == "gatherv"
    assert native.pattern_of(SimpleNamespace(native="comms2")) == "comms2"
    assert native.pattern_of(SimpleNamespace(native=None)) is None
    assert native.pattern_of(SimpleNamespace(native="no_such_pattern")) is None


def test_every_mpi1_benchmark_has_a_native_pattern():
    for b in mpi1.BENCHMARKS:
        assert native.pattern_of(b) is not None, b.name
    assert set(native.PATTERNS) >= {
        "pingpong",
        "pingping",
        "sendrecv",
        "exchange",
        "allreduce",
        "reduce",
        "bcast",
        "barrier",
        "allgather",
        "alltoall",
    }


def test_engine_option():
    assert run_config.parse_run_args(["PingPong"]).engine == "native"
    assert run_config.parse_run_args(["--engine", "MPI4PY"]).engine == "mpi4py"
    assert run_config.parse_run_args(["--engine=both"]).engine == "both"
    with pytest.raises(run_config.ConfigError, match="--engine must be one of native|mpi4py|both"):
        run_config.parse_run_args(["--engine", "numba"])
