"""MPI_Scan and MPI_Exscan's names in every collective family (commbench's own collectives,
issue 47 item 3): IMB's families (IMB-MPI1, IMB-NBC, IMB-MPI4) and OSU's.
tests/unit/test_scan.py (offered by name only) and tests/mpi/test_scan.py (run and checked)."""

from __future__ import annotations

IMB = {
    "mpi1": ["Scan", "Exscan"],
    "nbc": ["Iscan", "Iscan_pure", "Iexscan", "Iexscan_pure"],
    "mpi4": ["Scan_persist", "Scan_persist_pure", "Exscan_persist", "Exscan_persist_pure"],
}
OSU = ["scan", "exscan", "iscan", "iexscan", "scan_persistent", "exscan_persistent"]
