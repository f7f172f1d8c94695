"""IMB-IO's catalog without MPI: its benchmarks in the spec's order, their components, modes
and process counts. The kernels, files and checks in real MPI processes are
tests/mpi/test_io.py."""

from __future__ import annotations

from commbench.suites import io

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
