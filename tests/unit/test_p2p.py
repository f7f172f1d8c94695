"""IMB-P2P's process grids without MPI: the process counts Stencil2D and Stencil3D run at and
their shapes; the sizes and iterations the parser makes of IMB-P2P's options, -msglog against
-msglen, and PingPong alone still IMB-MPI1's. The family in real MPI processes is
tests/mpi/test_p2p.py."""

from __future__ import annotations

import pytest

from commbench import run_config
from commbench.suites.p2p.spec import grid2d, grid3d


def test_grids_are_imb_p2ps():
    assert [p for p in range(1, 17) if grid2d(p)] == [4, 6, 8, 9, 10, 12, 14, 15, 16]
    assert grid2d(6) == (3, 2) and grid2d(8) == (2, 4)
    assert {p: grid3d(p) for p in range(1, 25) if grid3d(p)} == {
        8: (2, 2, 2),
        12: (2, 3, 2),
        16: (2, 2, 4),
        18: (2, 3, 3),
        20: (2, 2, 5),
        24: (2, 4, 3),
    }


@pytest.mark.parametrize(
    "argv, sizes, reps",
    [
        ([], [0] + [2**k for k in range(23)], (100000, 800)),  # IMB-P2P's defaults
        (["-msglog", "3"], [0, 1, 2, 4, 8], (100000, 800)),
        (["-msglog", "2:4"], [4, 8, 16], (100000, 800)),  # no 0, unlike IMB-MPI1's -msglog 2:4
        (["-msgsz", "3,1k,2m"], [3, 1024, 2 * 2**20], (100000, 800)),
        (["-msglog", "1", "-msgsz", "5", "-iter", "7,2"], [0, 1, 2, 5], (7, 2)),
    ],
)
def test_sizes_and_iterations_are_imb_p2ps(argv, sizes, reps):
    cfg = run_config.parse_run_args(["--suite", "p2p", *argv, "-o", "-"], world_size=2)
    assert cfg.params["p2p_sizes"] == sizes
    assert (cfg.msgspersample, cfg.overall_vol // 2**20) == reps


def test_msglog_contradicts_msglen(tmp_path):
    (tmp_path / "lens").write_text("8\n1k\n")
    assert run_config.parse_run_args(
        ["--suite", "p2p", "-msglen", str(tmp_path / "lens"), "-msgsz", "7", "-o", "-"],
        world_size=2,
    ).params["p2p_sizes"] == [8, 1024, 7]
    with pytest.raises(run_config.ConfigError, match="-msglog contradicts -msglen"):
        run_config.parse_run_args(
            ["--suite", "p2p", "-msglog", "3", "-msglen", str(tmp_path / "lens"), "-o", "-"]
        )


def test_pingpong_alone_keeps_selecting_imb_mpi1():
    assert run_config.parse_run_args(["PingPong", "-o", "-"]).family == "mpi1"
    assert run_config.parse_run_args(["--suite", "p2p", "PingPong", "-o", "-"]).family == "p2p"
    assert run_config.parse_run_args(["IMB-P2P", "PingPing", "-o", "-"]).family == "p2p"
    assert run_config.parse_run_args(["Stencil2D", "-o", "-"]).family == "p2p"
