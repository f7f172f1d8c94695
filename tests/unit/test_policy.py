"""Pure arithmetic of spec §3–§6: no MPI."""

import random

from commbench import policy


def test_np_sequence():
    assert policy.np_sequence(11, 2) == [2, 4, 8, 11]
    assert policy.np_sequence(11, 5) == [5, 10, 11]
    assert policy.np_sequence(4, 2) == [2, 4]
    assert policy.np_sequence(3, 2) == [2, 3]
    assert policy.np_sequence(1, 2) == [1]
    assert policy.np_sequence(4, 8) == [4]
    assert policy.np_sequence(5, 1) == [1, 2, 4, 5]


def test_size_lists():
    assert policy.size_list(1, 0, 22)[:4] == [0, 1, 2, 4]
    assert policy.size_list(1, 0, 22)[-1] == 4194304
    assert len(policy.size_list(1, 0, 22)) == 24
    assert policy.size_list(4, 0, 22)[:4] == [0, 4, 8, 16]
    assert policy.size_list(1, 3, 7) == [0, 8, 16, 32, 64, 128]
    assert policy.size_list(1, 0, 16)[-1] == 65536


def test_user_sizes_rounded_and_truncated():
    sizes, notes = policy.user_size_list((3, 5000000, 0), 4, 22)
    assert sizes == [4, 4194304, 0]
    assert notes == [
        "Attention, msg size 5000000 truncated to 4194304",
        "# -msglen: sizes are multiples of 4 bytes here: rounded up 3 to 4",
    ]
    # rounded or repeated lengths give one row each
    assert policy.user_size_list((3, 4, 8, 8), 4, 22)[0] == [4, 8]


def test_base_repetitions_standard_profile():
    p = policy.STANDARD
    reps = [
        policy.base_repetitions(x, p.msgspersample, p.overall_vol)
        for x in (0, 32768, 65536, 131072, 262144, 524288, 1 << 20, 1 << 21, 1 << 22)
    ]
    assert reps == [1000, 1000, 640, 320, 160, 80, 40, 20, 10]


def test_base_repetitions_io_profile():
    p = policy.IO
    assert policy.base_repetitions(1 << 18, p.msgspersample, p.overall_vol) == 50
    assert policy.base_repetitions(1 << 19, p.msgspersample, p.overall_vol) == 32
    assert policy.base_repetitions(1 << 24, p.msgspersample, p.overall_vol) == 1
    assert policy.base_repetitions(1 << 20, p.msgs_nonaggr, p.overall_vol) == 10
    assert policy.base_repetitions(1 << 22, p.msgs_nonaggr, p.overall_vol) == 4


def test_multiple_np_is_multiple_of_np():
    for np_ in (2, 3, 4, 7):
        for x in (0, 4, 1024, 1 << 22):
            n = policy.multiple_np_repetitions(x, np_, 1000, 22)
            assert n % np_ == 0 and n >= np_
    assert policy.multiple_np_repetitions(0, 2, 1000, 22) == 1000


def test_dynamic_policy_steps():
    assert policy.preliminary_repetitions(1e-6, 1000) == 1000
    assert policy.preliminary_repetitions(0.01, 1000) == 100
    assert policy.preliminary_repetitions(2.0, 1000) == 1
    assert policy.dynamic_target(0.001, 10, 1000) == 10001
    assert policy.dynamic_target(1e-9, 10, 640) == 640
    # non-increasing without -msglen
    assert policy.dynamic_repetitions(1000, 5000, 300, 64, None) == 300
    # with -msglen: an earlier smaller size bounds from above, a larger from below
    assert policy.dynamic_repetitions(1000, 900, 0, 100, [(10, 500)]) == 500
    assert policy.dynamic_repetitions(1000, 100, 0, 100, [(1000, 400)]) == 400


def test_time_budget():
    assert policy.time_budget(10, 22, 0, 0) == 210
    assert policy.time_budget(1, 1, 0, 0) == 1
    assert policy.time_budget(2, 22, 0, 30) == 58


def test_off_cache_slots():
    s = policy.off_cache_slots(1000, 1000, 8.0, 64)
    assert s.stride == (16 + 2) * 64
    assert s.count == 1000  # ceil(16 MiB / 1152) slots would be more than n0
    assert policy.off_cache_slots(1000, 100000, 8.0, 64).count == -(-2 * 8 * 2**20 // s.stride)
    big = policy.off_cache_slots(4 << 20, 10, 8.0, 64)
    assert big.count == 4  # ceil(16 MiB / (4 MiB + 2 lines))
    assert policy.off_cache_slots(1000, 3, 8.0, 64).count == 3


def test_block_split_sums_to_x():
    for x in (0, 1, 7, 64, 1001, 4096):
        for np_ in (1, 2, 3, 4, 7):
            parts = [policy.block_split(x, np_, k) for k in range(np_)]
            assert sum(length for _, length in parts) == x
            pos = 0
            for off, length in parts:
                if length:
                    assert off == pos
                    pos += length


def test_even_counts_and_map_key():
    assert policy.even_counts(10, 4) == [3, 3, 2, 2]
    assert sum(policy.even_counts(1, 3)) == 1
    # -map 3x2: ranks fill columns of 3 rows, taken row by row
    keys = [policy.map_key(r, 3, 2) for r in range(6)]
    assert sorted(range(6), key=lambda r: keys[r]) == [0, 3, 1, 4, 2, 5]


def test_sizes_below_the_unit():
    # -msglog 1 with 4-byte elements: X_max = 0, so the one size 0 (spec §4)
    assert policy.size_list(4, 0, 1) == [0]
    assert policy.size_list(4, 0, 2) == [0, 4]


def test_dynamic_repetitions_with_history_stay_monotone_in_any_order():
    """Shuffled sizes use -msglen's rule (history of every size done): however the sizes
    come, a larger size never gets more repetitions than a smaller one, and in
    ascending order the rule gives what IMB's n_prev rule gives."""
    rng = random.Random(3)
    sizes = [0] + [2**i for i in range(21)]
    for trial in range(200):
        n0 = {x: policy.base_repetitions(x, 1000, 2**20) for x in sizes}
        ts = {x: rng.randint(1, 3000) for x in sizes}
        order = sizes[:] if trial == 0 else rng.sample(sizes, len(sizes))
        history: list[tuple[int, int]] = []
        got = {}
        for x in order:
            got[x] = policy.dynamic_repetitions(n0[x], ts[x], 0, x, history)
            history.append((x, got[x]))
        counts = [got[x] for x in sizes]
        assert counts == sorted(counts, reverse=True), (order, counts)
        if trial == 0:
            n_prev, imb = 1000, []
            for x in sizes:
                n_prev = policy.dynamic_repetitions(n0[x], ts[x], n_prev, x, None)
                imb.append(n_prev)
            assert counts == imb
