"""Timed regions without Python's cyclic garbage collector.

A collection runs in whichever thread allocates when the allocation counters pass
their thresholds: between the barriers and the timed loop (building a C kernel's
argument block, a p2p size's request lists) it delays one rank by up to a few hundred
microseconds, which the other ranks then time as waiting (PingPong's t_max). Where it
fires depends only on the allocation history, so it is systematic: in one tree the
second size of every PingPong sweep read 1.3-1.5 x its neighbours, rank 1 alone
(docs/engines.md, "Python's garbage collector"). Every timed region of the harness
runs inside quiet_gc(); the collector is back on after it, where nothing is timed.
"""

from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def quiet_gc():
    """Python's cyclic garbage collector off for a timed region (this module's docstring)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
