"""msgrate (seed 003): peer layout, cache walk, and the four patterns in real MPI processes."""

import json

import numpy as np
import pytest

from commbench.suites.msgrate.patterns import Cache, peer_lists
from tests.support.mpirun import commbench, mpiexec

PATTERNS = ["single_direction", "pair_based", "pre_post", "all_start"]
SHORT = ["--iters", "3", "--msgs", "8", "--cache-size", "256k"]


@pytest.mark.parametrize(
    "size,peers,ppn", [(7, 6, 1), (8, 6, 1), (7, 5, 1), (12, 4, 2), (9, 3, 3), (3, 2, 1)]
)
def test_peers_match_phase_by_phase(size, peers, ppn):
    """In phase j rank r sends to send_peers[p-j-1], whose recv_peers[j] must be r."""
    lists = [peer_lists(r, size, peers, ppn) for r in range(size)]
    for r in range(size):
        send, recv = lists[r]
        assert r not in send and r not in recv
        assert all(abs(((s - r + size // 2) % size) - size // 2) % ppn == 0 for s in send)
        for j in range(peers):
            dst = send[peers - j - 1]
            assert lists[dst][1][j] == r


def test_cache_walk_writes_every_element():
    c = Cache(4096)
    sbuf = np.zeros(32, np.uint8)
    c.invalidate(sbuf, 7)
    assert np.array_equal(c.a, np.arange(1, 1025, dtype=np.int32))  # a[i] = a[i-1] + 1
    assert (sbuf == 7).all()  # send buffers touched after the walk
    Cache(0).invalidate(sbuf, 1)


@pytest.mark.parametrize("np_,peers", [(3, 2), (4, 3)])
def test_four_patterns(tmp_path, np_, peers):
    out = tmp_path / "mr.json"
    p = mpiexec(
        np_,
        "run",
        "msgrate",
        "--peers",
        str(peers),
        *SHORT,
        "--machine-readable",
        "-o",
        str(out),
        timeout=300,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    for label in ("single direction", "pair-based", "pre-post", "all-start"):
        assert f"{label:>16}: " in p.stdout
    assert f"job size:   {np_}" in p.stdout and f"npeers:     {peers}" in p.stdout
    machine = p.stdout.strip().splitlines()[-1].split()
    assert machine[:7] == [str(np_), str(peers), "3", "8", "8", str(256 * 1024), "1"]
    doc = json.loads(out.read_text())
    recs = doc["records"]
    assert [r["benchmark"] for r in recs] == PATTERNS
    for r, rate in zip(recs, machine[7:]):
        ex = r["extra"]
        assert ex["messages_per_second"] > 0
        assert f"{ex['messages_per_second']:.2f}" == rate
        if r["benchmark"] == "single_direction":
            assert ex["messages_per_rank"] == 3 * 8
            assert len(r["groups"][0]) == np_ - np_ % 2  # an odd last rank sits out
        else:
            assert ex["messages_per_rank"] == 3 * peers * 8 * 2  # sends + receives
            assert r["np"] == np_
        # the rate is the seed's: messages / (average over ranks of their timed seconds)
        assert ex["messages_per_second"] == pytest.approx(
            ex["messages_per_rank"] / ex["avg_time_s"]
        )
    # machine readable results rebuild the same text
    rep = commbench("report", str(out))
    assert rep.returncode == 0 and "       all-start: " in rep.stdout


def test_selected_pattern_and_seed_checks():
    p = mpiexec(3, "run", "msgrate", "all_start", "--peers", "2", *SHORT, "-o", "-")
    assert p.returncode == 0, p.stderr
    assert "all-start: " in p.stdout and "pair-based" not in p.stdout
    p = mpiexec(3, "run", "msgrate", "-o", "-")
    assert p.returncode == 2
    assert (
        "msgrate: job size 3 <= number of peers 6 (run with -n 7 or more, or lower --peers below 3)"
        in p.stderr
    )
    p = mpiexec(4, "run", "msgrate", "--peers", "3", "--ppn", "2", "-o", "-")
    assert p.returncode == 2 and "node count 4 / --ppn 2 = 2 <= number of peers 3" in p.stderr
    p = mpiexec(2, "run", "msgrate", "--peers", "1", "-o", "-")
    assert p.returncode == 2 and "family msgrate needs at least 3 processes, got 2" in p.stderr
    p = commbench("run", "msgrate", "--cache-size", "lots", "-n", "3")
    assert p.returncode == 2 and "--cache-size 'lots'" in p.stderr


def test_single_direction_pairs_as_the_seed_or_the_c_code(tmp_path):
    """The seed's pseudo-code splits single direction's roles on odd/even rank (odd
    ranks send); the Sandia C code pairs the lower half with the upper. The seed is
    the default; each rank reports the partner it used."""
    out = tmp_path / "seed.json"
    p = mpiexec(
        4,
        "run",
        "msgrate",
        "single_direction",
        "pair_based",
        "--peers",
        "3",
        *SHORT,
        "-o",
        str(out),
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert (
        "# single direction pairs: odd-even; barrier before each timed iteration: pre-post and "
        "all-start only"
    ) in p.stdout
    single, pair = json.loads(out.read_text())["records"]
    assert single["extra"]["partners"] == [1, 0, 3, 2] and single["extra"]["senders"] == [1, 3]
    assert single["extra"]["pairing"] == "odd-even" and not single["extra"]["barrier"]
    assert not pair["extra"]["barrier"] and "partners" not in pair["extra"]
    out = tmp_path / "c.json"
    p = mpiexec(
        5,
        "run",
        "msgrate",
        "single_direction",
        "pair_based",
        "--peers",
        "3",
        "--pairing",
        "halves",
        "--barriers",
        *SHORT,
        "-o",
        str(out),
    )
    assert p.returncode == 0, p.stderr[-3000:]
    single, pair = json.loads(out.read_text())["records"]
    assert single["extra"]["partners"] == [2, 3, 0, 1, None] and single["extra"]["senders"] == [
        0,
        1,
    ]
    assert (
        single["extra"]["barrier"]
        and pair["extra"]["barrier"]
        and single["groups"] == [[0, 1, 2, 3]]
    )
    p = mpiexec(4, "run", "msgrate", "--pairing", "diagonal", "-o", "-")
    assert p.returncode == 2 and "--pairing" in p.stderr
