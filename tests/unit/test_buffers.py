"""Buffer patterns and the deviation check on arrays alone. The huge-page tests are
tests/mpi/test_buffers.py: advising the kernel finds libc with ctypes.util.find_library,
which runs ldconfig."""

from __future__ import annotations

import numpy as np

from commbench import buffers


def test_pattern_and_deviation():
    p = buffers.pattern(3, 10)
    assert p.nbytes == 10
    assert buffers.deviation(p.copy(), p) == 0.0
    bad = p.copy()
    bad[3] ^= 0x40  # an exponent bit: far beyond TOL (a low mantissa bit would be within it)
    assert buffers.deviation(bad, p) == 1.0
    s = buffers.reduce_pattern([0, 1], 8).view(np.float32)
    assert s[0] == np.float32(0.1) + np.float32(0.2)
