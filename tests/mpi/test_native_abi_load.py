"""The native libraries compiled and loaded: every struct's size in C equals its Python
mirror's at load, and a wrong mirror is refused by name, never run (the declarations
themselves: tests/unit/test_native_abi.py). They build the libraries as the engines do at
first use (mpicc of mpi4py's MPI, the per-user cache) and load them in this process (MPI
on one rank).
"""

import ctypes

import pytest

from commbench import native
from commbench.native import extension, mt, osu, p2p
from tests.mpi.test_native import needs_native
from tests.unit.test_native_abi import LIBRARIES

# ---------------------------------------------------------------- (b) sizes at load


@needs_native
@pytest.mark.parametrize("lib", sorted(LIBRARIES))
def test_the_compiled_sizes_agree_at_load(lib):
    source, lib_name, prefix, version, structs, flags = LIBRARIES[lib]
    dll, path, _ = extension.open_library(
        source, lib_name, prefix, version, structs, flags
    )  # checks them
    sizeof = getattr(dll, prefix + "sizeof")
    sizeof.restype, sizeof.argtypes = ctypes.c_longlong, [ctypes.c_char_p]
    sizes = {
        name: (sizeof(name.encode()), ctypes.sizeof(mirror)) for name, mirror in structs.items()
    }
    print(f"{lib}: {path.name}: " + ", ".join(f"{n} {c}/{p}" for n, (c, p) in sizes.items()))
    assert all(c == p > 0 for c, p in sizes.values()), sizes
    assert sizeof(b"no_such_struct") == -1


@needs_native
def test_the_engines_load_through_the_one_loader():
    assert native.load().kernels
    assert osu.OsuRunner("pt2pt").path.name == "libcommbench_osu_pt2pt.so"
    assert p2p.load().path.name == p2p.LIB_NAME
    assert mt.load().path.name == mt.LIB_NAME


# ---------------------------------------------------------------- (c) a wrong mirror is refused


def _missing_last(mirror: type) -> type:
    return type("Broken" + mirror.__name__, (ctypes.Structure,), {"_fields_": mirror._fields_[:-1]})


@needs_native
def test_a_wrong_mirror_is_refused_by_name():
    source, lib_name, prefix, version, structs, _ = LIBRARIES["osu_pt2pt"]
    path = extension.build_library(source, lib_name)
    broken = _missing_last(osu.OsuLoopArgs)
    c, py = ctypes.sizeof(osu.OsuLoopArgs), ctypes.sizeof(broken)
    assert c != py
    with pytest.raises(
        extension.NativeUnavailable,
        match=rf"struct cbosu_args is {c} bytes in C but {py} in its Python mirror "
        r".*BrokenOsuLoopArgs",
    ):
        extension.open_built(path, prefix, version, {**structs, "cbosu_args": broken})
    with pytest.raises(extension.NativeUnavailable, match="has no struct cbosu_nothing"):
        extension.open_built(path, prefix, version, {"cbosu_nothing": osu.OsuLoopArgs})


@needs_native
def test_the_engine_refuses_a_wrong_mirror(monkeypatch):
    """resolve's path: the note of a library that cannot be used, and the mpi4py engine."""
    from mpi4py import MPI

    broken = _missing_last(native.NativeArgs)
    monkeypatch.setattr(native, "STRUCTS", {"cb_args": broken})
    monkeypatch.setattr(native, "_resolved", {})
    engines, note = native.resolve("native", MPI.COMM_SELF)
    print(note)
    assert engines == ["mpi4py"] and native.library() is None
    assert note.startswith(
        "native engine unavailable (libcommbench_native.so: struct cb_args is "
        f"{ctypes.sizeof(native.NativeArgs)} bytes in C but {ctypes.sizeof(broken)} in its Python "
        "mirror"
    )
    assert note.endswith("; using the mpi4py engine")
    # the family engines alike (commbench.native.extension.resolve)
    monkeypatch.setattr(osu, "STRUCTS", {**osu.STRUCTS, "cbosu_rounds": _missing_last(osu.Rounds)})
    runner, note = osu.resolve(MPI.COMM_SELF, "coll")
    assert (
        runner is None
        and "struct cbosu_rounds is" in note
        and note.endswith("using the mpi4py loops")
    )
