"""Conformance of the text view with IMB's layout (spec §14): lines, columns, widths.

The expected blocks are the spec's §14.6 example, built from synthetic records
(no MPI): the view must reproduce them character for character.
"""

import io

from commbench import records
from commbench.suites.base import Kind
from commbench.views.imb_text import ImbText, columns, dash

SPEC_BLOCKS = r"""
#---------------------------------------------------
# Benchmarking PingPong 
# #processes = 2 
#---------------------------------------------------
       #bytes #repetitions      t[usec]   Mbytes/sec
            0         1000         0.52         0.00
            1         1000         0.55         1.82

#-----------------------------------------------------------------------------
# Benchmarking Sendrecv 
# #processes = 4 
#-----------------------------------------------------------------------------
       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]   Mbytes/sec
            0         1000         0.91         0.95         0.93         0.00
            1         1000         0.97         1.01         0.99         1.98

#----------------------------------------------------------------
# Benchmarking Allreduce 
# #processes = 4; rank order (rowwise): 
#     0    3
# 
#     1    4
# 
# ( 2 additional processes waiting in MPI_Barrier)
#----------------------------------------------------------------
       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]
            0         1000         0.04         0.05         0.04
            4         1000         1.71         1.93         1.80

#---------------------------------------------------
# Benchmarking Barrier 
# #processes = 4 
#---------------------------------------------------
 #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]
         1000         2.10         2.12         2.11
"""

MULTI_BLOCK = r"""
#----------------------------------------------------------------
# Benchmarking Multi-PingPing 
# ( 3 groups of 2 processes each running simultaneous ) 
# Group  0:     0    3
# 
# Group  1:     1    4
# 
# Group  2:     2    5
# 
#----------------------------------------------------------------
        Group       #bytes #repetitions      t[usec]   Mbytes/sec

            0            0         1000         0.71         0.00
            1            0         1000         0.73         0.00
            2            0         1000         0.70         0.00
"""


def rec(name, kind, np_, x, times_us, groups, world, factor_turnover=1.0, reps=1000):
    """A record whose per-rank times (µs) reproduce the spec's numbers."""
    rank_times = {"t": [None] * world}
    for r, t in times_us.items():
        rank_times["t"][r] = t * 1e-6
    return records.build(
        benchmark=name,
        family="mpi1",
        kind=kind,
        np_=np_,
        mode="",
        x=x,
        repetitions=reps,
        groups=groups,
        world_size=world,
        components=["t"],
        rank_times=rank_times,
        turnover=factor_turnover,
    )


def render(recs, cfg):
    out = io.StringIO()
    v = ImbText(out)
    v.cfg = cfg
    for r in recs:
        v.record(r)
    return out.getvalue()


def test_spec_example_blocks():
    cfg = {"multi": None, "check": False, "map": None, "mb_unit": 10**6}
    recs = [
        rec("PingPong", Kind.SINGLE, 2, 0, {0: 0.52, 1: 0.50}, [[0, 1]], 2),
        rec("PingPong", Kind.SINGLE, 2, 1, {0: 0.55, 1: 0.549}, [[0, 1]], 2),
        rec(
            "Sendrecv",
            Kind.PARALLEL,
            4,
            0,
            {0: 0.91, 1: 0.95, 2: 0.93, 3: 0.93},
            [[0, 1, 2, 3]],
            4,
            2.0,
        ),
        rec(
            "Sendrecv",
            Kind.PARALLEL,
            4,
            1,
            {0: 0.97, 1: 1.01, 2: 0.99, 3: 0.99},
            [[0, 1, 2, 3]],
            4,
            2.0,
        ),
    ]
    text = render(recs, cfg)
    cfg_map = {"multi": None, "check": False, "map": [3, 2], "mb_unit": 10**6}
    text += render(
        [
            rec(
                "Allreduce",
                Kind.COLLECTIVE,
                4,
                0,
                {0: 0.04, 3: 0.05, 1: 0.04, 4: 0.04},
                [[0, 3, 1, 4]],
                6,
            ),
            rec(
                "Allreduce",
                Kind.COLLECTIVE,
                4,
                4,
                {0: 1.71, 3: 1.93, 1: 1.80, 4: 1.76},
                [[0, 3, 1, 4]],
                6,
            ),
        ],
        cfg_map,
    )
    text += render(
        [
            rec(
                "Barrier",
                Kind.SYNC,
                4,
                None,
                {0: 2.10, 1: 2.12, 2: 2.11, 3: 2.11},
                [[0, 1, 2, 3]],
                4,
            )
        ],
        cfg,
    )
    assert text.strip("\n") == SPEC_BLOCKS.strip("\n")


def test_multi_block():
    cfg = {"multi": 1, "check": False, "map": [3, 2], "mb_unit": 10**6}
    groups = [[0, 3], [1, 4], [2, 5]]
    r = rec(
        "PingPing",
        Kind.SINGLE,
        2,
        0,
        {0: 0.71, 3: 0.70, 1: 0.73, 4: 0.72, 2: 0.70, 5: 0.69},
        groups,
        6,
    )
    assert render([r], cfg).strip("\n") == MULTI_BLOCK.strip("\n")


def test_column_sets_and_dash_widths():
    def cols(kind, **kw):
        r = records.Measurement(
            benchmark="X",
            family="f",
            kind=kind.value,
            np=2,
            mode="",
            bytes=0,
            repetitions=1,
            groups=kw.get("groups", [[0, 1]]),
            world_size=2,
        )
        return columns(r, kw.get("multi"), kw.get("check", False))

    assert cols(Kind.SINGLE) == ["#bytes", "#repetitions", "t[usec]", "Mbytes/sec"]
    assert cols(Kind.SINGLE, groups=[[0], [1]], multi=0)[2:5] == [
        "t_min[usec]",
        "t_max[usec]",
        "t_avg[usec]",
    ]
    assert cols(Kind.OVERLAP)[-1] == " overlap[%]"
    assert cols(Kind.PASSIVE) == ["#bytes", "#repetitions", "t_pure[usec]", "t_ovrl[usec]"]
    assert cols(Kind.OVERLAP_SYNC)[0] == "#repetitions"
    assert dash(4) == "#" + "-" * 51 and len(dash(6)) == 78


def test_status_rows_and_trailer():
    out = io.StringIO()
    v = ImbText(out)
    v.cfg = {"multi": None, "check": True, "map": None, "mb_unit": 10**6}
    r = rec("PingPong", Kind.SINGLE, 2, 4194304, {0: 1.0, 1: 1.0}, [[0, 1]], 2)
    r.status, r.message = (
        records.TIMEOUT,
        'Time limit (secs_per_sample * msg_sizes_list_len) is over; use "-time X" to increase it',
    )
    v.record(r)
    inv = records.build(
        benchmark="PingPing",
        family="mpi1",
        kind=Kind.SINGLE,
        np_=1,
        mode="",
        x=None,
        repetitions=0,
        groups=[],
        world_size=1,
        components=["t"],
        rank_times={},
        turnover=1,
    )
    inv.status = records.INVALID
    v.record(inv)
    v.finish({})
    text = out.getvalue()
    assert "      4194304 time-out.; Time limit" in text
    assert "\n# !! Benchmark PingPing invalid for 1 processes !! \n" in text
    assert text.endswith("\n\n# All processes entering MPI_Finalize\n\n")
    # a benchmark with only a time-out row was verified nowhere: never "Successful"
    assert "!!!!  ALL CHECKED BENCHMARKS SUCCESSFUL; 1 NOT CHECKED !!!! " in text
    assert "PingPong    : not checked" in text and ": Successful" not in text
