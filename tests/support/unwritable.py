"""A directory this process cannot write to, for the refusals of an output directory (IMB-IO's
--iodir): tests/unit/test_io.py (the parser) and tests/mpi/test_io.py (a run's exit status)."""

from __future__ import annotations

import os


def unwritable(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    for cand in (str(d), "/sys", "/proc"):
        try:
            fd = os.open(
                os.path.join(cand, ".probe-commbench"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600
            )
        except OSError:
            return cand
        os.close(fd)
        os.remove(os.path.join(cand, ".probe-commbench"))
    return None
