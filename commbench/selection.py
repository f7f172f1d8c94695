"""Which family and which benchmarks a run's words select: --suite, a family named among
the benchmark names, the names of -input, -include and -exclude (case-insensitive, a
Multi- prefix allowed), else the family's default list. A name no family has, or that
several share, is a ConfigError saying what to write instead. Nothing here imports MPI.
"""

from __future__ import annotations

from commbench import imb_methodology, suites
from commbench.option_types import ConfigError, read_name_file


def select(
    values: dict, names: list[str], hint: str | None
) -> tuple[suites.Family, list[str], bool]:
    """The family and its run list; whether a Multi- prefix was used. values: the options
    (the family's operands go into it); hint: the family the launcher resolved, if any."""
    # A family name among the bare names (e.g. `commbench run IMB-EXT`) selects it.
    suite = values.get("suite") or hint
    bare = []
    for n in names:
        fam = suites.canonical_family(n)
        if fam is not None and suites.family(fam).get(n) is None:
            if suite is not None and suites.canonical_family(suite) != fam:
                raise ConfigError(f"family {n!r} contradicts --suite {suite!r}")
            suite = fam
        else:
            bare.append(n)
    input_names = read_name_file(values["input"]) if "input" in values else []
    explicit = bare + input_names
    fam = suites.family(_resolve_family(suite, explicit + values.get("include", [])))
    if fam.operands is not None:  # words besides names (osu: OMB's `D D`), into its params
        explicit, values["operands"] = fam.operands(explicit)
    explicit_c, multi_prefix = _canonical_names(fam, explicit, "")
    include_c, mp2 = _canonical_names(fam, values.get("include", []), "-include: ")
    exclude_c, _ = _canonical_names(fam, values.get("exclude", []), "-exclude: ")
    run_list = include_c + (
        explicit_c or fam.default_list(values.get("methodology", imb_methodology.DEFAULT))
    )
    excluded = {e.lower() for e in exclude_c}
    run_list = [b for b in run_list if b.lower() not in excluded]
    if not run_list:
        raise ConfigError(
            "no benchmark left to run after -exclude (accepted: -exclude names that leave at "
            "least one benchmark; see `commbench list`)"
        )
    return fam, run_list, multi_prefix or mp2


def _resolve_family(suite: str | None, names: list[str]) -> str:
    if suite is not None:
        fam = suites.canonical_family(suite)
        if fam is None:
            raise ConfigError(
                f"--suite {suite!r}: unknown family (accepted: {'|'.join(suites.family_names())} "
                "or IMB-MPI1, IMB-EXT, …)"
            )
        return fam
    found: set[str] = set()
    for n in names:
        base = _strip_multi(n)
        if suites.canonical_family(base):  # a family name given as a benchmark name
            continue
        fams = suites.claimants(base)
        if len(fams) == 1:
            found |= fams
    if len(found) > 1:
        raise ConfigError(
            f"benchmarks from several families ({', '.join(sorted(found))}) in one run; run them "
            "separately or choose one with --suite"
        )
    if not found:  # a name shared by families (Accumulate, Unidir_Put/Unidir_put) needs --suite
        for n in names:
            fams = [f.name for f, _ in suites.families_with(_strip_multi(n))]
            if len(fams) > 1:
                choices = " or ".join(f"--suite {f}" for f in fams)
                raise ConfigError(
                    f"benchmark {n!r} exists in several families ({', '.join(fams)}); choose one "
                    f"with {choices}"
                )
    return found.pop() if found else suites.DEFAULT_FAMILY


def _strip_multi(name: str) -> str:
    return name[6:] if name.lower().startswith("multi-") else name


def _canonical_names(fam: suites.Family, names: list[str], what: str) -> tuple[list[str], bool]:
    out, multi_prefix = [], False
    for n in names:
        base = _strip_multi(n)
        multi_prefix |= base != n
        b = fam.get(base)
        if b is None:
            others = [f.name for f, _ in suites.families_with(base)]
            if others:
                raise ConfigError(
                    f"{what}{n!r} belongs to family {'/'.join(others)}, not {fam.name} (choose "
                    f"with --suite {others[0]})"
                )
            choices = [x.name for x in fam.benchmarks]
            import difflib  # here: only a mistyped name needs it (start-up)

            near = difflib.get_close_matches(base, choices, n=3, cutoff=0.5)
            near = near or difflib.get_close_matches(
                base.lower(), [c.lower() for c in choices], n=3, cutoff=0.5
            )
            hint = (
                f"; did you mean {', '.join(near)}?"
                if near
                else f"; see `commbench list {fam.name}`"
            )
            if "://" in n or n.endswith((".db", ".sqlite")):  # `--store URL`: a space, not =
                hint = (
                    f"; a store? --store takes its value after '=' (--store={n}), since "
                    "--store alone keeps the run in the default store"
                )
            raise ConfigError(f"{what}invalid benchmark name {n!r} in family {fam.name}{hint}")
        out.append(b.name)
    return out, multi_prefix
