"""commbench.mpilib.open_mpi_settings: what the launcher sets for Open MPI, and only where the
user has not set it."""

from __future__ import annotations

import pytest

from commbench import mpilib

OPEN_MPI = mpilib.Library("/x/libmpi.so.40", "Open MPI v5.0.11, package: Open MPI")
MPICH = mpilib.Library("/x/libmpi.so.12", "MPICH Version:\t4.0.2")


@pytest.fixture
def bare_host(monkeypatch):
    monkeypatch.setattr(mpilib, "no_rdma_devices", lambda: True)
    monkeypatch.setattr(mpilib, "no_fabric_devices", lambda: True)


def _named(settings) -> dict[str, str]:
    return {s.name: s.value for s in settings}


def test_a_host_without_fabric_devices_gets_btl_ofi_left_out(bare_host):
    got = _named(mpilib.open_mpi_settings(OPEN_MPI, {}))
    assert got["OMPI_MCA_btl"] == "^ofi" and got["OMPI_MCA_osc"] == "^ucx"


def test_the_user_s_own_btl_and_osc_choice_is_kept(bare_host):
    env = {"OMPI_MCA_btl": "self,sm,tcp", "OMPI_MCA_osc": "sm"}
    got = _named(mpilib.open_mpi_settings(OPEN_MPI, env))
    assert "OMPI_MCA_btl" not in got and "OMPI_MCA_osc" not in got


def test_a_host_with_a_fabric_device_keeps_btl_ofi(monkeypatch):
    monkeypatch.setattr(mpilib, "no_rdma_devices", lambda: False)
    monkeypatch.setattr(mpilib, "no_fabric_devices", lambda: False)
    got = _named(mpilib.open_mpi_settings(OPEN_MPI, {}))
    assert "OMPI_MCA_btl" not in got and "OMPI_MCA_osc" not in got


def test_other_libraries_get_nothing_of_open_mpi(bare_host):
    assert mpilib.open_mpi_settings(MPICH, {}) == []
    assert mpilib.open_mpi_settings(None, {}) == []


def test_a_slingshot_device_is_a_fabric_device(monkeypatch):
    listing = {"/sys/class/cxi": ["cxi0"], "/sys/class/infiniband": []}
    monkeypatch.setattr(mpilib.os, "listdir", lambda d: listing[d])
    assert mpilib.no_rdma_devices() and not mpilib.no_fabric_devices()
    listing["/sys/class/cxi"] = []
    assert mpilib.no_fabric_devices()
