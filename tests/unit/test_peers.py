"""The watchdog's channel to rank 0 (commbench.peers) in one process: rank 0's word reaches
the others over real sockets, and the watchdog's report names the hosts of silent and lost
ranks. A rank in another process killed is tests/mpi/test_peers.py."""

from __future__ import annotations

from commbench import peers
from commbench.watchdog import Watchdog
from tests.support.waiting import until as _until


def test_rank0_word_reaches_the_others_and_its_end_is_seen():
    hub = peers.Hub(3)
    info = hub.open()
    a, b = peers.Link(1, "x", info), peers.Link(2, "y", info)
    assert _until(lambda: (hub.poll(0.05), len(hub.known) == 2)[1])
    a.send({"state": {"phase": "the timed kernel"}})  # a watchdog report, on the held connection
    assert hub.collect(2)[1]["state"]["phase"] == "the timed kernel"
    assert a.poll() is None  # rank 0 is there and silent
    hub.close({"word": "end", "status": 124})
    assert a.wait(5) == "end" and a.word["status"] == 124
    assert b.wait(5) == "end"
    # rank 0 that ends without a word: "gone"
    hub = peers.Hub(2)
    c = peers.Link(1, "z", hub.open())
    assert _until(lambda: (hub.poll(0.05), 1 in hub.known)[1])
    hub.listener.close()
    for conn in list(hub.peers):
        conn.close()
    assert c.wait(5) == "gone"


def test_report_names_the_hosts_of_silent_and_lost_ranks(capsys):
    wd = Watchdog(7, 0, 4, host="h0")
    wd.hub = peers.Hub(4)
    for r, h in ((1, "h1"), (2, "h2"), (3, "h2")):
        wd.hub.known[r] = peers.Peer(rank=r, host=h)
    wd.hub.lost[3] = wd.hub.known[3]
    state = {"benchmark": "Allreduce", "np": 4, "bytes": 8, "phase": "the timed kernel"}
    why = wd.report(
        state, {0: {"host": "h0", "pid": 1, "state": state}, 1: {"host": "h1", "pid": 2}}
    )
    err = capsys.readouterr().err
    assert why.endswith("ranks not answering: 2 3 on h2")
    assert (
        "ranks 2 3 did not answer" in err
        and "(2 3 on h2)" in err
        and "of them, 3 on h2 ended" in err
    )
    assert wd.where([0, 1, 3]) == "0 on h0, 1 on h1, 3 on h2"
    wd.hub.close()
