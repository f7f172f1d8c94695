"""The C/Python boundary of the native libraries, declared once in C (abi.h): every struct
Python fills is an X-macro of its C source whose rows give the ctypes mirror, the ABI
numbers are read from the same sources, and a library whose struct sizes differ from
their mirrors' is refused at load, by name, never run.

The checks on compiled libraries (they start mpicc) are tests/mpi/test_native_abi_load.py.
"""

import ctypes
import re
from pathlib import Path

import pytest

from commbench import native
from commbench.native import abi, mt, osu, p2p

HERE = Path(native.__file__).parent

# (source, X-macro, C struct, ctypes mirror): every struct Python fills.
STRUCTS = [
    (native.SOURCE, "CB_ARGS_FIELDS", "cb_args", native.NativeArgs),
    (osu.HEADER, "CBOSU_ARGS_FIELDS", "cbosu_args", osu.OsuLoopArgs),
    (osu.HEADER, "CBOSU_ROUNDS_FIELDS", "cbosu_rounds", osu.Rounds),
    (osu.HEADER, "CBOSU_COLL_CTL_FIELDS", "cbosu_coll_ctl", osu.CollCtl),
    (osu.HEADER, "CBOSU_OVERLAP_CTL_FIELDS", "cbosu_overlap_ctl", osu.OverlapCtl),
    (osu.HEADER, "CBOSU_RMA_CTL_FIELDS", "cbosu_rma_ctl", osu.RmaCtl),
    (p2p.SOURCE, "CBP2P_ARGS_FIELDS", "cbp2p_args", p2p.P2pLoopArgs),
    (mt.SOURCE, "CBMT_ARGS_FIELDS", "cbmt_args", mt.RunArgs),
]

# What a C type is on the Python side, written out here independently of abi.py.
SCALARS = {"int": ctypes.c_int, "long long": ctypes.c_longlong, "double": ctypes.c_double}

OSU_GROUPS = sorted(p.stem[len("osu_") :] for p in HERE.glob("osu_*.c"))

# Each library: (source, library name, prefix, ABI number, {struct: mirror}, flags).
LIBRARIES = {
    "kernels": (native.SOURCE, native.LIB_NAME, "cb_", native.ABI_VERSION, native.STRUCTS, ()),
    "p2p": (p2p.SOURCE, p2p.LIB_NAME, "cbp2p_", p2p.ABI_VERSION, p2p.STRUCTS, ()),
    "mt": (mt.SOURCE, mt.LIB_NAME, "cbmt_", mt.ABI_VERSION, mt.STRUCTS, ("-pthread",)),
    **{
        f"osu_{g}": (
            HERE / f"osu_{g}.c",
            f"libcommbench_osu_{g}.so",
            f"cbosu_{g}_",
            osu.ABI_VERSION,
            osu.STRUCTS,
            (),
        )
        for g in OSU_GROUPS
    },
}


def _c_fields(source: Path, name: str) -> list[tuple[str, str, int | None]]:
    """(C type, name, dimension) of the struct's rows, read here with a plain regex of
    the rows' shape (a cross-check of abi.read_fields)."""
    text = source.read_text().replace("\\\n", " ")
    body = re.search(rf"#define {name}\(X\)(.*)", text).group(1)
    body = re.sub(r"/\*.*?\*/", " ", body)
    rows = re.findall(r'\bX\(\s*([^,"]+?)\s*,\s*(\w+)(?:\[(\d+)\])?\s*,\s*"', body)
    return [
        (" ".join(t.replace("*", " * ").split()).replace("* *", "**"), n, int(d) if d else None)
        for t, n, d in rows
    ]


# ---------------------------------------------------------------- (a) one declaration


@pytest.mark.parametrize(
    ("source", "macro", "struct", "mirror"), STRUCTS, ids=[s[2] for s in STRUCTS]
)
def test_every_mirror_is_its_x_macro(source, macro, struct, mirror):
    rows = _c_fields(source, macro)
    assert rows, f"{source.name}: no rows in {macro}"
    assert [(f.ctype, f.name, f.dim) for f in abi.read_fields(source, macro)] == rows
    assert [n for n, _ in mirror._fields_] == [n for _, n, _ in rows]  # the names, in order
    for (name, got), (ctype, _, dim) in zip(mirror._fields_, rows, strict=True):
        want = ctypes.c_void_p if ctype.endswith("*") else SCALARS[ctype.replace("const ", "")]
        if dim:
            assert got._type_ is want and got._length_ == dim, (struct, name)
        else:
            assert got is want, (struct, name, ctype)
    # the C struct is the expansion of those rows, and its size is checked at load
    text = source.read_text()
    assert f"typedef struct {{ {macro}(CB_FIELD) }} {struct};" in text
    assert any(mirror is lib[4].get(struct) for lib in LIBRARIES.values())


def test_each_library_reports_the_structs_python_checks():
    for prefix, structs, source, macro in (
        ("cb_", native.STRUCTS, native.SOURCE, "CB_STRUCTS"),
        ("cbosu_", osu.STRUCTS, osu.HEADER, "CBOSU_STRUCTS"),
        ("cbp2p_", p2p.STRUCTS, p2p.SOURCE, "CBP2P_STRUCTS"),
        ("cbmt_", mt.STRUCTS, mt.SOURCE, "CBMT_STRUCTS"),
    ):
        assert abi.rows(source, macro, r"(\w+)\s*\)") == list(structs), prefix


def test_no_field_and_no_abi_number_is_typed_in_python():
    for path in HERE.glob("*.py"):
        text = path.read_text()
        assert "_fields_ = [" not in text, path.name
        assert not re.search(r"^ABI_VERSION\s*=\s*\d", text, re.M), path.name
    assert native.ABI_VERSION == abi.define(native.SOURCE, "CB_ABI_VERSION") >= 9
    assert osu.ABI_VERSION == abi.define(osu.HEADER, "CBOSU_ABI_VERSION")
    assert p2p.ABI_VERSION == abi.define(p2p.SOURCE, "CBP2P_ABI_VERSION")
    assert mt.ABI_VERSION == abi.define(mt.SOURCE, "CBMT_ABI_VERSION")


def test_field_reader_follows_the_preprocessor(tmp_path):
    f = tmp_path / "s.h"
    f.write_text(
        '/* X(int, not_a_field, "x") */\n'
        "#define VERSION 7\n"
        "#define S_FIELDS(X) \\\n"
        '    X(int, a, "one, (with) commas") /* X(int, commented, "x") */ \\\n'
        '    X(const void *, p, "a pointer") \\\n'
        '    X(void *const *, pp, "two " \\\n'
        '                         "strings") \\\n'
        '    X(double,out[3], "an array") \\\n'
        '    X(long long, n, "last")\n'
        '#define OTHER(X) X(int, b, "not S")\n'
    )
    got = abi.read_fields(f, "S_FIELDS")
    assert [(x.ctype, x.name, x.dim) for x in got] == [
        ("int", "a", None),
        ("const void *", "p", None),
        ("void * const *", "pp", None),
        ("double", "out", 3),
        ("long long", "n", None),
    ]
    assert got[0].doc == "one, (with) commas" and got[2].doc == "two strings"
    fields = dict(abi.fields(f, "S_FIELDS"))
    assert fields["p"] is ctypes.c_void_p and fields["pp"] is ctypes.c_void_p
    assert fields["out"]._type_ is ctypes.c_double and fields["out"]._length_ == 3
    assert abi.define(f, "VERSION") == 7
    assert abi.read_fields(tmp_path / "missing.h", "S_FIELDS") == []
    assert abi.define(tmp_path / "missing.h", "VERSION") is None
    with pytest.raises(RuntimeError, match="no NOPE_FIELDS"):
        abi.read_fields(f, "NOPE_FIELDS")
    f.write_text('#define T_FIELDS(X) X(float, x, "no mirror for float")\n')
    with pytest.raises(RuntimeError, match="float"):
        abi.fields(f, "T_FIELDS")


def test_the_c_code_tables_name_every_benchmark_and_value_python_passes():
    """mt.c's and p2p.c's enums are code tables Python reads (abi.codes), so a code cannot
    drift; each name Python passes has one, and each row of a table is used."""
    from commbench.suites import mt as mt_family
    from commbench.suites.p2p import PATTERNS

    assert set(p2p.PATTERN_CODES) == set(PATTERNS)
    assert sorted(set(p2p.PATTERN_CODES.values())) == list(range(7))
    assert set(mt.BENCH_CODES) == {b.name for b in mt_family.FAMILY.benchmarks}
    assert sorted(mt.BENCH_CODES.values()) == list(range(len(mt.BENCH_CODES)))
    assert set(mt.BARRIER_CODES) == {"on", "off", "special"}
    assert set(mt.ALLOC_CODES) == {"serial", "continuous", "parallel"}
    with pytest.raises(RuntimeError, match="no CBMT_NOTHING table"):
        abi.codes(mt.SOURCE, "CBMT_NOTHING")
