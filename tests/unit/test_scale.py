"""Records beyond --rank-detail ranks (docs/scale.md): a summary leaves out per-rank extras
and idle ranks. Runs at scale are tests/mpi/test_scale.py."""

from __future__ import annotations

from commbench import records


def test_summarise_leaves_out_per_rank_extras_and_idle_ranks():
    rec = records.build(
        benchmark="X",
        family="mpi1",
        kind="collective",
        np_=3,
        mode="",
        x=8,
        repetitions=10,
        groups=[[0, 1, 2]],
        world_size=5,
        components=["t"],
        rank_times={"t": [3e-6, None, 1e-6, -1.0, 2e-6]},
        turnover=1.0,
        extra={"rank_samples": [[1.0]] * 5, "engine": "native"},
    )
    s = records.summarise(rec, 3, ["a", "b", "c", "d", "e"])
    assert s.extra == {"engine": "native"}
    assert s.rank_summary["left_out"] == ["extra.rank_samples"]
    assert [(x["rank"], x["host"]) for x in s.rank_summary["slowest"]] == [
        (0, "a"),
        (4, "e"),
        (2, "c"),
    ]
    assert s.rank_summary["components"]["t"]["n"] == 3  # None and negative: not timed
    assert "rank_summary" in s.to_dict() and "rank_summary" not in rec.to_dict()
    assert records.Measurement.from_dict(s.to_dict()) == s
