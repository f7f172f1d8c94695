"""IMB-EXT and IMB-RMA in real MPI processes at 2, 3 and 4 ranks.

Every benchmark's tables (process counts, modes in order, columns, row count),
the records of the results file, and check mode on all of them; corrupted
data is caught; names shared by the two families need --suite.
"""

import json

import pytest

from commbench import policy, run_config, run_options
from tests.support.mpirun import commbench, mpiexec, run_json

ITER = ["-iter", "20,40,10", "-time", "10"]  # small counts; -time only bounds the budget

AGG, NON = "AGGREGATE", "NON-AGGREGATE"
SINGLE = ["#bytes", "#repetitions", "t[usec]", "Mbytes/sec", "defects"]
COLL = ["#bytes", "#repetitions", "t_min[usec]", "t_max[usec]", "t_avg[usec]", "defects"]
PASSIVE = ["#bytes", "#repetitions", "t_pure[usec]", "t_ovrl[usec]", "defects"]

# name -> (two-process, modes in order, columns, unit, fixed sizes): spec §9, §12, §14.3
EXT = {
    "Window": (False, [""], COLL[:-1], 4, None),  # no defects column for Window (§14.3)
    "Unidir_Get": (True, [AGG, NON], SINGLE, 4, None),
    "Unidir_Put": (True, [AGG, NON], SINGLE, 4, None),
    "Bidir_Get": (True, [AGG, NON], SINGLE, 4, None),
    "Bidir_Put": (True, [AGG, NON], SINGLE, 4, None),
    "Accumulate": (False, [AGG, NON], COLL, 4, None),
}
RMA = {
    "Get_local": (True, [NON, AGG], SINGLE, 1, None),
    "Get_all_local": (False, [""], SINGLE, 1, None),
    "Unidir_put": (True, [NON, AGG], SINGLE, 1, None),
    "Unidir_get": (True, [NON, AGG], SINGLE, 1, None),
    "Bidir_put": (True, [NON, AGG], SINGLE, 1, None),
    "Bidir_get": (True, [NON, AGG], SINGLE, 1, None),
    "One_put_all": (False, [""], SINGLE, 1, None),
    "One_get_all": (False, [""], SINGLE, 1, None),
    "All_put_all": (False, [""], COLL, 1, None),
    "All_get_all": (False, [""], COLL, 1, None),
    "Put_local": (True, [NON, AGG], SINGLE, 1, None),
    "Put_all_local": (False, [""], SINGLE, 1, None),
    "Exchange_put": (False, [""], COLL, 1, None),
    "Exchange_get": (False, [""], COLL, 1, None),
    "Accumulate": (True, [NON, AGG], SINGLE, 4, None),
    "Get_accumulate": (True, [NON, AGG], SINGLE, 4, None),
    "Fetch_and_op": (True, [NON, AGG], SINGLE, 4, [4]),
    "Compare_and_swap": (True, [NON, AGG], SINGLE, 4, [4]),
    "Truly_passive_put": (True, [""], PASSIVE, 1, None),
}
RMA_DEFAULT = [n for n in RMA if n not in ("Get_local", "Get_all_local")]
MULTIPLE = {"One_put_all", "One_get_all", "Put_all_local", "Get_all_local"}


def parse(stdout: str) -> list[dict]:
    """Every table of IMB text in order: name, #processes, mode, columns, rows."""
    out: list[dict] = []
    cur = None
    for line in stdout.splitlines():
        if line.startswith("# Benchmarking "):
            cur = {"name": line.split()[2], "np": None, "mode": "", "cols": None, "rows": []}
            out.append(cur)
        elif cur is None:
            continue
        elif line.startswith("# #processes = "):
            cur["np"] = int(line.split("=")[1].split(";")[0])
        elif line.startswith("#    MODE: "):
            assert line.endswith(" ") and line.count("MODE") == 1
            cur["mode"] = line.split()[2]
        elif line.strip().startswith("#bytes") and not line.startswith("#"):
            cur["cols"] = line.split()
            assert len(line) == 13 * len(cur["cols"])  # 13-character fields
        elif line.startswith(" ") and line.strip() and cur["cols"]:
            cur["rows"].append(line.split())
        elif line.startswith(("!", "# All processes")):
            cur = None
    return out


def expected_tables(spec: dict, names: list[str], world: int, msglog: int) -> list[tuple]:
    tabs = []
    for name in names:
        two, modes, cols, unit, fixed = spec[name]
        nps = [2] if two else policy.np_sequence(world, 2)
        sizes = fixed or policy.size_list(unit, 0, msglog)
        for np_ in nps:
            for mode in modes:
                tabs.append((name, np_, mode, cols, sizes))
    return tabs


def check_run(p, doc, spec, names, world, msglog):
    got = parse(p.stdout)
    want = expected_tables(spec, names, world, msglog)
    assert [(t["name"], t["np"], t["mode"]) for t in got] == [w[:3] for w in want]
    for t, (name, np_, mode, cols, sizes) in zip(got, want):
        assert t["cols"] == cols, (name, t["cols"])
        assert [int(r[0]) for r in t["rows"]] == sizes, (name, np_, mode, t["rows"])
        for r in t["rows"]:
            assert len(r) == len(cols)
            assert all(float(v) >= 0 for v in r)
            if "defects" in cols:
                assert float(r[-1]) == 0.0, (name, r)
    # EXT Window has no verifier (spec §14.3: no defects column): "not checked"
    unchecked = [n for n in names if n == "Window"]
    if unchecked:
        assert "!!!!  ALL CHECKED BENCHMARKS SUCCESSFUL; 1 NOT CHECKED !!!! " in p.stdout
    else:
        assert "!!!!  ALL BENCHMARKS SUCCESSFUL !!!! " in p.stdout
    for name in names:
        assert f"{name}    : {'not checked' if name in unchecked else 'Successful'}" in p.stdout

    # results file: one ok record per printed row, same numbers, targets left out
    assert doc["complete"] is True
    recs = doc["records"]
    assert all(r["status"] == "ok" for r in recs), [r for r in recs if r["status"] != "ok"][:2]
    assert len(recs) == sum(len(t["rows"]) for t in got)
    flat = [(t, row) for t in got for row in t["rows"]]
    for rec, (t, row) in zip(recs, flat):
        assert (rec["benchmark"], rec["np"], rec["mode"], rec["bytes"]) == (
            t["name"],
            t["np"],
            t["mode"],
            int(row[0]),
        )
        assert int(row[1]) == rec["repetitions"] > 0
        first = rec["components"][0]
        times = rec["rank_times"][first]
        assert len(times) == world
        timed = [v for v in times if v is not None and v >= 0]
        if rec["benchmark"] == "Truly_passive_put":
            assert rec["components"] == ["t_pure", "t_ovrl", "t_cpu"]
            assert rec["values"]["t_cpu"] > 0  # the target's computation, recorded, not printed
            assert (
                row[2] == f"{rec['values']['t_pure']:.2f}"
                and row[3] == f"{rec['values']['t_ovrl']:.2f}"
            )
            assert len(timed) == 1  # the origin only; the target reports no time
        elif t["cols"][2] == "t[usec]":
            assert row[2] == f"{rec['values']['t_max']:.2f}"
            assert rec["values"]["t_max"] == pytest.approx(max(timed) * 1e6)
            turnover = rec["np"] - 1 if rec["benchmark"] in MULTIPLE else 1
            assert rec["turnover"] == turnover
        else:
            assert row[3] == f"{rec['values']['t_max']:.2f}"
        if rec["family"] == "rma" and rec["benchmark"] in (
            "Unidir_put",
            "Unidir_get",
            "Accumulate",
            "Put_local",
        ):
            assert len(timed) == 1  # passive target: only rank 0 of the pair times
        if rec["benchmark"] in MULTIPLE:
            assert len(timed) == 1
        if rec["benchmark"] == "Window":
            assert rec["defects"] is None
        else:
            assert rec["defects"] is not None and rec["defects"] <= policy.TOL


@pytest.mark.parametrize("np_", [2, 3, 4])
def test_ext_every_benchmark(tmp_path, np_):
    p, doc = run_json(tmp_path, np_, "--suite", "ext", *ITER, "-msglog", "3", "-check")
    assert "#    commbench" in p.stdout and "MPI-2 part" in p.stdout
    assert doc["config"]["benchmarks"] == list(EXT)
    check_run(p, doc, EXT, list(EXT), np_, 3)


@pytest.mark.parametrize("np_", [2, 3, 4])
def test_rma_every_benchmark(tmp_path, np_):
    extra = ["-include", "Get_local", "Get_all_local"] if np_ != 3 else []
    p, doc = run_json(tmp_path, np_, "--suite", "rma", *ITER, "-msglog", "2", "-check", *extra)
    assert "MPI-RMA part" in p.stdout
    names = (["Get_local", "Get_all_local"] if extra else []) + RMA_DEFAULT
    assert doc["config"]["benchmarks"] == names
    head = p.stdout.split("# Benchmarking", 1)[0]
    assert (
        "# Compare_and_swap\n#     Comments on this Benchmark:\n#     Uses MPI_INT data type\n"
        in head
    )
    assert "#     1) The target is waiting in MPI_Barrier call (t_pure value)" in head
    check_run(p, doc, RMA, names, np_, 2)


def test_corrupted_data_is_caught(tmp_path):
    # world rank 0 sends corrupted data: what it puts, accumulates or swaps in is wrong,
    # what rank 0 gets from rank 1 is right.
    bad = [
        "Unidir_put",
        "Bidir_get",
        "One_put_all",
        "Exchange_get",
        "Get_accumulate",
        "Fetch_and_op",
        "Compare_and_swap",
        "Truly_passive_put",
    ]
    out = tmp_path / "bad.json"
    p = mpiexec(
        2,
        "run",
        "--suite",
        "rma",
        *ITER,
        "-msglog",
        "2",
        "-check",
        "-o",
        str(out),
        *bad,
        "Unidir_get",
        env={"COMMBENCH_FAULT_CORRUPT": "0"},
    )
    assert p.returncode != 0
    assert f"!!!!  {len(bad)}  BENCHMARKS FAILED     !!!! " in p.stdout
    for name in bad:
        assert f"{name}    : FAILED !! " in p.stdout
    assert "Unidir_get    : Successful" in p.stdout
    # rank 1 corrupted: EXT Accumulate sums it in, Unidir_Put (from rank 0) is right
    p = mpiexec(
        2,
        "run",
        "--suite",
        "ext",
        *ITER,
        "-msglog",
        "2",
        "-check",
        "-o",
        "-",
        "Accumulate",
        "Bidir_Put",
        "Unidir_Put",
        env={"COMMBENCH_FAULT_CORRUPT": "1"},
    )
    assert "Accumulate    : FAILED !! " in p.stdout and "Bidir_Put    : FAILED !! " in p.stdout
    assert "Unidir_Put    : Successful" in p.stdout
    doc = json.loads(out.read_text())
    assert any(r["defects"] == 1.0 for r in doc["records"] if r["benchmark"] == "Compare_and_swap")


def test_multi_and_off_cache(tmp_path):
    p, doc = run_json(
        tmp_path,
        4,
        "--suite",
        "rma",
        *ITER,
        "-msglog",
        "1",
        "-multi",
        "1",
        "-check",
        "Unidir_put",
        "Fetch_and_op",
        "Truly_passive_put",
    )
    assert "# Benchmarking Multi-Unidir_put " in p.stdout
    assert "# ( 2 groups of 2 processes each running simultaneous ) " in p.stdout
    assert "ALL BENCHMARKS SUCCESSFUL" in p.stdout
    assert all(len(r["group_values"]) == 2 for r in doc["records"])
    # off-cache slots (odd line size: byte displacements) and MPI_Alloc_mem buffers
    p, doc = run_json(
        tmp_path,
        2,
        "--suite",
        "ext",
        *ITER,
        "-msglog",
        "4:5",
        "-off_cache",
        "0.01,3",
        "--alloc",
        "mpi",
        "-check",
        "Accumulate",
        "Unidir_Get",
    )
    assert "ALL BENCHMARKS SUCCESSFUL" in p.stdout
    p, doc = run_json(
        tmp_path,
        2,
        "--suite",
        "rma",
        *ITER,
        "-msglog",
        "4:5",
        "-off_cache",
        "0.01,3",
        "--alloc",
        "mpi",
        "-check",
        "Get_accumulate",
        "Compare_and_swap",
        "Exchange_put",
    )
    assert "ALL BENCHMARKS SUCCESSFUL" in p.stdout


def test_shared_names_need_suite():
    with pytest.raises(run_config.ConfigError, match="--suite ext or --suite rma"):
        run_config.parse_run_args(["Accumulate"])
    with pytest.raises(run_config.ConfigError, match="several families"):
        run_config.parse_run_args(["-include", "UNIDIR_PUT"])
    assert run_config.parse_run_args(["--suite", "ext", "Unidir_Put"]).benchmarks == ("Unidir_Put",)
    cfg = run_config.parse_run_args(["--suite", "rma", "unidir_PUT"])
    assert (cfg.family, cfg.benchmarks) == ("rma", ("Unidir_put",))
    cfg = run_config.parse_run_args(["IMB-EXT", "accumulate"])
    assert (cfg.family, cfg.benchmarks) == ("ext", ("Accumulate",))
    # another name settles the family
    cfg = run_config.parse_run_args(["Fetch_and_op", "Accumulate"])
    assert (cfg.family, cfg.benchmarks) == ("rma", ("Fetch_and_op", "Accumulate"))
    assert run_config.parse_run_args(["Window", "Accumulate"]).family == "ext"
    assert run_config.parse_run_args(["--suite", "rma"]).benchmarks == tuple(RMA_DEFAULT)
    # as a user types it: refused before anything is launched
    p = commbench("run", "-n", "2", "Accumulate", timeout=120)
    assert p.returncode == 2
    assert (
        "benchmark 'Accumulate' exists in several families (ext, rma); choose one with --suite "
        "ext or --suite rma"
    ) in p.stderr


def test_alloc_default_is_alloc_mem_for_one_sided():
    # spec §6.1: EXT/RMA buffers SHOULD come from MPI_Alloc_mem; --alloc overrides; MPI-1 keeps
    # numpy
    assert run_config.parse_run_args(["--suite", "ext"]).alloc == "mpi"
    assert run_config.parse_run_args(["IMB-RMA"]).alloc == "mpi"
    assert run_config.parse_run_args(["Fetch_and_op"]).alloc == "mpi"  # family settled by the name
    assert run_config.parse_run_args(["--suite", "rma", "--alloc", "numpy"]).alloc == "numpy"
    assert run_config.parse_run_args(["--suite", "ext", "--alloc=mmap"]).alloc == "mmap"
    assert run_config.parse_run_args(["PingPong"]).alloc == "numpy"
    assert (
        "numpy (default; mpi for ext/rma, as the spec says) | mpi (MPI.Alloc_mem) | mmap"
        in run_options.usage()
    )
    p = commbench("run", "-h", timeout=60)
    assert p.returncode == 0 and "mpi for ext/rma, as the spec says" in p.stdout


def test_alloc_recorded(tmp_path):
    def kinds(doc):
        return doc["config"]["alloc"], doc["metadata"]["buffer_allocation"]["kind"]

    for suite, name in (("ext", "Unidir_Put"), ("rma", "Unidir_put")):
        p, doc = run_json(tmp_path, 2, "--suite", suite, *ITER, "-msglog", "2", "-check", name)
        assert "ALL BENCHMARKS SUCCESSFUL" in p.stdout
        assert kinds(doc) == ("mpi", "mpi"), suite
        p, doc = run_json(
            tmp_path, 2, "--suite", suite, *ITER, "-msglog", "2", "-check", "--alloc", "numpy", name
        )
        assert "ALL BENCHMARKS SUCCESSFUL" in p.stdout
        assert kinds(doc) == ("numpy", "numpy"), suite
    p, doc = run_json(tmp_path, 2, *ITER, "-msglog", "2", "PingPong")
    assert kinds(doc) == ("numpy", "numpy")


def test_iter_policy_off_repeats_msgspersample_in_every_mode(tmp_path):
    """-iter_policy off: n = MSGSPERSAMPLE for every X and mode (spec §5.2; IMB 2021.11 runs 200
    NON-AGGREGATE repetitions under -iter 200 -iter_policy off), not the MSGS_NONAGGR cap."""
    _, doc = run_json(
        tmp_path,
        2,
        "--suite",
        "rma",
        "Unidir_put",
        "-msglog",
        "2:3",
        "-iter",
        "150",
        "-iter_policy",
        "off",
    )
    got = {(r["mode"], r["bytes"]): r["repetitions"] for r in doc["records"]}
    assert {m for m, _ in got} == {"AGGREGATE", "NON-AGGREGATE"}
    assert set(got.values()) == {150}, got


def test_fixed_repetitions_get_one_untimed_run_first(tmp_path):
    """-iter_policy off: one untimed run with the fixed n before the timed one, as IMB's
    IMB_init_buffers_iter does (spec §5.2). Without it, the first size whose epoch holds more
    outstanding puts than the process ever had paid MPICH's one-time growth (~0.3-0.7 ms): 4 B
    read 4-8x the later sizes here, IMB-RMA 2021.11 1x."""
    _, doc = run_json(
        tmp_path,
        2,
        "--suite",
        "rma",
        "Unidir_put",
        "Unidir_get",
        "-msglog",
        "2:5",
        "-iter",
        "200",
        "-iter_policy",
        "off",
        "-aggregate_mode",
        "aggregate",
    )
    for name in ("Unidir_put", "Unidir_get"):
        t = {r["bytes"]: r["values"]["t_max"] for r in doc["records"] if r["benchmark"] == name}
        later = sorted(t[x] for x in (8, 16, 32))[1]
        assert t[4] < 2.5 * later, (name, t)
