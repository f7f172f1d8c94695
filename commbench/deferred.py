"""Deferred imports for a process that parses a run but never measures.

The self-launcher (`commbench run -n N …`) parses and checks every option,
which imports every family's descriptors, then starts mpiexec. Those modules
name numpy and mpi4py.MPI at the top for their kernels, which only the ranks
run; loading the two libraries would cost the launcher about 0.2 s (numpy's
import, and libmpi's dlopen for mpi4py's ABI probe) of a 0.7 s run.
`defer()` puts a stand-in in sys.modules that imports the real library on
its first attribute access, so a kernel module costs the launcher nothing
as long as nothing at its top level uses MPI or numpy (tests/mpi/test_startup.py
checks that for every family).
"""

from __future__ import annotations

import importlib
import sys
import types


class Deferred(types.ModuleType):
    """Stands for a module not yet imported; the first attribute access imports it."""

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):  # introspection must not load it
            raise AttributeError(attr)
        return getattr(_load(self.__name__), attr)


def _load(name: str) -> types.ModuleType:
    if isinstance(sys.modules.get(name), Deferred):
        del sys.modules[name]
    return importlib.import_module(name)


def defer(*names: str) -> None:
    """Import these modules only when first used, in this process."""
    for name in names:
        if name in sys.modules:
            continue
        stand_in = Deferred(name)
        sys.modules[name] = stand_in
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(importlib.import_module(parent), child, stand_in)


def loaded(name: str) -> bool:
    """Whether the real module is imported (not only deferred)."""
    mod = sys.modules.get(name)
    return mod is not None and not isinstance(mod, Deferred)
