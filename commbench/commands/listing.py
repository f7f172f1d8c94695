"""`commbench list [family|--options]`: every benchmark by family (descriptors only, no MPI)."""

from __future__ import annotations

from commbench.commands.errors import err as _err
from commbench.commands.run import mpi4py_rc


def option_table() -> list[str]:
    """Which general option applies to which family (docs/options.md; commbench list --options),
    generated from the declarations the refusals come from (commbench.suites.option_use)."""
    from commbench import run_options, suites
    from commbench.suites import option_use

    return option_use.table(run_options.OPTIONS, run_options.RUN_LEVEL, suites.families())


def main(argv: list[str]) -> int:
    mpi4py_rc(initialize=False)
    from commbench import suites

    names = suites.family_names()
    if argv == ["--options"]:  # which general option applies to which family (docs/options.md)
        print("\n".join(option_table()))
        return 0
    if argv:
        fam = suites.canonical_family(argv[0])
        if fam is None:
            return _err(f"unknown family {argv[0]!r} (accepted: {'|'.join(names)})")
        names = [fam]
    for n in names:
        fam = suites.family(n)
        print(f"{fam.name} ({fam.title}): {fam.description}")
        for b in fam.benchmarks:
            if b.default:
                flag = ""
            elif getattr(b, "default_in", ()):
                flag = " [default with --methodology imb2021]"
            else:
                flag = " [by name or -include]"
            print(f"  {b.name:<26} {b.description}{flag}")
        print()
    return 0
