"""IMB-IO's catalog without MPI: its benchmarks in the spec's order, their components, modes
and process counts; the file each benchmark needs for every sample, and the output
directories the parser refuses. The kernels, files and checks in real MPI processes are
tests/mpi/test_io.py."""

from __future__ import annotations

import pytest

from commbench import run_config
from commbench.suites import io
from tests.support.unwritable import unwritable as _unwritable

ALL = [b.name for b in io.BENCHMARKS]
SPEC_ORDER = [
    "S_Write_Indv",
    "S_IWrite_Indv",
    "S_Write_Expl",
    "S_IWrite_Expl",
    "P_Write_Indv",
    "P_IWrite_Indv",
    "P_Write_Shared",
    "P_IWrite_Shared",
    "P_Write_Priv",
    "P_IWrite_Priv",
    "P_Write_Expl",
    "P_IWrite_Expl",
    "C_Write_Indv",
    "C_IWrite_Indv",
    "C_Write_Shared",
    "C_IWrite_Shared",
    "C_Write_Expl",
    "C_IWrite_Expl",
]

SPEC_ORDER += [n.replace("Write", "Read") for n in SPEC_ORDER] + ["Open_Close"]


def test_names_order_and_kinds():
    assert ALL == SPEC_ORDER and len(ALL) == 37  # spec §10.1, all default
    assert io.FAMILY.default_list() == SPEC_ORDER
    b = io.FAMILY.get("p_iwrite_shared")
    assert b.components == ("t_ovrl", "t_pure", "t_cpu") and b.modes == ("AGGREGATE",)
    assert io.FAMILY.get("C_Write_Expl").modes == ("AGGREGATE", "NON-AGGREGATE")
    assert io.FAMILY.get("S_IRead_Indv").procs.fixed == 1 and io.FAMILY.get("S_IRead_Indv").slots
    assert io.FAMILY.get("Open_Close").nonaggr_cap


def test_file_size_covers_every_sample():
    cfg = run_config.parse_run_args(
        ["--suite", "io", "-msglog", "0:10", "-iter", "7,1,3,off"], world_size=4
    )
    for spec in io.SPECS.values():
        for np_ in (1, 2, 4):
            nbytes = io.file_bytes(cfg, spec, np_)
            for x in io.io_sizes(cfg):
                span = io.share(spec, x, np_, 0)[1] if spec.per_process else x
                assert 7 * span <= nbytes
    need, why = io.disk_need(cfg, 4)
    assert need > 0 and "NP=" in why


def test_bad_directories_refused(tmp_path):
    def err(*args):
        with pytest.raises(run_config.ConfigError) as e:
            run_config.parse_run_args(["--suite", "io", *args], world_size=2)
        return str(e.value)

    assert "no such directory" in err("--iodir", str(tmp_path / "missing"))
    f = tmp_path / "file"
    f.write_text("x")
    assert "not a directory" in err("--iodir", str(f))
    (tmp_path / "IMB_out_3").write_text("someone else's")
    msg = err("--iodir", str(tmp_path))
    assert "IMB_out_3" in msg and "never overwrites" in msg
    assert (tmp_path / "IMB_out_3").read_text() == "someone else's"
    ro = _unwritable(tmp_path)
    if ro is not None:
        assert "not writable" in err("--iodir", ro)
    assert "is not key=value" in err("--io-info", "striping_factor")
    # far more than any disk: 1 GiB portions, 10000 repetitions each
    big = tmp_path / "big"
    big.mkdir()
    msg = err("--iodir", str(big), "-msglog", "30", "-iter", "10000,off", "S_Write_Indv")
    assert "the run needs about" in msg and "S_Write_Indv" in msg
