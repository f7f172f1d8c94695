"""The harness's timed regions run without Python's cyclic garbage collector
(commbench.harness.quiet): a collection between the barriers and the timed loop
delays one rank, which the others time as waiting."""

from __future__ import annotations

import gc

import pytest

from commbench.harness.quiet import quiet_gc


def test_the_collector_is_off_inside_and_back_after():
    assert gc.isenabled()
    with quiet_gc():
        assert not gc.isenabled()
        with quiet_gc():  # nested regions leave it off until the outer one ends
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), quiet_gc():
        raise RuntimeError("a failed measurement")
    assert gc.isenabled()


def test_no_collection_runs_inside_even_when_garbage_piles_up():
    fired = []
    gc.callbacks.append(lambda phase, info: fired.append(phase))
    try:
        with quiet_gc():
            for _ in range(200_000):  # cyclic garbage past every threshold
                a: list = []
                a.append(a)
            inside = list(fired)
        assert inside == [] and fired  # none inside; the first allocation after the region collects
    finally:
        gc.callbacks.pop()
    gc.collect()
